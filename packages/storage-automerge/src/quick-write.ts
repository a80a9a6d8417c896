/**
 * A workspace opened to write without loading its Automerge document (issue 42): the graph is read
 * from op-log.jsonl, vouched for by its sidecar as the storage's, and the pending bundles beside the
 * document (pending-bundles.ts); a write is judged against them and stored as one more pending
 * bundle, durably, before it is answered. The storage lock is held from the read to the close, so
 * no other process stores anything between what the write was judged against and its storing: a
 * write here is never lost to a merge. What a call in a process of its own (the CLI without its
 * daemon) opens for a write; the next log that opens the document folds the bundles in.
 *
 * It declines (undefined: open the workspace in full) whenever it cannot show the files hold
 * exactly what is stored: op-log.jsonl out of date or unreadable, a pending file that does not
 * parse, no write access, or {@link PENDING_MOST} bundles waiting already (the full open folds them).
 */
import path from "node:path";
import { copyStoredOp, type FoldSnapshot, Graph, type OpLog, type StoredOp } from "@kumiki-graph/core";
import { FileLock } from "./file-lock.js";
import { FoldSnapshotFile, heldBySnapshot } from "./fold-snapshot-file.js";
import { HeldOps } from "./held-ops.js";
import type { WorkspaceStore, WorkspaceStoreError } from "./open-store.js";
import { PendingBundles } from "./pending-bundles.js";
import { type StoreOverOptions, storeOver } from "./store-over.js";
import { locate, type WorkspacePaths, writable } from "./workspace-layout.js";
import { opsState, readStoredFiles } from "./workspace-read.js";

/**
 * Pending bundles a quick write lets wait: past this many, the write opens the document in full and
 * folds them in (each costs every reader a file read; a fold, one Automerge load).
 */
export const PENDING_MOST = 64;

/** A workspace's store whose writes are stored as pending bundles (see the module comment). */
export interface QuickWorkspaceStore extends Omit<WorkspaceStore, "workspace"> {
  readonly paths: WorkspacePaths;
  /** The state the store's ops are in now, as `opsState` spells it (a check cache's key). */
  state(): string;
  /** Every op the store holds now: op-log.jsonl's, the pending ones, and what it wrote (read now). */
  ops(): readonly StoredOp[];
  /** The ops this store wrote, in order. */
  written(): readonly StoredOp[];
}

/**
 * Opens the workspace at `dir` (with `walkUp`, the nearest at or above it) to write without loading
 * its Automerge document; undefined when that cannot be done (see the module comment), a refusal
 * when the workspace or its manifest is wrong. The storage lock is held until `close`.
 */
export async function openQuickWrite(
  dir: string,
  options: StoreOverOptions & { readonly walkUp?: boolean },
): Promise<{ ok: true; value: QuickWorkspaceStore } | { ok: false; error: WorkspaceStoreError } | undefined> {
  const located = locate(dir, options.walkUp ?? false);
  if (!located.ok) return undefined;
  const { paths, config } = located.value;
  if (!writable(paths.storage)) return undefined;
  const documentId = config.graph.slice("automerge:".length);
  const lock = new FileLock(path.join(paths.storage, ".lock"));
  try {
    await lock.acquire();
  } catch {
    // The full open waits and reports in its own terms.
    return undefined;
  }
  const log = readQuick(paths, documentId, lock, options.checkStamp);
  if (log === undefined) {
    lock.release();
    return undefined;
  }
  const made = storeOver(log, paths, options);
  if (!made.ok) {
    // Releases the lock, and the snapshot's file the log reads rows from.
    await log.close();
    return made;
  }
  const { store, capabilities, keptChecks } = made.value;
  return {
    ok: true,
    value: {
      paths,
      store,
      capabilities,
      ...(keptChecks === undefined ? {} : { keptChecks }),
      state: () => log.state(),
      ops: () => log.all(),
      written: () => log.written,
      close: () => store.close(),
    },
  };
}

/** The quick log of the files as they are now, or undefined when they do not show what is stored. */
function readQuick(
  paths: WorkspacePaths,
  documentId: string,
  lock: FileLock,
  stamp: string | undefined,
): PendingOpLog | undefined {
  try {
    const read = readStoredFiles(paths, documentId);
    if (read === undefined || read.unreadable > 0 || read.pending.length >= PENDING_MOST) return undefined;
    // op-log.jsonl's fold, kept for the state of its ops (without the pending bundles).
    const kept =
      stamp === undefined ? undefined : new FoldSnapshotFile(paths, opsState(documentId, read.heads), stamp);
    const snapshot = kept?.read();
    const mirrored = snapshot === undefined ? read.ops() : undefined;
    if (snapshot === undefined && mirrored === undefined) return undefined;
    const prefix =
      snapshot !== undefined
        ? prefixOfSnapshot(snapshot.snapshot, () => read.ops(), read.wire)
        : prefixOfOps(mirrored!, read.wire, kept);
    const log = new PendingOpLog(
      documentId,
      read.heads,
      prefix,
      read.pending,
      new PendingBundles(paths.storage),
      lock,
    );
    // Rows are read from the snapshot's file until the store is closed.
    if (snapshot !== undefined) log.onClose(() => snapshot.close());
    return log;
  } catch {
    return undefined;
  }
}

/**
 * What a quick log holds first: op-log.jsonl's ops, read or not. With a fold snapshot of them,
 * their count and op-ids come from it and the ops themselves are read only when someone asks for
 * every op ({@link PendingOpLog.all}); without one, they are read, and folded into a snapshot
 * (kept for the next write) when the store asks for its graph.
 */
interface Prefix {
  readonly count: number;
  /** Whether an op with this op-id is among them. */
  holds(id: string): boolean;
  /** The ops, read now (undefined: the file no longer reads as vouched). */
  ops(): readonly StoredOp[] | undefined;
  /** How many of the first ops passed the wire schema when written (see `OpLog.wireChecked`). */
  readonly wireChecked: number;
  /** Their fold as a snapshot, when there is one or one can be made. */
  snapshot(): FoldSnapshot | undefined;
}

function prefixOfSnapshot(
  snapshot: FoldSnapshot,
  read: () => readonly StoredOp[] | undefined,
  wire: boolean,
): Prefix {
  const held = heldBySnapshot(snapshot);
  return {
    count: held.count,
    holds: (id) => held.holds(id),
    ops: read,
    wireChecked: wire ? held.count : 0,
    snapshot: () => snapshot,
  };
}

function prefixOfOps(ops: readonly StoredOp[], wire: boolean, kept: FoldSnapshotFile | undefined): Prefix {
  const held = new HeldOps();
  held.take(ops);
  let made: { snapshot: FoldSnapshot | undefined } | undefined;
  return {
    count: held.ops.length,
    holds: (id) => held.holds(id),
    ops: () => held.ops,
    wireChecked: wire ? held.ops.length : 0,
    snapshot: () => {
      if (made === undefined) {
        // Folded once, kept for the next write in its own process (it costs this one the fold it
        // would have made anyway, and the snapshot's encoding), then taken up like a kept one.
        const snap =
          kept === undefined
            ? undefined
            : Graph.fold(held.ops, { wireChecked: wire ? held.ops.length : 0 }).snapshot();
        if (snap !== undefined) kept!.write(snap);
        made = {
          snapshot:
            snap === undefined
              ? undefined
              : { head: snap.head, rows: snap.rows.length, row: (i) => snap.rows[i]! },
        };
      }
      return made.snapshot;
    },
  };
}

/**
 * The op log of {@link openQuickWrite}: op-log.jsonl's ops (the {@link Prefix}) and the pending
 * ones, read under the storage lock it holds until {@link close}; each append one pending bundle.
 */
class PendingOpLog<T extends StoredOp = StoredOp> implements OpLog<T> {
  /** The pending bundles' ops and this log's appends, none an op of the prefix or held twice. */
  private readonly tail: HeldOps<T>;
  /** Every op (the prefix read), once someone asked for them all. */
  private every: T[] | undefined;
  private readonly names: string[];
  private closed = false;
  private readonly closing: (() => void)[] = [];
  /** The ops this log appended (what a write stored), in order. */
  readonly written: T[] = [];

  constructor(
    private readonly documentId: string,
    private readonly heads: readonly string[],
    private readonly prefix: Prefix,
    bundles: readonly { readonly name: string; readonly ops: readonly StoredOp[] }[],
    private readonly pending: PendingBundles,
    private readonly lock: FileLock,
  ) {
    this.tail = new HeldOps<T>((id) => prefix.holds(id));
    for (const b of bundles) this.takeTail(b.ops as readonly T[]);
    this.names = bundles.map((b) => b.name);
  }

  /** How many of the first ops passed the wire schema when written (see `OpLog`). */
  get wireChecked(): number {
    return this.prefix.wireChecked;
  }

  private takeTail(ops: readonly T[]): void {
    const from = this.tail.ops.length;
    this.tail.take(ops);
    for (let i = from; i < this.tail.ops.length; i++) this.every?.push(this.tail.ops[i]!);
  }

  /** The state these ops are in (see {@link QuickWorkspaceStore.state}). */
  state(): string {
    // In name order, as the read path lists them: a write's file can sort before an earlier one's
    // (its first op-id from a clock behind the other process's), and the state must still match.
    return opsState(this.documentId, this.heads, [...this.names].sort());
  }

  all(): readonly T[] {
    if (this.every === undefined) {
      const first = this.prefix.ops();
      if (first === undefined) throw new Error("op-log.jsonl changed under the storage lock");
      this.every = [...(first as readonly T[]), ...this.tail.ops];
    }
    return this.every;
  }

  seed(): { snapshot: FoldSnapshot; count: number } | undefined {
    const snapshot = this.prefix.snapshot();
    return snapshot === undefined ? undefined : { snapshot, count: this.prefix.count };
  }

  heldCount(): number {
    return this.prefix.count + this.tail.ops.length;
  }

  since(from: number): readonly T[] {
    return from >= this.prefix.count ? this.tail.ops.slice(from - this.prefix.count) : this.all().slice(from);
  }

  async append(ops: readonly T[]): Promise<readonly T[]> {
    if (this.closed) throw new Error("the op log is closed");
    const batch = new Map<string, T>();
    for (const op of ops) {
      const copy = copyStoredOp(op);
      if (!this.tail.holds(copy["op-id"]) && !batch.has(copy["op-id"])) batch.set(copy["op-id"], copy);
    }
    const fresh = [...batch.values()];
    if (fresh.length === 0) return [];
    // Stored (fsynced, renamed into place) before anything here counts it held.
    this.names.push(this.pending.write(fresh));
    // None held, none repeated: the batch took care of both.
    this.takeTail(fresh);
    this.written.push(...fresh);
    return fresh;
  }

  /** The lock is held from the open: nobody else appends until the close. */
  exclusive<R>(fn: () => Promise<R>): Promise<R> {
    return fn();
  }

  onRemote(_listener: (ops: readonly T[]) => void): () => void {
    return () => undefined;
  }

  /** Runs `fn` as the log closes (after the store, which reads through the log, is done). */
  onClose(fn: () => void): void {
    this.closing.push(fn);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closing) fn();
    this.lock.release();
  }
}
