import type { Command } from "../command.js";
import { keptOrStore } from "../kept-or-store.js";
import { withCommands } from "../remedy.js";

/** `kumiki conflicts`: every conflict record: which ops, why, what was decided, how to retry. */
export const conflicts: Command = {
  name: "conflicts",
  summary: "list the recorded conflicts: which ops, why, what was decided, how to retry",
  usage: ["conflicts"],
  examples: ["kumiki conflicts", "kumiki conflicts --json | jq '.conflicts[] | {id, retry}'"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    // None, when the state's kept status counts none: the usual answer, without folding the ops.
    const none = ctx.keptStatus().then((s) => (s?.conflicts === 0 ? [] : undefined));
    const list = await keptOrStore(ctx, none, (store) => store.conflicts());
    const text =
      list.length === 0
        ? "no conflicts"
        : list
            .map((c) =>
              [
                `${c.id} (${c.kind})`,
                `  ops: ${c.ops.join(", ")}`,
                `  why: ${c.reason}`,
                `  decided: ${c.decision}`,
                `  retry: ${withCommands(c.retry, c.remedy)}`,
              ].join("\n"),
            )
            .join("\n\n");
    return { json: { conflicts: list }, text };
  },
};
