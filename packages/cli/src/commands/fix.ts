import type { FixProposal } from "@kumiki-graph/core";
import { flag, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { loadCore } from "../core.js";
import { unwrap, usageError } from "../errors.js";
import { plural } from "../format.js";
import { oneOf } from "../shape.js";

function proposalText(p: FixProposal): string {
  return `${p.id}\n  ${p.summary}`;
}

/** `kumiki fix`: proposes, applies, or asks about the auto-patches of the graph's errors (§9.2.4). */
export const fix: Command = {
  name: "fix",
  summary: "propose the auto-patches of the graph's errors; --apply them, or --interactive one by one",
  usage: [
    "fix [--auto-patch <code>]",
    "fix [--auto-patch <code>] --apply",
    "fix [--auto-patch <code>] --interactive",
  ],
  examples: [
    "kumiki fix                         # what can be repaired structurally",
    "kumiki fix --auto-patch E0103      # the proposals for one code",
    "kumiki fix --auto-patch E0103 --apply",
    "kumiki fix --interactive           # y/n for each, read from stdin",
  ],
  options: {
    "auto-patch": {
      type: "string",
      value: "CODE",
      description: "only the errors with this code (e.g. E0103)",
    },
    apply: {
      type: "boolean",
      description: "apply every proposal (each checked: refused if it adds an error)",
    },
    interactive: { type: "boolean", description: "ask y/n before each proposal (answers read from stdin)" },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const code = stringOption(ctx.options, "auto-patch");
    if (code !== undefined && !/^E[0-9]{4}$/.test(code)) {
      throw usageError(
        `kumiki fix: ${JSON.stringify(code)} is not an error code (E and four digits, e.g. E0103)`,
        { code },
      );
    }
    const mode = oneOf(ctx.verb, ctx.options, ["apply", "interactive"]);
    const core = await loadCore();
    const capabilities = await ctx.capabilities();
    const checkOptions = capabilities === undefined ? {} : { capabilities };
    // The check `kumiki check` or the last write kept is gone on from (asked for after the store
    // is opened: it is that store's).
    const keptOf = async () => {
      const kept = await ctx.keptChecks();
      return { check: checkOptions, ...(kept === undefined ? {} : { kept }) };
    };
    if (mode === undefined) {
      const store = await ctx.openReadStore();
      const [check, cache] = await Promise.all([keptOf(), ctx.checkCache()]);
      // And from the result `kumiki check` kept for the graph as it is, without checking at all.
      const options = { ...check, ...(cache === undefined ? {} : { cache }) };
      const proposals = core.proposeFixes(store, code === undefined ? options : { code, ...options });
      const errors = core.checkStore(store, checkOptions, cache, check.kept).errors;
      const text =
        proposals.length === 0
          ? `nothing to fix structurally${code === undefined ? "" : ` for ${code}`}; ${plural(errors, "error")}`
          : `${proposals.map(proposalText).join("\n")}\n${plural(proposals.length, "proposal")}: apply with kumiki fix${code === undefined ? "" : ` --auto-patch ${code}`} --apply`;
      // §9.2.5: fix exits 1 while the program has errors, a dry run too (`fix && build` stops).
      return { json: { proposals, errors }, text, exit: errors > 0 ? 1 : 0 };
    }
    const store = await ctx.openStore();
    const check = await keptOf();
    const confirm = flag(ctx.options, "interactive")
      ? async (p: FixProposal): Promise<boolean> => {
          ctx.io.stderr(`${proposalText(p)}\napply? [y/n] `);
          const answer = (await ctx.readLine())?.trim().toLowerCase();
          if (answer === undefined) ctx.io.stderr("\n");
          return answer === "y" || answer === "yes";
        }
      : undefined;
    const report = unwrap(
      await core.applyFixes(store, {
        ...(code === undefined ? {} : { code }),
        ...check,
        ...(confirm === undefined ? {} : { confirm }),
        ...(ctx.task === undefined ? {} : { task: ctx.task }),
      }),
    );
    const lines = [
      ...report.applied.map((a) => `applied ${a.proposal.id} (${a.opIds.join(", ")})`),
      ...report.declined.map((p) => `declined ${p.id}`),
      ...report.refused.map((r) => `refused ${r.proposal.id}: ${r.error.message}`),
    ];
    const errors = report.after.errors;
    lines.push(
      `${plural(report.applied.length, "fix", "fixes")} applied, ${report.declined.length} declined, ${report.refused.length} refused; ${plural(report.before.errors, "error")} before, ${plural(errors, "error")} remain`,
    );
    // What is left for a model: each remaining error with its definition's text and the names
    // it can use (core's repairContext), not the whole program.
    const json = {
      ...report,
      remaining: report.remaining.map((d) => {
        const context = d.severity === "error" ? core.repairContext(store, d) : undefined;
        return context === undefined ? d : { ...d, context };
      }),
    };
    // §9.2.5: exit 1 while errors remain (`kumiki fix --apply && kumiki build` must stop), or a
    // fix was refused.
    return { json, text: lines.join("\n"), exit: errors > 0 || report.refused.length > 0 ? 1 : 0 };
  },
};
