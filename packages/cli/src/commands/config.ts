import type { Command } from "../command.js";
import { unwrap, usageError } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings } from "../format.js";

const POLICIES = ["strict", "heal", "warn"] as const;

/** `kumiki config conflict-policy [strict|heal|warn]`: shows or sets how dangling references are resolved (§9.4.2). */
export const configConflictPolicy: Command = {
  name: "config conflict-policy",
  summary: "show or set the conflict policy for dangling references: strict (default), heal, warn",
  usage: ["config conflict-policy", "config conflict-policy <strict|heal|warn>"],
  examples: ["kumiki config conflict-policy", "kumiki config conflict-policy heal"],
  options: {},
  positionals: { min: 0, max: 1, names: "strict|heal|warn" },
  async run(ctx) {
    const policy = ctx.positionals[0];
    if (policy !== undefined && !(POLICIES as readonly string[]).includes(policy)) {
      throw usageError(
        `kumiki ${ctx.verb}: unknown policy ${JSON.stringify(policy)}: one of ${POLICIES.join(", ")}`,
        {
          policy,
        },
      );
    }
    if (policy === undefined) {
      const store = await ctx.openReadStore();
      const current = store.conflictPolicy();
      return { json: { policy: current }, text: current };
    }
    const store = await ctx.openStore();
    const receipt = unwrap(
      await store.setConflictPolicy(policy, ctx.task === undefined ? {} : { task: ctx.task }),
    );
    return {
      json: { policy, ...(receiptJson(receipt) as object) },
      text: receiptText(`conflict policy set to ${policy}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};
