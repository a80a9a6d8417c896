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
import { copyStoredOp, type OpLog, type StoredOp } from "@kumiki-graph/core";
import { FileLock } from "./file-lock.js";
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
  /** Every op the store holds now: op-log.jsonl's, the pending ones, and what it wrote. */
  ops(): readonly StoredOp[];
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
  const log = readQuick(paths, documentId, lock);
  if (log === undefined) {
    lock.release();
    return undefined;
  }
  const made = storeOver(log, paths, options);
  if (!made.ok) {
    lock.release();
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
      close: () => store.close(),
    },
  };
}

/** The quick log of the files as they are now, or undefined when they do not show what is stored. */
function readQuick(paths: WorkspacePaths, documentId: string, lock: FileLock): PendingOpLog | undefined {
  try {
    const read = readStoredFiles(paths, documentId);
    if (read === undefined || read.unreadable > 0 || read.pending.length >= PENDING_MOST) return undefined;
    const ops = read.ops();
    if (ops === undefined) return undefined;
    return new PendingOpLog(
      documentId,
      read.heads,
      ops,
      read.wire,
      read.pending,
      new PendingBundles(paths.storage),
      lock,
    );
  } catch {
    return undefined;
  }
}

/**
 * The op log of {@link openQuickWrite}: op-log.jsonl's ops and the pending ones, read under the
 * storage lock it holds until {@link close}; each append one pending bundle.
 */
class PendingOpLog<T extends StoredOp = StoredOp> implements OpLog<T> {
  private readonly held = new HeldOps<T>();
  private readonly names: string[];
  private closed = false;
  /** How many of the first ops (op-log.jsonl's) passed the wire schema when written (see `OpLog`). */
  readonly wireChecked: number;

  constructor(
    private readonly documentId: string,
    private readonly heads: readonly string[],
    mirrored: readonly StoredOp[],
    /** Every op of op-log.jsonl passed the wire schema when written. */
    wire: boolean,
    bundles: readonly { readonly name: string; readonly ops: readonly StoredOp[] }[],
    private readonly pending: PendingBundles,
    private readonly lock: FileLock,
  ) {
    this.held.take(mirrored as readonly T[]);
    this.wireChecked = wire ? this.held.ops.length : 0;
    for (const b of bundles) this.held.take(b.ops as readonly T[]);
    this.names = bundles.map((b) => b.name);
  }

  /** The state these ops are in (see {@link QuickWorkspaceStore.state}). */
  state(): string {
    // In name order, as the read path lists them: a write's file can sort before an earlier one's
    // (its first op-id from a clock behind the other process's), and the state must still match.
    return opsState(this.documentId, this.heads, [...this.names].sort());
  }

  all(): readonly T[] {
    return this.held.ops;
  }

  async append(ops: readonly T[]): Promise<readonly T[]> {
    if (this.closed) throw new Error("the op log is closed");
    const batch = new Map<string, T>();
    for (const op of ops) {
      const copy = copyStoredOp(op);
      if (!this.held.holds(copy["op-id"]) && !batch.has(copy["op-id"])) batch.set(copy["op-id"], copy);
    }
    const fresh = [...batch.values()];
    if (fresh.length === 0) return [];
    // Stored (fsynced, renamed into place) before anything here counts it held.
    this.names.push(this.pending.write(fresh));
    // None held, none repeated: the batch took care of both.
    this.held.take(fresh);
    return fresh;
  }

  /** The lock is held from the open: nobody else appends until the close. */
  exclusive<R>(fn: () => Promise<R>): Promise<R> {
    return fn();
  }

  onRemote(_listener: (ops: readonly T[]) => void): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lock.release();
  }
}
