import path from "node:path";
import { flag } from "../args.js";
import type { Command } from "../command.js";
import { loadCore } from "../core.js";
import { unwrap } from "../errors.js";
import { plural, receiptText, receiptWarnings } from "../format.js";

/** `kumiki import <file.kumiki>`: imports a whole program as one atomic bundle. */
export const importCommand: Command = {
  name: "import",
  summary:
    "import a .kumiki program as one atomic bundle, errors included (--strict refuses a program with errors)",
  usage: ["import <file.kumiki|-> [--strict]"],
  examples: [
    "kumiki init && kumiki import app.kumiki",
    "kumiki import app.kumiki --task import-1 --json | jq '.opIds | length'",
    "kumiki import draft.kumiki && kumiki check --json   # then repair: kumiki fix --apply",
    "kumiki import app.kumiki --strict   # refuse (exit 1) a program with errors",
  ],
  options: {
    strict: {
      type: "boolean",
      description: "refuse a program with errors, writing nothing (default: import it as written)",
    },
  },
  positionals: { min: 1, max: 1, names: "file.kumiki" },
  async run(ctx) {
    const file = ctx.positionals[0] as string;
    const text = await ctx.readInput(file);
    const [core, store] = await Promise.all([loadCore(), ctx.openStore()]);
    const name = file === "-" ? "standard input" : path.basename(file);
    const strict = flag(ctx.options, "strict");
    const receipt = unwrap(
      await core.importProgram(store, text, {
        ...(ctx.task === undefined ? {} : { task: ctx.task }),
        ...(strict ? { strict: true } : {}),
        onProgress: (done, total) =>
          ctx.progress(
            done < total
              ? `importing ${name}: ${done}/${plural(total, "definition")}`
              : `importing ${name}: ${plural(total, "definition")} read; checking and storing them`,
          ),
      }),
    );
    // The program's diagnostics as imported: what the repair loop starts from.
    const capabilities = await ctx.capabilities();
    const report = core.checkStore(store, capabilities === undefined ? {} : { capabilities });
    const imported = `imported ${plural(receipt.ops.filter((o) => o.op === "add").length, "definition")} from ${name}`;
    const summary =
      report.errors === 0
        ? `no errors${report.warnings === 0 ? "" : `, ${plural(report.warnings, "warning")}`}`
        : `the program has ${plural(report.errors, "error")}${report.warnings === 0 ? "" : ` and ${plural(report.warnings, "warning")}`}: kumiki check lists them, kumiki fix --apply repairs what it can`;
    return {
      json: { ...receipt, diagnostics: { errors: report.errors, warnings: report.warnings } },
      text: `${receiptText(imported, receipt)}\n${summary}`,
      warnings: receiptWarnings(receipt),
    };
  },
};
