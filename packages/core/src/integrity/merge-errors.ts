/**
 * Errors a merge made. Every write a store answers passed the checker on the graph as its writer
 * saw it; two such writes made in different places can still leave, merged, a program with errors
 * neither made alone: one agent removes a slot while another adds a tile reading it, one changes
 * a type's field while another writes code using the old one. The merge keeps both (nothing the
 * user wrote is lost), and `check` shows the result, but a writer who does not check again learns
 * it late. This watches a store's graph for error diagnostics that appear when ops from elsewhere
 * arrive, in a definition the store wrote or in one that references such a definition, and tells
 * each once. A same-name add (E0007) is left to the loss watch, which tells it as `met`.
 */
import type { CheckOptions } from "../check/check.js";
import type { Diagnostic } from "../check/diagnostic.js";
import type { Store } from "../store/store.js";
import type { KeptChecks } from "./check-cache.js";
import { checkStore } from "./store-check.js";

/** Errors a merge left in or beside definitions this store wrote. */
export interface MergeErrorNotice {
  /**
   * The error diagnostics that appeared when ops from elsewhere arrived, each in a definition this
   * store wrote or in one that references such a definition (at most `MERGE_ERRORS_TOLD`).
   */
  readonly diagnostics: readonly Diagnostic[];
  /**
   * For each of `diagnostics`, the ops of this store's writes it concerns (the latest of each
   * definition it is in or references): a server of several sessions tells each its own.
   */
  readonly ops: readonly (readonly string[])[];
  /** How many such diagnostics appeared in all (more than `diagnostics` holds when over the bound). */
  readonly total: number;
}

/** At most this many diagnostics are carried by one notice; `total` says how many there were. */
export const MERGE_ERRORS_TOLD = 20;

/** E0007 (a name defined twice after a same-name merge) is told by the loss watch as `met`. */
const TOLD_ELSEWHERE = new Set(["E0007"]);

/** An error's identity across re-checks: its place in the text moves when lines above change. */
function keyOf(d: Diagnostic): string {
  return `${d.code}\u0000${d.definition ?? ""}\u0000${d.message}`;
}

function errorKeys(store: Store, options: CheckOptions, kept?: KeptChecks): Set<string> {
  const keys = new Set<string>();
  for (const d of checkStore(store, options, undefined, kept).diagnostics)
    if (d.severity === "error") keys.add(keyOf(d));
  return keys;
}

/**
 * Calls `listener` when ops from elsewhere (a sync, another process on the workspace) leave error
 * diagnostics that were not there before, in a definition this store wrote since the watch began or
 * in one referencing such a definition. The store learns of other writers' ops when it reads, writes
 * or is refreshed (`Store.refresh` on a timer to be told promptly). The graph is checked after each
 * change while the watch runs (incrementally: a write re-checks what it can affect). The first
 * check goes on from one `kept` holds (another process's, of this state or an earlier one) when
 * the store has none yet. Returns the function that stops the watch.
 */
export function onMergeErrors(
  store: Store,
  listener: (notice: MergeErrorNotice) => void,
  options: CheckOptions = {},
  kept?: KeptChecks,
): () => void {
  /** The definitions this store wrote since the watch began, with the op that last wrote each. */
  const wrote = new Map<string, string>();
  let known = errorKeys(store, options, kept);
  // A check reads the store, which may take in ops and tell this listener again: one at a time.
  let busy = false;
  const stop = store.onChange((e) => {
    if (e.source === "local")
      for (const op of e.ops) {
        const def = (op as { def?: unknown }).def;
        if (typeof def === "string") wrote.set(def, op["op-id"]);
      }
    if (busy) return;
    busy = true;
    try {
      const report = checkStore(store, options);
      const now = new Set<string>();
      const fresh: Diagnostic[] = [];
      const ops: string[][] = [];
      for (const d of report.diagnostics) {
        if (d.severity !== "error") continue;
        const key = keyOf(d);
        now.add(key);
        if (e.source !== "remote" || known.has(key) || TOLD_ELSEWHERE.has(d.code)) continue;
        const ours = concerns(store, d, wrote);
        if (ours.length === 0) continue;
        fresh.push(d);
        ops.push(ours);
      }
      known = now;
      if (fresh.length > 0)
        listener({
          diagnostics: fresh.slice(0, MERGE_ERRORS_TOLD),
          ops: ops.slice(0, MERGE_ERRORS_TOLD),
          total: fresh.length,
        });
    } finally {
      busy = false;
    }
  });
  return stop;
}

/** The ops of `wrote` whose definition `d` is in, or is referenced by the definition `d` is in. */
function concerns(store: Store, d: Diagnostic, wrote: ReadonlyMap<string, string>): string[] {
  if (d.definition === undefined) return [];
  const own = wrote.get(d.definition);
  if (own !== undefined) return [own];
  const viewed = store.view(d.definition);
  if (!viewed.ok) return [];
  const ops = new Set<string>();
  for (const v of viewed.value.definitions)
    for (const id of Object.values(v.refs)) {
      const op = wrote.get(id);
      if (op !== undefined) ops.add(op);
    }
  return [...ops];
}
