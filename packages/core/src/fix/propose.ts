/**
 * `proposeFixes` (kumiki fix): the auto-patches of the graph's errors as bundles, each judged on
 * the graph it would give before anything is written.
 */
import type { CheckOptions } from "../check/check.js";
import { codeInfo } from "../check/codes.js";
import type { Diagnostic } from "../check/diagnostic.js";
import type { CheckCache, KeptChecks } from "../integrity/check-cache.js";
import { checkStore } from "../integrity/store-check.js";
import type { BundleItem } from "../store/inputs.js";
import type { Store } from "../store/store.js";
import { normalizePatch } from "./normalize.js";

/** One repair `fix` can make (ai-edit.md §9.2.4): a diagnostic and the bundle that repairs it. */
export interface FixProposal {
  /** Stable while the diagnostic stands: `E0103@reducer.clearDone.body:3:20`. */
  readonly id: string;
  readonly diagnostic: Diagnostic;
  /** Items `store.apply` accepts. */
  readonly bundle: readonly BundleItem[];
  /** One line for a person: what the fix changes. */
  readonly summary: string;
}

/** Options of {@link proposeFixes} and `applyFixes`. */
export interface FixOptions {
  /** Only diagnostics with this code (`fix --auto-patch E0103`). */
  readonly code?: string;
  /** How the graph is checked (a capability manifest, a11y); narrowing is ignored. */
  readonly check?: CheckOptions;
  /**
   * The checks kept across processes (`kumiki check` keeps one, and every write): the first check
   * goes on from the one kept for the graph, or for a state it has moved past, instead of checking
   * every definition (`checkStore`'s `kept`).
   */
  readonly kept?: KeptChecks;
  /**
   * The results of earlier checks by the graph's state (`checkStore`'s `cache`): {@link proposeFixes}
   * answers from one of the graph as it is without checking at all. Not taken by `applyFixes`,
   * whose writes move the graph on at every fix.
   */
  readonly cache?: CheckCache;
}

function describeItem(item: BundleItem): string {
  switch (item.op) {
    case "edit":
      return `edit ${item.qname}: ${
        Array.isArray(item.patch)
          ? item.patch.map((a) => `'${a.find}' → '${a.replace}'`).join(", ")
          : Object.entries(item.patch)
              .map(([k, v]) => `${k}: ${v}`)
              .join(", ")
      }`;
    case "add":
      return `add ${item.layer !== undefined && item.name !== undefined ? `${item.layer}.${item.name}` : "a definition"}`;
    default:
      return `${item.op} ${item.qname}`;
  }
}

/** The id of the proposal for `d`. */
function proposalId(d: Diagnostic): string {
  return `${d.code}@${d.location}${d.span === undefined ? "" : `:${d.span.column}`}`;
}

/**
 * The repairs `fix` can make now: one proposal per error diagnostic of the store's graph that
 * carries an auto-patch (errors.md, "Auto-patch Coverage"), in diagnostic order. Diagnostics that
 * share one repair (E0301 at every emit of the effect) give one proposal, the first. Nothing is
 * applied; see `applyFixes`.
 */
export function proposeFixes(store: Store, options: FixOptions = {}): readonly FixProposal[] {
  const { types: _t, refs: _r, effects: _e, ...check } = options.check ?? {};
  const report = checkStore(store, check, options.cache, options.kept);
  const seen = new Set<string>();
  const out: FixProposal[] = [];
  for (const d of report.diagnostics) {
    if (d.severity !== "error" || (options.code !== undefined && d.code !== options.code)) continue;
    const patch = d["auto-patch"];
    if (patch === undefined) continue;
    const bundle = normalizePatch(patch);
    if (!bundle.ok) continue;
    const key = JSON.stringify(bundle.value);
    if (seen.has(key)) continue;
    seen.add(key);
    const what = d.suggestion === undefined ? "" : ` (did you mean ${d.suggestion.name}?)`;
    out.push({
      id: proposalId(d),
      diagnostic: d,
      bundle: bundle.value,
      summary: `${d.code} ${d.kind} at ${d.location}${what}: ${bundle.value.map(describeItem).join("; ")}`,
    });
  }
  return out;
}

/** True when `code` is a registered diagnostic code. */
export function isKnownCode(code: string): boolean {
  return codeInfo(code) !== undefined;
}
