/**
 * `kumiki remove <layer.name> [--cascade | --force]`: removes a definition, refused while
 * referenced (§9.4.1).
 */
import { flag } from "../args.js";
import type { Command } from "../command.js";
import { inCliWords, unwrap } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings } from "../format.js";
import { checkQname, oneOf } from "../shape.js";

/** ai-edit.md §9.4.1's words for a refused remove, in place of core's neutral remedy. */
const CLI_REMEDY = "Use --cascade to remove all dependents, or --force to leave dangling";

/** `kumiki remove <layer.name>`: removes; refused while referenced, unless --cascade or --force (§9.4.1). */
export const remove: Command = {
  name: "remove",
  summary:
    "remove a definition (refused while referenced: --cascade takes the referrers too, --force leaves them dangling)",
  usage: ["remove <layer.name> [--cascade | --force]"],
  examples: [
    "kumiki remove slot.draft",
    "kumiki remove slot.draft --cascade   # and every definition that references it, in one bundle",
    "kumiki remove slot.draft --force     # leave the references dangling (warned)",
  ],
  options: {
    cascade: {
      type: "boolean",
      description: "also remove every definition that references it, transitively, atomically",
    },
    force: {
      type: "boolean",
      description: "remove it and leave the references to it dangling (with warnings)",
    },
  },
  positionals: { min: 1, max: 1, names: "layer.name" },
  async run(ctx) {
    const qname = ctx.positionals[0] as string;
    const mode = oneOf(ctx.verb, ctx.options, ["cascade", "force"]);
    await checkQname(ctx.verb, qname);
    const store = await ctx.openStore();
    const r = await store.remove({
      qname,
      ...(mode === "cascade" ? { cascade: flag(ctx.options, "cascade") } : {}),
      ...(mode === "force" ? { force: flag(ctx.options, "force") } : {}),
      ...(ctx.task === undefined ? {} : { task: ctx.task }),
    });
    const receipt = unwrap(r.ok ? r : { ok: false, error: inCliWords(r.error, CLI_REMEDY) });
    return {
      json: receiptJson(receipt),
      text: receiptText(`removed ${qname}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};
