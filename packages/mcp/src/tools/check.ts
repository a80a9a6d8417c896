/** kumiki_check and kumiki_fix: core's `checkStore`, `proposeFixes` and `applyFixes`, as JSON. */
import {
  applyFixes,
  checkStore,
  codeInfo,
  type Diagnostic,
  type FixProposal,
  proposeFixes,
} from "@kumiki-graph/core";
import { z } from "zod";
import { answer, defineTool, fail, fromCore, type ToolContext } from "../tool.js";
import { READ_ONLY } from "./read.js";

/** A diagnostic as sent (ai-edit.md §9.6), without its span: `location` says where. */
const DiagnosticOutput = z.object({
  code: z.string(),
  kind: z.string(),
  severity: z.string().describe("error or warning"),
  location: z.string().describe("tile.TodoRow.body:2 (line 2 of the definition's text), or program"),
  message: z.string(),
  suggestion: z.object({ kind: z.string(), name: z.string(), similarity: z.number() }).optional(),
  "auto-patch": z.unknown().optional(),
  definition: z.string().optional().describe("the definition's identity (def_…)"),
});

function diagnosticOf(d: Diagnostic): z.output<typeof DiagnosticOutput> {
  return {
    code: d.code,
    kind: d.kind,
    severity: d.severity,
    location: d.location,
    message: d.message,
    ...(d.suggestion === undefined ? {} : { suggestion: { ...d.suggestion } }),
    ...(d["auto-patch"] === undefined ? {} : { "auto-patch": d["auto-patch"] }),
    ...(d.definition === undefined ? {} : { definition: d.definition }),
  };
}

/** The scopes of kumiki_check: the narrowings of `kumiki check` (types, refs, effects) and a11y. */
export const CHECK_SCOPES = ["types", "refs", "effects", "a11y"] as const;

export const check = defineTool({
  name: "kumiki_check",
  title: "Check the program",
  description:
    "Checks the store's graph and lists its diagnostics (code, kind, severity, location, message, suggestion, auto-patch). scope narrows to types, refs or effects, or adds the accessibility checks (a11y). Finding errors is an answer, not a failure: ok says whether there are any.",
  input: z.strictObject({
    scope: z
      .enum(CHECK_SCOPES)
      .optional()
      .describe("types, refs or effects narrow the report; a11y adds E0701–E0703"),
  }),
  output: z.object({
    ok: z.boolean().describe("no error diagnostic (warnings never change it)"),
    errors: z.number(),
    warnings: z.number(),
    diagnostics: z.array(DiagnosticOutput),
  }),
  annotations: READ_ONLY,
  run({ scope }, ctx) {
    const caps = ctx.capabilities === undefined ? {} : { capabilities: ctx.capabilities };
    const report = checkStore(ctx.store, scope === undefined ? caps : { [scope]: true, ...caps });
    return answer({
      ok: report.ok,
      errors: report.errors,
      warnings: report.warnings,
      diagnostics: report.diagnostics.map(diagnosticOf),
    });
  },
});

const ProposalOutput = z.object({
  id: z.string().describe("stable while the diagnostic stands, e.g. E0103@reducer.clearDone.body:3:20"),
  summary: z.string(),
  diagnostic: DiagnosticOutput,
  bundle: z.array(z.record(z.string(), z.unknown())).describe("the patch: a bundle of store writes"),
});

function proposalOf(p: FixProposal): z.output<typeof ProposalOutput> {
  return {
    id: p.id,
    summary: p.summary,
    diagnostic: diagnosticOf(p.diagnostic),
    bundle: p.bundle.map((item) => ({ ...item })),
  };
}

export const fix = defineTool({
  name: "kumiki_fix",
  title: "Fix diagnostics",
  description:
    "The auto-patches for the error diagnostics with a code (E0103, …): without apply, the proposals (each a bundle of writes, nothing changed); with apply, they are applied one by one, each refused unless it removes an error and adds none, and the answer lists the op-ids written, the fixes refused and what remains.",
  input: z.strictObject({
    error_code: z.string().describe("a diagnostic code, e.g. E0103"),
    apply: z.boolean().optional().describe("write the fixes (default: only propose them)"),
    proposal_id: z
      .string()
      .optional()
      .describe(
        "with apply: write only this proposal (an id the proposals list, e.g. E0103@reducer.inc.body:1:46)",
      ),
    task: z.string().optional().describe("the task id the fixes' ops are written under"),
  }),
  output: z.object({
    apply: z.boolean(),
    proposals: z.array(ProposalOutput).optional().describe("apply false: what would be applied"),
    applied: z
      .array(z.object({ id: z.string(), summary: z.string(), opIds: z.array(z.string()) }))
      .optional()
      .describe("apply true: the fixes written, with their op-ids"),
    refused: z
      .array(
        z.object({
          id: z.string(),
          summary: z.string(),
          error: z.object({ code: z.string(), message: z.string() }),
        }),
      )
      .optional()
      .describe("apply true: the fixes refused (nothing of theirs written)"),
    remaining: z
      .object({ errors: z.number(), warnings: z.number() })
      .optional()
      .describe("apply true: what the graph still has (kumiki_check lists it)"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ error_code, apply, proposal_id, task }, ctx) {
    if (codeInfo(error_code) === undefined) {
      return fail({
        kind: "invalid-request",
        code: "invalid-input",
        argument: "error_code",
        message: `unknown diagnostic code ${JSON.stringify(error_code)}: a code of errors.md, e.g. E0103 (kumiki_check lists the codes present)`,
      });
    }
    if (apply !== true)
      return answer({
        apply: false,
        proposals: proposeFixes(ctx.store, { code: error_code, ...checkOf(ctx) }).map(proposalOf),
      });
    const r = await applyFixes(ctx.store, {
      code: error_code,
      ...checkOf(ctx),
      ...(task === undefined ? {} : { task }),
      // One proposal by its id: every other one is declined, and nothing of it written.
      ...(proposal_id === undefined ? {} : { confirm: async (p) => p.id === proposal_id }),
    });
    // One proposal by its id: when no fix took it up, every proposal there is was declined, and
    // nothing was written.
    if (r.ok && proposal_id !== undefined) {
      const tried = [
        ...r.value.applied.map((a) => a.proposal.id),
        ...r.value.refused.map((x) => x.proposal.id),
      ];
      if (!tried.includes(proposal_id)) {
        const ids = r.value.declined.map((p) => p.id);
        return fail({
          kind: "not-found",
          code: "not-found",
          argument: "proposal_id",
          message: `no proposal ${JSON.stringify(proposal_id)} for ${error_code} now; the proposals are ${ids.length === 0 ? "none" : ids.join(", ")} (kumiki_fix without apply lists them)`,
        });
      }
    }
    return fromCore(r, ctx, (report) => ({
      apply: true,
      applied: report.applied.map((a) => ({
        id: a.proposal.id,
        summary: a.proposal.summary,
        opIds: [...a.opIds],
      })),
      refused: report.refused.map((x) => ({
        id: x.proposal.id,
        summary: x.proposal.summary,
        error: { code: x.error.code, message: x.error.message },
      })),
      remaining: report.after,
    }));
  },
});

/** The check options of fix: the workspace's manifest, when it has one. */
function checkOf(ctx: ToolContext) {
  return ctx.capabilities === undefined ? {} : { check: { capabilities: ctx.capabilities } };
}
