import path from "node:path";
import type { Command } from "../command.js";
import { loadCore } from "../core.js";
import { unwrap } from "../errors.js";
import { plural, receiptJson, receiptText, receiptWarnings } from "../format.js";

/** `kumiki import <file.kumiki>`: imports a whole program as one atomic bundle. */
export const importCommand: Command = {
  name: "import",
  summary: "import a .kumiki program as one atomic bundle (nothing written if any definition is refused)",
  usage: ["import <file.kumiki|->"],
  examples: [
    "kumiki init && kumiki import app.kumiki",
    "kumiki import app.kumiki --task import-1 --json | jq '.opIds | length'",
  ],
  options: {},
  positionals: { min: 1, max: 1, names: "file.kumiki" },
  async run(ctx) {
    const file = ctx.positionals[0] as string;
    const text = await ctx.readInput(file);
    const [core, store] = await Promise.all([loadCore(), ctx.openStore()]);
    const name = file === "-" ? "standard input" : path.basename(file);
    const receipt = unwrap(
      await core.importProgram(store, text, {
        ...(ctx.task === undefined ? {} : { task: ctx.task }),
        onProgress: (done, total) =>
          ctx.progress(`importing ${name}: ${done}/${plural(total, "definition")}`),
      }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(
        `imported ${plural(receipt.ops.filter((o) => o.op === "add").length, "definition")} from ${name}`,
        receipt,
      ),
      warnings: receiptWarnings(receipt),
    };
  },
};
