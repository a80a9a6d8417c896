/** kumiki_check and kumiki_fix: core's `checkStore`, `proposeFixes` and `applyFixes`, as JSON. */
import {
  applyFixes,
  checkStore,
  codeInfo,
  type Diagnostic,
  type FixProgress,
  type FixProposal,
  proposeFixes,
} from "@kumiki-graph/core";
import { z } from "zod";
import { answer, defineTool, fail, fromCore, type Outcome, type ToolContext } from "../tool.js";
import { READ_ONLY } from "./read.js";
import { IdempotencyKey, Task } from "./write.js";

/** A diagnostic as sent (ai-edit.md §9.6), without its span: `location` says where. */
const DiagnosticOutput = z.object({
  code: z.string(),
  kind: z.string(),
  severity: z.string().describe("error or warning"),
  location: z.string().describe("tile.TodoRow.body:2 (line 2 of the definition's text), or program"),
  message: z.string(),
  suggestion: z.object({ kind: z.string(), name: z.string(), similarity: z.number() }).optional(),
  "auto-patch": z.unknown().optional(),
  "shares-patch-of": z
    .string()
    .optional()
    .describe("the location of the diagnostic whose auto-patch repairs this one too: apply that one"),
  definition: z.string().optional().describe("the definition's identity (def_…)"),
});

/** A diagnostic as the tools send it. */
export function diagnosticOf(d: Diagnostic): z.output<typeof DiagnosticOutput> {
  return {
    code: d.code,
    kind: d.kind,
    severity: d.severity,
    location: d.location,
    message: d.message,
    ...(d.suggestion === undefined ? {} : { suggestion: { ...d.suggestion } }),
    ...(d["auto-patch"] === undefined ? {} : { "auto-patch": d["auto-patch"] }),
    ...(d["shares-patch-of"] === undefined ? {} : { "shares-patch-of": d["shares-patch-of"] }),
    ...(d.definition === undefined ? {} : { definition: d.definition }),
  };
}

/** The scopes of kumiki_check: the narrowings of `kumiki check` (types, refs, effects) and a11y. */
export const CHECK_SCOPES = ["types", "refs", "effects", "a11y"] as const;

export const check = defineTool({
  name: "kumiki_check",
  title: "Check",
  description:
    "The graph's diagnostics (code, kind, severity, location, message, suggestion, auto-patch); scope narrows to types, refs or effects, or adds a11y. Errors found are an answer (ok false).",
  input: z.strictObject({
    scope: z.enum(CHECK_SCOPES).optional().describe("a11y adds E0701–E0703"),
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

/** Refuses a code errors.md does not list, naming the argument. */
function unknownCode(code: string): Outcome<never> | undefined {
  if (codeInfo(code) !== undefined) return undefined;
  return fail({
    kind: "invalid-request",
    code: "invalid-input",
    argument: "error_code",
    message: `unknown diagnostic code ${JSON.stringify(code)}: a code of errors.md, e.g. E0103 (kumiki_check lists the codes present)`,
  });
}

const ErrorCodeArg = z.string().max(16).describe("a diagnostic code, e.g. E0103");

/** What kumiki_fix_apply (and kumiki_fix with apply) answers. */
const FixApplyOutput = z.object({
  applied: z
    .array(z.object({ id: z.string(), summary: z.string(), opIds: z.array(z.string()) }))
    .describe("the fixes written, with their op-ids"),
  refused: z
    .array(
      z.object({
        id: z.string(),
        summary: z.string(),
        error: z.object({ code: z.string(), message: z.string() }),
      }),
    )
    .describe("the fixes refused (nothing of theirs written)"),
  remaining: z
    .object({ errors: z.number(), warnings: z.number() })
    .describe("what the graph still has (kumiki_check lists it)"),
  cancelled: z
    .boolean()
    .optional()
    .describe("true: the call was cancelled between two fixes; applied is what it wrote until then"),
  replayed: z
    .boolean()
    .optional()
    .describe("true: the answer of the first call with this idempotency_key, nothing run again"),
});

/**
 * `applyFixes` for one error code (or one proposal), as kumiki_fix_apply answers it: stopped
 * between two fixes when the call is cancelled, telling progress when the client asked for it.
 */
async function applyFixesFor(
  { error_code, proposal_id, task }: { error_code: string; proposal_id?: string; task?: string },
  ctx: ToolContext,
): Promise<Outcome<z.output<typeof FixApplyOutput>>> {
  const bad = unknownCode(error_code);
  if (bad !== undefined) return bad;
  const r = await applyFixes(ctx.store, {
    code: error_code,
    ...checkOf(ctx),
    ...(task === undefined ? {} : { task }),
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    ...(ctx.write.author === undefined ? {} : { author: ctx.write.author }),
    ...(ctx.progress === undefined
      ? {}
      : {
          progress: (p: FixProgress) =>
            ctx.progress!(p.done, p.total, `${p.applied} applied; ${p.last.id} ${p.last.outcome}`),
        }),
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
        message: `no proposal ${JSON.stringify(proposal_id)} for ${error_code} now; the proposals are ${ids.length === 0 ? "none" : ids.join(", ")} (kumiki_fix lists them)`,
      });
    }
  }
  return fromCore(r, ctx, (report) => ({
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
    ...(report.cancelled === true ? { cancelled: true } : {}),
  }));
}

/**
 * kumiki_fix of §9.7: `{error_code, apply?}`. Without `apply` it proposes and writes nothing;
 * `apply: true` applies, as kumiki_fix_apply does (so the tool is not declared read-only).
 */
export const fix = defineTool({
  name: "kumiki_fix",
  title: "Fix",
  description:
    "The auto-patches for the errors with a code (E0103, …), each a bundle of writes with the diagnostic it removes; apply: true writes them.",
  input: z.strictObject({
    error_code: ErrorCodeArg,
    apply: z.boolean().optional(),
    idempotency_key: IdempotencyKey,
  }),
  output: FixApplyOutput.partial().extend({
    proposals: z.array(ProposalOutput).optional().describe("without apply: the fixes there are now"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  idempotency: "answer",
  async run({ error_code, apply }, ctx) {
    // The task of the fixes' ops is kumiki_fix_apply's argument (tools/list stays small).
    if (apply === true) return applyFixesFor({ error_code }, ctx);
    return (
      unknownCode(error_code) ??
      answer({ proposals: proposeFixes(ctx.store, { code: error_code, ...checkOf(ctx) }).map(proposalOf) })
    );
  },
});

export const fixApply = defineTool({
  name: "kumiki_fix_apply",
  title: "Apply fixes",
  description:
    "Applies the auto-patches for the errors with a code (or one proposal_id), each refused unless it removes an error and adds none: the op-ids written, the fixes refused, what remains.",
  input: z.strictObject({
    error_code: ErrorCodeArg,
    proposal_id: z.string().max(1024).optional().describe("only this one of kumiki_fix's proposals"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: FixApplyOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  idempotency: "answer",
  run: ({ error_code, proposal_id, task }, ctx) =>
    applyFixesFor(
      {
        error_code,
        ...(proposal_id === undefined ? {} : { proposal_id }),
        ...(task === undefined ? {} : { task }),
      },
      ctx,
    ),
});

/** The check options of fix: the workspace's manifest, when it has one. */
function checkOf(ctx: ToolContext) {
  return ctx.capabilities === undefined ? {} : { check: { capabilities: ctx.capabilities } };
}
