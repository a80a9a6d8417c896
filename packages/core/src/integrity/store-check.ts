/**
 * `checkStore` (kumiki check): the store's live graph checked with the current names,
 * incrementally across calls on one store.
 */
import { type CheckOptions, narrowingFilter } from "../check/check.js";
import type { Diagnostic } from "../check/diagnostic.js";
import type { DefId } from "../ops/ids.js";
import type { Store } from "../store/store.js";
import { type CheckCache, checkCacheKey } from "./check-cache.js";
import { LiveCheck } from "./live.js";

/** What `checkStore` returns (`kumiki check --json`). */
export interface CheckReport {
  /** Every diagnostic, in a deterministic order. */
  readonly diagnostics: readonly Diagnostic[];
  readonly errors: number;
  readonly warnings: number;
  /** No error diagnostic (warnings never change it). */
  readonly ok: boolean;
}

/** The options a checker is built with; narrowing is a filter over its result, not a checker of its own. */
function checkerKey(options: CheckOptions): string {
  const caps = options.capabilities;
  const names =
    caps === undefined
      ? []
      : (Array.isArray(caps)
          ? (caps as readonly string[])
          : (caps as { capabilities: readonly unknown[] }).capabilities
        )
          .map((c) => (typeof c === "string" ? c : String((c as { name?: unknown }).name)))
          .sort();
  return JSON.stringify([options.a11y === true, options.requireApp !== false, names]);
}

/** At most this many differently configured checkers are kept per store (oldest dropped first). */
const CHECKERS_PER_STORE = 4;

/** A store's live checks, and per check what the store's own writes changed since it last synced. */
interface StoreChecks {
  readonly byKey: Map<string, LiveCheck>;
  /** Definitions written locally since the check's last sync; "all" after ops from elsewhere. */
  readonly pending: Map<LiveCheck, Set<DefId> | "all">;
}

const stores = new WeakMap<Store, StoreChecks>();

function checksOf(store: Store): StoreChecks {
  let checks = stores.get(store);
  if (checks === undefined) {
    const made: StoreChecks = { byKey: new Map(), pending: new Map() };
    store.onChange((e) => {
      for (const [check, ids] of made.pending) {
        if (ids === "all") continue;
        // A local write says what it touched; a remote arrival may re-fold anything.
        if (e.source !== "local") {
          made.pending.set(check, "all");
          continue;
        }
        for (const op of e.ops) {
          const def = (op as { def?: unknown }).def;
          if (typeof def !== "string") {
            made.pending.set(check, "all");
            break;
          }
          ids.add(def as DefId);
        }
      }
    });
    stores.set(store, made);
    checks = made;
  }
  return checks;
}

/** The live check of `store` for `options`, brought to the store's current graph. */
export function liveCheckOf(store: Store, options: CheckOptions = {}): LiveCheck {
  const graph = store.read().graph;
  const checks = checksOf(store);
  const key = checkerKey(options);
  let check = checks.byKey.get(key);
  if (check === undefined) {
    const { types: _t, refs: _r, effects: _e, ...rest } = options;
    check = new LiveCheck(graph, rest);
    checks.byKey.set(key, check);
    if (checks.byKey.size > CHECKERS_PER_STORE) {
      const oldest = checks.byKey.keys().next().value!;
      checks.pending.delete(checks.byKey.get(oldest)!);
      checks.byKey.delete(oldest);
    }
  } else {
    const pending = checks.pending.get(check);
    check.sync(graph, pending === "all" ? undefined : pending);
  }
  checks.pending.set(check, new Set());
  return check;
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
export function checkStore(store: Store, options: CheckOptions = {}, cache?: CheckCache): CheckReport {
  let all: readonly Diagnostic[];
  if (cache === undefined) all = liveCheckOf(store, options).diagnostics();
  else {
    // Narrowing filters the result: the full result is what is kept, for every narrowing alike.
    // The whole manifest, not only its names: another process may have read another kumiki.caps.json.
    const key = checkCacheKey(
      cache.state,
      JSON.stringify([checkerKey(options), options.capabilities ?? null]),
    );
    const hit = cache.get(key);
    if (hit !== undefined) all = hit;
    else {
      all = liveCheckOf(store, options).diagnostics();
      cache.put(key, all);
    }
  }
  const keep = narrowingFilter(options);
  return reportOf(keep === undefined ? all : all.filter(keep));
}
