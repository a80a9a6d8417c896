/**
 * `checkStore` (kumiki check): the store's live graph checked with the current names,
 * incrementally across calls on one store.
 */
import { type CheckOptions, narrowingFilter } from "../check/check.js";
import type { Diagnostic } from "../check/diagnostic.js";
import type { DefId } from "../ops/ids.js";
import type { Store } from "../store/store.js";
import type { CheckCache, KeptChecks } from "./check-cache.js";
import { headsKey, type LiveCheck } from "./live.js";
import { checkerKey, keptCheckKey, sharedCheck, startCheck } from "./shared-checks.js";

/** What `checkStore` returns (`kumiki check --json`). */
export interface CheckReport {
  /** Every diagnostic, in a deterministic order. */
  readonly diagnostics: readonly Diagnostic[];
  readonly errors: number;
  readonly warnings: number;
  /** No error diagnostic (warnings never change it). */
  readonly ok: boolean;
}

/**
 * Per live check this store has synced: the definitions its own writes changed since ("all" after
 * ops from elsewhere), and the heads the check was left at. A check the write gate has moved since
 * (to a fork it tried) is compared in full, or taken back by its own undo.
 */
type Pending = Map<LiveCheck, { ids: Set<DefId> | "all"; at: string }>;

const stores = new WeakMap<Store, Pending>();

function pendingOf(store: Store): Pending {
  let pending = stores.get(store);
  if (pending === undefined) {
    const made: Pending = new Map();
    store.onChange((e) => {
      for (const p of made.values()) {
        if (p.ids === "all") continue;
        // A local write says what it touched; a remote arrival may re-fold anything.
        if (e.source !== "local") {
          p.ids = "all";
          continue;
        }
        for (const op of e.ops) {
          const def = (op as { def?: unknown }).def;
          if (typeof def !== "string") {
            p.ids = "all";
            break;
          }
          p.ids.add(def as DefId);
        }
      }
    });
    stores.set(store, made);
    pending = made;
  }
  return pending;
}

/** The options a checker is built with: a narrowing filters its result, it is not a checker of its own. */
function checkerOptions({ types: _t, refs: _r, effects: _e, ...rest }: CheckOptions): CheckOptions {
  return rest;
}

/**
 * The live check of `store` for `options`, brought to the store's current graph. The first one of
 * a graph goes on from the check `kept` holds for its state, when it holds one.
 */
export function liveCheckOf(store: Store, options: CheckOptions = {}, kept?: KeptChecks): LiveCheck {
  const graph = store.read().graph;
  const pending = pendingOf(store);
  const rest = checkerOptions(options);
  let check = sharedCheck(graph, rest);
  if (check === undefined) check = startCheck(graph, rest, kept, headsKey(graph));
  else {
    const p = pending.get(check);
    check.sync(graph, p === undefined || p.ids === "all" || p.at !== check.at ? undefined : p.ids);
  }
  pending.set(check, { ids: new Set(), at: check.at });
  return check;
}

/**
 * Keeps in `cache` the check of the store's graph as it is now, when one is at hand — the write
 * gate's, after a write — and checks nothing itself: what lets the next `checkStore` of this state
 * (another process's `kumiki check`) answer without checking. Returns whether it kept one.
 */
export function keepCheck(
  store: Store,
  options: CheckOptions,
  cache: CheckCache,
  kept?: KeptChecks,
): boolean {
  const graph = store.read().graph;
  const check = sharedCheck(graph, options);
  if (check === undefined || check.at !== headsKey(graph)) return false;
  cache.put(resultKey(cache.state, options), check.diagnostics());
  kept?.put(keptCheckKey(check.at, options), check.state());
  return true;
}

/**
 * Keeps in `kept` the store's live check for `options`, brought to the graph as it is now, when
 * this process has one — what a long-running process (the MCP server) does as it closes its store,
 * so that the next process goes on from it. Checks nothing in full; returns whether it kept one.
 */
export function keepLiveCheck(store: Store, options: CheckOptions, kept: KeptChecks): boolean {
  const rest = checkerOptions(options);
  if (sharedCheck(store.read().graph, rest) === undefined) return false;
  const check = liveCheckOf(store, rest);
  kept.put(keptCheckKey(check.at, rest), check.state());
  return true;
}

/** Where a check's full result is kept: the state, the checker, and the whole manifest. */
function resultKey(state: string, options: CheckOptions): string {
  // The whole manifest, not only its names: another process may have read another kumiki.caps.json.
  return JSON.stringify([state, checkerKey(options), options.capabilities ?? null]);
}

/** A report of `diagnostics`. */
export function reportOf(diagnostics: readonly Diagnostic[]): CheckReport {
  let errors = 0;
  let warnings = 0;
  for (const d of diagnostics) {
    if (d.severity === "error") errors++;
    else warnings++;
  }
  return { diagnostics, errors, warnings, ok: errors === 0 };
}

/**
 * Checks the store's live graph (`kumiki check`, ai-edit.md §9.2.3): every definition that shows
 * under its name, with the current names — locations read `tile.TodoRow.body:2`, a diagnostic's
 * `definition` is the DefId, and auto-patches are anchored in the text `view` shows. Incremental
 * across calls on the same store: the first call checks everything, later calls re-check what
 * changed since (and what that can affect). With `cache` (bound to the state of the ops the store
 * read: a read-only store opened from a workspace), a result kept there for that state and these
 * options is answered without checking, and a result computed is kept there.
 */
export function checkStore(
  store: Store,
  options: CheckOptions = {},
  cache?: CheckCache,
  kept?: KeptChecks,
): CheckReport {
  let all: readonly Diagnostic[];
  if (cache === undefined) all = liveCheckOf(store, options, kept).diagnostics();
  else {
    // Narrowing filters the result: the full result is what is kept, for every narrowing alike.
    const key = resultKey(cache.state, options);
    const hit = cache.get(key);
    if (hit !== undefined) all = hit;
    else {
      const check = liveCheckOf(store, options, kept);
      all = check.diagnostics();
      cache.put(key, all);
      // A check made in full, or gone on from a state of earlier heads, is kept for the next
      // write's gate too (one resumed at these heads already was).
      const at = keptCheckKey(check.at, checkerOptions(options));
      if (kept !== undefined && (!check.resumed || kept.get(at) === undefined)) kept.put(at, check.state());
    }
  }
  const keep = narrowingFilter(options);
  return reportOf(keep === undefined ? all : all.filter(keep));
}
