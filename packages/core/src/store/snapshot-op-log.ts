import type { OpLog, StoredOp } from "./op-log.js";

/**
 * A read-only {@link OpLog} over ops read once (a workspace's verified op-log.jsonl, see
 * `openWorkspaceReader`): what read-only commands use so they need not load the Automerge document.
 * It takes no writes and hears of no other process's ops; open the workspace to write or sync.
 */
export class SnapshotOpLog<T extends StoredOp = StoredOp> implements OpLog<T> {
  private closed = false;
  private ops: readonly T[] | undefined;
  private readonly read: (() => readonly T[]) | undefined;

  /** `ops`, or a function that reads them on the first call of {@link all} (a check answered from a cache reads none). */
  constructor(ops: readonly T[] | (() => readonly T[])) {
    if (typeof ops === "function") this.read = ops;
    else this.ops = ops;
  }

  all(): readonly T[] {
    this.ops ??= this.read!();
    return this.ops;
  }

  append(_ops: readonly T[]): Promise<readonly T[]> {
    // A bug in the caller, not a user error: read-only opens are chosen by commands that never write.
    return Promise.reject(
      new Error(
        this.closed ? "the op log is closed" : "this workspace was opened read-only: open it to write",
      ),
    );
  }

  onRemote(_listener: (ops: readonly T[]) => void): () => void {
    return () => undefined;
  }

  /** Closes the log: later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
