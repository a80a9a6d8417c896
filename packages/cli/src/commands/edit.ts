import { textArgument } from "../body.js";
import type { Command } from "../command.js";
import { unwrap } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings } from "../format.js";
import { parseEditPatch } from "../patch-input.js";
import { checkQname } from "../shape.js";

/** `kumiki edit <layer.name> <patch>`: edits part of a definition, every anchor exactly once (§9.2.2). */
export const edit: Command = {
  name: "edit",
  summary: "edit part of a definition: each anchor's text must occur exactly once",
  usage: ["edit <layer.name> <patch-json>", "edit <layer.name> --patch-file <PATH|->"],
  examples: [
    `kumiki edit reducer.addTodo '[{"find": "done: false", "replace": "done: true"}]'`,
    `kumiki edit tile.TodoRow '{"find": "usres", "replace": "users"}'`,
    `kumiki edit tile.TodoRow '{"body:2": "replace '"'"'usres'"'"' -> '"'"'users'"'"'"}'   # the §9.6 form`,
    "kumiki edit reducer.addTodo --patch-file fix.json",
  ],
  options: {
    "patch-file": {
      type: "string",
      value: "PATH",
      description: "read the patch JSON from PATH ('-' = stdin) (not with a positional patch)",
    },
  },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY, names: "layer.name patch" },
  async run(ctx) {
    const [qname, ...words] = ctx.positionals as [string, ...string[]];
    await checkQname(ctx.verb, qname);
    const { text, from } = await textArgument(ctx, words, "patch-file", "patch");
    const patch = parseEditPatch(ctx.verb, text, from === "file" ? "the patch file" : "the patch");
    const store = await ctx.openStore();
    // `body:N` lines go to the store as they are: core's one interpreter anchors them.
    const receipt = unwrap(
      await store.edit({
        qname,
        patch: patch.kind === "anchors" ? [...patch.anchors] : { ...patch.patch },
        ...(ctx.task === undefined ? {} : { task: ctx.task }),
      }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(`edited ${qname}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};
