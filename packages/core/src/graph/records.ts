/**
 * The records a fold keeps besides definitions: conflict records (a merge decision in which an op's
 * intent did not take effect), rollbacks, kept dangling edges, live locks, orphans and quarantined
 * ops. Types only: graph.ts makes them, conflicts.ts reads the conflict records off the fold.
 */
import type { DefId, OpId } from "../ops/ids.js";
import type { ConflictPolicy, DanglingEdge } from "../ops/merge.js";
import type { LockOp } from "../ops/op.js";
import type { RemedyStep } from "./remedy.js";

/** The kinds of conflict record; see docs/semantics.md. */
export type ConflictKind =
  | "name-taken"
  | "replace-lost"
  | "rename-lost"
  | "edit-rebase-failed"
  | "link-site-missing"
  | "remove-overridden"
  | "rolled-back"
  | "orphaned"
  | "locked"
  | "dangling"
  | "lock-contested"
  | "lock-concurrent";

/**
 * A merge decision in which some op's intent did not (fully) take effect: which ops, why, what was
 * decided, and how to retry. The list is a pure function of the op set, identical on every replica.
 */
export interface Conflict {
  /** Stable: `<kind>:<the op whose intent was lost>`. */
  readonly id: string;
  readonly kind: ConflictKind;
  /** The ops involved, the one whose intent was lost first. */
  readonly ops: readonly OpId[];
  /** The definitions involved, by identity. */
  readonly definitions: readonly DefId[];
  readonly reason: string;
  readonly decision: string;
  /** How to retry, in words that name no edge's commands (`remedy` has the steps as data). */
  readonly retry: string;
  /** The steps `retry` describes, for an edge to name in its own terms. */
  readonly remedy: readonly RemedyStep[];
  /** The conflict policy that decided it, for the records the policy decides. */
  readonly policy?: ConflictPolicy;
}

/** Why a held op is not part of the graph. */
export type Rollback =
  | {
      readonly cause: "dangling";
      readonly edge: DanglingEdge;
      readonly concurrent: boolean;
      /** The other ops rolled back for the same edge. */
      readonly with: readonly OpId[];
      readonly policy: ConflictPolicy;
    }
  | {
      readonly cause: "locked";
      /** The lock, by another agent, in force where the op was written. */
      readonly lock: LockOp;
      readonly pattern: string;
    };

/** A dangling edge the fold decided to keep. */
export interface Kept {
  readonly edge: DanglingEdge;
  readonly concurrent: boolean;
  readonly reason: "warn" | "forced";
  readonly policy: ConflictPolicy;
}

/** A live ownership lock (ai-edit.md §9.8.3): `agent` owns the definitions matching `pattern`. */
export interface LockEntry {
  readonly agent: string;
  readonly pattern: string;
  /** The lock op that holds it (the greatest op-id, when several do). */
  readonly opId: OpId;
  readonly ts: number;
}

/** A held op the fold could not apply: its target does not exist (or is of another layer). */
export interface Orphan {
  readonly reason: "missing-target" | "rolled-back-target" | "layer-mismatch";
}

/** An op the log holds that fails the wire schema: kept out of the fold, reported in status. */
export interface Quarantined {
  readonly opId: string;
  readonly code: string;
  readonly message: string;
}
