/**
 * The OpLog seam: the only thing the op model and the store API know about persistence. An OpLog
 * holds a grow-only set of ops, each identified by its "op-id"; the memory implementation backs tests
 * and property-test replicas, the Automerge one backs a workspace on disk and a server's graphs. A
 * read-only open holds a {@link ReadableOpLog} (no `append`); the members only a log shared with
 * other writers has are {@link SharedLogExtras}.
 */

import type { FoldSnapshot } from "../graph/fold-snapshot.js";

/** What an OpLog stores: an opaque JSON object identified by its "op-id". */
export interface StoredOp {
  readonly "op-id": string;
}

/**
 * What is wrong with a log's stored form, when something is: damaged chunk files (held back, never
 * loaded), and changes its readable op log was written after that the stored document no longer
 * holds (a chunk deleted, or cut short at a chunk boundary). A log with damage reads what it can —
 * the sound chunks, plus the ops of op-log.jsonl they lack — and refuses writes until repaired.
 */
export interface StoreDamage {
  /** The damaged files: `snapshot/<name>` or `incremental/<name>`, what is wrong, where on disk. */
  readonly chunks: readonly { readonly name: string; readonly reason: string; readonly path?: string }[];
  /** Hashes of changes op-log.jsonl was written after that the document lacks. */
  readonly lostChanges: readonly string[];
  /** Ops read from op-log.jsonl because the document lacks them. */
  readonly fromOpLog: number;
}

/**
 * What a damaged store's refusal (`store-damaged`) ends with, also in its `details.remedy`: the
 * call that repairs it; an edge says it in its own terms (the CLI: `kumiki repair`).
 */
export const DAMAGE_REMEDY = "repairWorkspace repairs it";

/**
 * A log to read: a grow-only, deduplicated set of ops in arrival order, and what arrives from
 * elsewhere. What a read-only open holds (`SnapshotOpLog` over a workspace's verified
 * op-log.jsonl): it has no `append`, so a store over it refuses every write as `read-only`
 * instead of failing when it tries to store.
 */
export interface ReadableOpLog<T extends StoredOp = StoredOp> {
  /**
   * Every op held, in arrival order (duplicates never appear twice). The list only grows: an op once
   * held keeps its position, so a reader can remember how far it has read.
   */
  all(): readonly T[];
  /** Called with ops that arrive from elsewhere (another process, a sync peer), after they are held. Returns an unsubscribe function. */
  onRemote(listener: (ops: readonly T[]) => void): () => void;
  /** Stops taking ops from elsewhere and releases what the log holds, after the appends in flight. */
  close(): Promise<void>;
  /** Optional: what is wrong with the stored form, when something is (then appends are refused). */
  readonly damage?: StoreDamage | undefined;
  /**
   * Optional: how many ops at the start of {@link all} are known to pass the op wire schema as
   * they are (`isWireOp`), checked when they were stored, under this code's
   * `WIRE_SCHEMA_VERSION` (a workspace's op-log.jsonl records it): a fold takes them without
   * checking them again. Read after {@link all}. Absent or 0: every op is checked.
   */
  readonly wireChecked?: number;
  /**
   * Optional, for logs that decide contested op-ids (several ops stored under one id): bumped when
   * such a decision replaced the op held at some position of {@link all}. Until it changes, `all()`
   * only grows; when it changes, a reader reads `all()` afresh from the start.
   */
  readonly generation?: number;
  /**
   * Optional: entries of the stored log that are not held as ops (not JSON, not an op, or an op
   * that reuses a held op-id with other content), for `status` to report as quarantined.
   */
  readonly invalid?: readonly {
    readonly at: readonly number[];
    readonly reason: string;
    readonly opId?: string;
  }[];
  /**
   * Optional: a fold snapshot (`Graph.snapshot`) of the first `count` ops of {@link all}, for a
   * store to take its graph up from without reading or folding those ops (`Graph.fromSnapshot`);
   * it takes the ops after them ({@link since}) on top. Undefined when there is none, and a head
   * that does not fit is not taken: the store folds `all()`.
   */
  seed?(): { readonly snapshot: FoldSnapshot; readonly count: number } | undefined;
  /** Optional, beside {@link seed}: how many ops {@link all} holds, without reading them. */
  heldCount?(): number;
  /** Optional, beside {@link seed}: the ops of {@link all} from position `from` on, without reading those before. */
  since?(from: number): readonly T[];
}

/**
 * What a log that other writers share adds, each member on its own: other processes on one folder
 * (a workspace's log: {@link poll}, {@link exclusive}, {@link watch}) or other servers on one
 * database (a server's graph: {@link catchUpAll}, {@link fence}). A log written by one process
 * alone (memory) has none; a store calls each only where the log has it.
 */
export interface SharedLogExtras<T extends StoredOp = StoredOp> {
  /**
   * Takes in, synchronously and cheaply (one small read when nothing changed), what other
   * processes stored since the last look, and returns the ops that were new (also announced to
   * `onRemote`). A store calls it before every read.
   */
  poll?(): readonly T[];
  /**
   * Runs `fn` while no other process can append, so that a write judged against the graph after a
   * {@link poll} is stored before anyone else's. The same process may append inside `fn`.
   */
  exclusive?<R>(fn: () => Promise<R>): Promise<R>;
  /**
   * For a log whose {@link poll} cannot see every other writer (a server's graph that other servers
   * write through a shared database, told of their writes only by notices): takes in everything the
   * shared storage holds, however much it costs. A store calls it before it decides that the ops
   * recorded under an idempotency key never reached the log (and writes them again).
   */
  catchUpAll?(): Promise<void>;
  /**
   * For {@link catchUpAll}'s case: resolves once every change stored there before the call began
   * has reached the log, cheaply (a round trip behind the storage's own notices, not a reload). A
   * store awaits it before a read that must see others' acknowledged writes (`Store.fence`).
   */
  fence?(): Promise<void>;
  /**
   * Calls `changed` soon (well within a second) after another process stored something, with no
   * read needed, until the returned function is called. A store watches while it has change
   * listeners, and takes in what changed (see {@link poll}).
   */
  watch?(changed: () => void): () => void;
}

/** A log that takes writes: a {@link ReadableOpLog} that durably appends, with the extras of a shared one. */
export interface OpLog<T extends StoredOp = StoredOp> extends ReadableOpLog<T>, SharedLogExtras<T> {
  /** Durably appends ops, all or nothing; resolves only once they are stored (flushed). Ops whose op-id is already held are skipped. Returns the ops actually added. */
  append(ops: readonly T[]): Promise<readonly T[]>;
}

/** True when `log` takes writes (it has `append`). */
export function isWritableLog<T extends StoredOp>(log: ReadableOpLog<T> | OpLog<T>): log is OpLog<T> {
  return typeof (log as Partial<OpLog<T>>).append === "function";
}
