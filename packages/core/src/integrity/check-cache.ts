/**
 * Check results kept across processes: a workspace whose ops have not changed since the last
 * `kumiki check` (or since the process that checked it last) is not checked again.
 */
import type { Diagnostic } from "../check/diagnostic.js";
import type { LiveCheckState } from "./live.js";

/**
 * A place to keep a store's check results, bound to the exact state of the ops the store read:
 * `state` must differ whenever the ops differ (a workspace's Automerge heads do). `checkStore`
 * asks it before checking and stores what it finds; `get` answers only what `put` was given under
 * the same key, or undefined (a miss, a cache of another version of the checker, an unreadable
 * cache). A cache is never the truth: a miss costs a check, never a wrong answer.
 */
export interface CheckCache {
  /** What the cached results were computed from: equal states, equal ops. */
  readonly state: string;
  /** The diagnostics `put` stored under `key` for this {@link state}, or undefined (a miss). */
  get(key: string): readonly Diagnostic[] | undefined;
  /** Keeps `diagnostics` under `key` for this {@link state} (best effort: a cache may drop it). */
  put(key: string, diagnostics: readonly Diagnostic[]): void;
}

/**
 * Checks kept across processes as state a checker goes on from ({@link LiveCheckState}), by the
 * graph state and checker options they are of: what lets a write in a process of its own gate by
 * re-checking only what it touches, and a `kumiki check` after another process's write re-check
 * only what changed. `get` answers only what `put` was given under the same key by the same
 * checker code (an implementation keys by that too), or undefined; a state that does not fit the
 * graph is not taken (a full check is made), so a damaged store of them costs a check.
 */
export interface KeptChecks {
  /** The state kept under `key`, or undefined (a miss). */
  get(key: string): LiveCheckState | undefined;
  /** Keeps `state` under `key` (best effort). */
  put(key: string, state: LiveCheckState): void;
  /**
   * Every state kept, with its key (newest first, if the store knows): what a check of a graph
   * that has moved past them (after another process took in ops without checking) goes on from.
   * Without it, a state is taken only for the graph's exact heads.
   */
  entries?(): Iterable<readonly [key: string, state: LiveCheckState]>;
}
