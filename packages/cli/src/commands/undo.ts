import { flag } from "../args.js";
import type { Command } from "../command.js";
import { CliError, usageError } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings } from "../format.js";
import { oneOf } from "../shape.js";

/** `kumiki undo --task <id>`: reverts every op of a task, as new ops (undo is undoable) (§9.8.3). */
export const undo: Command = {
  name: "undo",
  summary:
    "revert every op of a task (--task), as new ops; --yes when others changed those definitions since",
  usage: ["undo --task <id> [--dry-run | --yes]"],
  examples: [
    "kumiki undo --task t-42 --dry-run   # the diff the undo would make",
    "kumiki undo --task t-42",
    "kumiki undo --task t-42 --yes       # others edited those definitions since: confirm the diff",
  ],
  options: {
    yes: {
      type: "boolean",
      description: "confirm the undo when other authors changed those definitions since",
    },
    "dry-run": { type: "boolean", description: "print the diff the undo would make; write nothing" },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const task = ctx.task;
    if (task === undefined)
      throw usageError("kumiki undo: which task? give --task <id> (the task the ops were written with)");
    const mode = oneOf(ctx.verb, ctx.options, ["yes", "dry-run"]);
    const store = await ctx.openStore();
    if (mode === "dry-run") {
      const p = store.previewUndoTask(task);
      if (!p.ok) throw new CliError(p.error.code, p.error.message, 1, p.error.details);
      // Others changed those definitions since the task: the undo would discard that, and the
      // real run will ask for --yes; said here, so the dry run is not a different answer.
      const divergence = p.value.divergence;
      return {
        json: {
          task,
          diff: p.value.diff,
          fingerprint: p.value.fingerprint,
          ops: p.value.ops,
          needsYes: divergence !== undefined,
          ...(divergence === undefined ? {} : { divergence }),
        },
        text:
          divergence === undefined
            ? p.value.diff
            : `${p.value.diff.replace(/\n$/, "")}\n# --yes will be needed: the undo would discard changes made since task ${task} by ops outside it:\n${divergence.replace(/\n$/, "")}`,
      };
    }
    const r = await store.undoTask(task, { confirm: flag(ctx.options, "yes") });
    if (!r.ok) {
      const diff = typeof r.error.details?.diff === "string" ? r.error.details.diff : undefined;
      const message =
        (r.error.code as string) === "undo-diverged" && diff !== undefined
          ? `${r.error.message}\n${diff.replace(/\n$/, "")}\nrun again with --yes to undo anyway`
          : r.error.message;
      throw new CliError(r.error.code, message, 1, r.error.details);
    }
    return {
      json: { task, ...(receiptJson(r.value) as object) },
      text: receiptText(`undid task ${task}`, r.value),
      warnings: receiptWarnings(r.value),
    };
  },
};
