/**
 * `kumiki check`: the graph's diagnostics (§9.2.3), exit 1 when there is an error.
 */
import type { Diagnostic } from "@kumiki-graph/core";
import { flag } from "../args.js";
import type { Command } from "../command.js";
import { loadCore } from "../core.js";
import { paint, plural } from "../format.js";

/** One diagnostic as text: `error E0103 undef-ref at tile.TodoRow.body:2: …`, and its suggestion. */
export function diagnosticText(d: Diagnostic, color: boolean): string {
  const sev = paint(color, d.severity === "error" ? "red" : "yellow", d.severity);
  const hint =
    d.suggestion === undefined
      ? ""
      : `\n  did you mean ${d.suggestion.name}? (similarity ${d.suggestion.similarity})`;
  const fix = d["auto-patch"] === undefined ? "" : `\n  auto-patch: kumiki fix --auto-patch ${d.code}`;
  return `${sev} ${d.code} ${d.kind} at ${d.location}: ${d.message}${hint}${fix}`;
}

/** `kumiki check`: every diagnostic of the graph; exit 1 when there is an error (§9.2.3). */
export const check: Command = {
  name: "check",
  summary:
    "check types, references, effects (and a11y): exit 1 when there is an error; warnings never change it",
  usage: ["check [--types] [--refs] [--effects] [--a11y]"],
  examples: [
    "kumiki check",
    "kumiki check --refs",
    "kumiki check --json | jq '.diagnostics[] | select(.\"auto-patch\")'",
  ],
  options: {
    types: { type: "boolean", description: "type mistakes only (E02xx), plus what no flag selects" },
    refs: {
      type: "boolean",
      description: "reference mistakes only (E01xx, E05xx), plus what no flag selects",
    },
    effects: {
      type: "boolean",
      description: "capability and effect mistakes only (E03xx), plus what no flag selects",
    },
    a11y: { type: "boolean", description: "also report the accessibility checks (E0701–E0703)" },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const [core, store, capabilities, cache, kept] = await Promise.all([
      loadCore(),
      ctx.openReadStore(),
      ctx.capabilities(),
      ctx.checkCache(),
      ctx.keptChecks(),
    ]);
    const report = core.checkStore(
      store,
      {
        ...(capabilities === undefined ? {} : { capabilities }),
        ...(flag(ctx.options, "types") ? { types: true } : {}),
        ...(flag(ctx.options, "refs") ? { refs: true } : {}),
        ...(flag(ctx.options, "effects") ? { effects: true } : {}),
        ...(flag(ctx.options, "a11y") ? { a11y: true } : {}),
      },
      cache,
      kept,
    );
    const summary =
      report.errors === 0 && report.warnings === 0
        ? "ok: no diagnostics"
        : `${plural(report.errors, "error")}, ${plural(report.warnings, "warning")}`;
    const text = [...report.diagnostics.map((d) => diagnosticText(d, ctx.color)), summary].join("\n");
    return { json: report, text, exit: report.ok ? 0 : 1 };
  },
};
