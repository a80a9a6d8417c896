/**
 * `applyFixes` (kumiki fix --apply): each auto-patch written through the store, re-proposed after
 * every fix, refused when it would add an error or remove none.
 */
import type { Diagnostic } from "../check/diagnostic.js";
import { describeDiagnostics, errorDelta, errorKeys } from "../check/regression.js";
import { liveCheckOf } from "../integrity/store-check.js";
import type { OpId } from "../ops/ids.js";
import type { BundleItem } from "../store/inputs.js";
import { REPLACE_INSTRUCTION } from "../store/line-patch.js";
import { ok, quoted, type Rejection, reject, type StoreResult } from "../store/result.js";
import type { Store } from "../store/store.js";
import type { WriteOptions } from "../store/write-options.js";
import { type FixOptions, type FixProposal, isKnownCode, proposeFixes } from "./propose.js";
import { foreseeBundle } from "./simulate.js";

/** What `applyFixes` did. */
export interface FixReport {
  /** The error and warning counts before the first fix. */
  readonly before: { readonly errors: number; readonly warnings: number };
  /** Fixes written, in order, with the ops each wrote. */
  readonly applied: readonly { readonly proposal: FixProposal; readonly opIds: readonly OpId[] }[];
  /** Fixes `confirm` said no to. */
  readonly declined: readonly FixProposal[];
  /** Fixes refused: by the regression gate (`validation-failed`) or by the store (a lock, an anchor). */
  readonly refused: readonly { readonly proposal: FixProposal; readonly error: Rejection }[];
  /** Every diagnostic the graph still has afterwards (errors and warnings). */
  readonly remaining: readonly Diagnostic[];
  /** The error and warning counts of `remaining`. */
  readonly after: { readonly errors: number; readonly warnings: number };
  /** True when `signal` stopped it between two fixes: `applied` is what it wrote until then. */
  readonly cancelled?: true;
}

/** How far {@link applyFixes} is, after each proposal it tried. */
export interface FixProgress {
  /** Proposals tried so far (applied, declined or refused). */
  readonly done: number;
  /** `done` plus the proposals the graph offers now: the total as far as it is known. */
  readonly total: number;
  /** Fixes written so far. */
  readonly applied: number;
  /** The proposal just tried, and what became of it. */
  readonly last: { readonly id: string; readonly outcome: "applied" | "declined" | "refused" };
}

/** Options of {@link applyFixes}. */
export interface ApplyFixesOptions extends FixOptions {
  /** Asked before each fix (`fix --interactive`); false declines it. Without it every fix is applied. */
  readonly confirm?: (proposal: FixProposal) => Promise<boolean>;
  /** The task the fixes' ops are written under. */
  readonly task?: string;
  /**
   * Stops it between two fixes (the report says `cancelled`); a fix under way is finished once its
   * write was stored, and not written when the signal came first (`WriteOptions.signal`).
   */
  readonly signal?: AbortSignal;
  /** The author the fixes are written as (and locks judged for), when not the store's. */
  readonly author?: string;
  /** Told after each proposal tried. */
  readonly progress?: (p: FixProgress) => void;
}

/**
 * The regression gate of errors.md ("Auto-patch Coverage"): the graph the bundle would produce is
 * checked before anything is written, and the fix is refused when it adds an error the graph does
 * not have, or does not remove at least one. Undefined when the fix passes.
 */
function regression(store: Store, bundle: readonly BundleItem[], options: FixOptions): Rejection | undefined {
  const live = liveCheckOf(store, options.check ?? {});
  const foreseen = foreseeBundle(store.read(), bundle);
  if (!foreseen.ok) return foreseen.error;
  const changes = foreseen.value;
  const textBefore = (id: string): string | undefined => live.input(id)?.source;
  const textAfter = (id: string): string | undefined =>
    changes.has(id) ? changes.get(id)?.source : live.input(id)?.source;
  const before = errorKeys(live.diagnostics(), textBefore);
  const after = errorKeys(live.tryChanges(changes), textAfter);
  const { added, resolved } = errorDelta(before, after);
  if (added.length > 0) {
    return {
      code: "validation-failed",
      message: `the fix would add ${added.length === 1 ? "an error" : `${added.length} errors`}: ${describeDiagnostics(added)}; nothing was written`,
      details: { added, resolved },
    };
  }
  if (resolved.length === 0 || after.length >= before.length) {
    return {
      code: "validation-failed",
      message: "the fix would not leave the graph with fewer errors; nothing was written",
      details: { added, resolved },
    };
  }
  return undefined;
}

/** The author and signal of {@link ApplyFixesOptions}, as each fix's write takes them. */
function writeOptionsOf(options: ApplyFixesOptions): WriteOptions {
  return {
    ...(options.author === undefined ? {} : { author: options.author }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

function withTask(bundle: readonly BundleItem[], task: string | undefined): BundleItem[] {
  return task === undefined ? [...bundle] : bundle.map((item) => ({ ...item, task }));
}

/** The one edit item of a proposal that is a single edit, or undefined. */
type EditPatch = (BundleItem & { op: "edit" })["patch"];

/**
 * The patches of several fixes of one definition as one edit's anchors, one after another. A
 * `body:N` line becomes the anchor of its instruction alone (`A` → `B`): two fixes can name the
 * same line, which line keys cannot say twice. Still fail-closed: each `A` must then occur exactly
 * once in the whole text, or the store refuses the edit.
 */
function mergePatches(patches: readonly EditPatch[]): { find: string; replace: string }[] {
  return patches.flatMap((p) =>
    Array.isArray(p)
      ? p
      : Object.values(p).flatMap((instruction) => {
          const m = REPLACE_INSTRUCTION.exec(instruction);
          return m === null ? [] : [{ find: m[1]!, replace: m[2]! }];
        }),
  );
}

function singleEdit(p: FixProposal): (BundleItem & { op: "edit" }) | undefined {
  const [item, ...rest] = p.bundle;
  return rest.length === 0 && item?.op === "edit" ? item : undefined;
}

/** How many of `ds` are errors, and how many warnings. */
function counts(ds: readonly Diagnostic[]): { errors: number; warnings: number } {
  let errors = 0;
  for (const d of ds) if (d.severity === "error") errors++;
  return { errors, warnings: ds.length - errors };
}

/**
 * Applies fixes (`kumiki fix --apply`, or `--interactive` with `confirm`): repeatedly checks the
 * graph, takes the first proposal not yet tried, asks `confirm`, passes it through the regression
 * gate and writes it with `store.apply` (so locks and the store's own write gate hold), until no
 * proposal is left. Each fix is proposed against the graph the previous ones left, so lines and
 * anchors are always current. When the store refuses a name fix because the same definition has
 * another unresolved name (it binds every reference of a text it writes), the fixes of that
 * definition are tried together as one edit.
 *
 * Refused (`invalid-input`) when `code` is not a registered diagnostic code; every other failure is
 * reported per proposal, in {@link FixReport.refused}.
 */
export async function applyFixes(
  store: Store,
  options: ApplyFixesOptions = {},
): Promise<StoreResult<FixReport>> {
  if (options.code !== undefined && !isKnownCode(options.code))
    return reject("invalid-input", `unknown diagnostic code ${quoted(options.code)} (see docs/errors.md)`);
  const before = counts(liveCheckOf(store, options.check ?? {}, options.kept).diagnostics());
  // Proposed from the store's check, in step with each fix written (a cached result is of one state).
  const current = { ...options, cache: undefined };
  const applied: { proposal: FixProposal; opIds: readonly OpId[] }[] = [];
  const declined: FixProposal[] = [];
  const refused: { proposal: FixProposal; error: Rejection }[] = [];
  const tried = new Set<string>();
  const keyOf = (p: FixProposal): string => `${p.id}\u0000${JSON.stringify(p.bundle)}`;
  let cancelled = false;
  let last: FixProgress["last"] | undefined;
  // Every round either writes a fix (the graph has at least one error fewer) or retires a
  // proposal, so the loop ends; the bound is only a guard.
  for (let round = 0; round < 100_000; round++) {
    if (options.signal?.aborted === true) {
      cancelled = true;
      break;
    }
    const proposals = proposeFixes(store, current).filter((p) => !tried.has(keyOf(p)));
    if (last !== undefined) {
      const done = applied.length + declined.length + refused.length;
      options.progress?.({ done, total: done + proposals.length, applied: applied.length, last });
    }
    const proposal = proposals[0];
    if (proposal === undefined) break;
    tried.add(keyOf(proposal));
    if (options.confirm !== undefined && !(await options.confirm(proposal))) {
      declined.push(proposal);
      last = { id: proposal.id, outcome: "declined" };
      continue;
    }
    const blocked = regression(store, proposal.bundle, options);
    if (blocked !== undefined) {
      refused.push({ proposal, error: blocked });
      last = { id: proposal.id, outcome: "refused" };
      continue;
    }
    const r = await store.apply(withTask(proposal.bundle, options.task), writeOptionsOf(options));
    if (r.ok) {
      applied.push({ proposal, opIds: r.value.opIds });
      last = { id: proposal.id, outcome: "applied" };
      continue;
    }
    // Cancelled (the signal, passed to the write) before it was stored: nothing of it written; stop.
    if (r.error.code === "cancelled") {
      cancelled = true;
      break;
    }
    const edit = singleEdit(proposal);
    let siblings =
      r.error.code === "undefined-reference" && edit !== undefined
        ? proposals.slice(1).filter((p) => singleEdit(p)?.qname === edit.qname)
        : [];
    if (options.confirm !== undefined && siblings.length > 0) {
      // Interactive: what is written is only what was shown and answered yes, each sibling too.
      const yes: FixProposal[] = [];
      for (const p of siblings) {
        if (await options.confirm(p)) yes.push(p);
        else {
          tried.add(keyOf(p));
          declined.push(p);
        }
      }
      siblings = yes;
    }
    const together = [proposal, ...siblings];
    if (siblings.length > 0) {
      const patch = mergePatches(together.map((p) => singleEdit(p)!.patch));
      const bundle: BundleItem[] = [{ op: "edit", qname: edit!.qname, patch }];
      if (regression(store, bundle, options) === undefined) {
        const rr = await store.apply(withTask(bundle, options.task), writeOptionsOf(options));
        if (rr.ok) {
          for (const p of together) {
            tried.add(keyOf(p));
            applied.push({ proposal: p, opIds: rr.value.opIds });
          }
          last = { id: proposal.id, outcome: "applied" };
          continue;
        }
      }
    }
    refused.push({ proposal, error: r.error });
    last = { id: proposal.id, outcome: "refused" };
  }
  const remaining = liveCheckOf(store, options.check ?? {}).diagnostics();
  return ok({
    before,
    applied,
    declined,
    refused,
    remaining,
    after: counts(remaining),
    ...(cancelled ? { cancelled: true as const } : {}),
  });
}
