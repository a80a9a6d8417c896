import type { Command } from "../command.js";
import { unwrap } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings } from "../format.js";
import { checkName, checkQname } from "../shape.js";

/** `kumiki rename <layer.old> <new>`: renames; no hash and no dependent changes (§9.2.2, §9.5.2). */
export const rename: Command = {
  name: "rename",
  summary: "rename a definition (its hash and its dependents' ops do not change)",
  usage: ["rename <layer.name> <new-name>"],
  examples: [
    "kumiki rename slot.draft newTodoText",
    "kumiki rename def_01J… draft   # a definition hidden by a name conflict",
  ],
  options: {},
  positionals: { min: 2, max: 2, names: "layer.name new-name" },
  async run(ctx) {
    const [qname, newName] = ctx.positionals as [string, string];
    await checkQname(ctx.verb, qname);
    await checkName(ctx.verb, newName);
    const store = await ctx.openStore();
    const receipt = unwrap(
      await store.rename({ qname, newName, ...(ctx.task === undefined ? {} : { task: ctx.task }) }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(`renamed ${qname} to ${newName}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};
