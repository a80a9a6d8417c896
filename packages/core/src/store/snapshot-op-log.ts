import type { ReadableOpLog, StoredOp } from "./op-log.js";

/**
 * A {@link ReadableOpLog} over ops read once (a workspace's verified op-log.jsonl, see
 * `openWorkspaceReader`): what read-only commands use so they need not load the Automerge document.
 * It has no `append` (a store over it refuses writes as `read-only`) and hears of no other
 * process's ops; open the workspace to write or sync.
 */
export class SnapshotOpLog<T extends StoredOp = StoredOp> implements ReadableOpLog<T> {
  private ops: readonly T[] | undefined;
  private readonly read: (() => readonly T[]) | undefined;
  private readonly checked: (() => number) | undefined;

  /**
   * `ops`, or a function that reads them on the first call of {@link all} (a check answered from a
   * cache reads none); `wireChecked`, how many of the first ops are known to pass the wire schema
   * (see {@link ReadableOpLog.wireChecked}), asked after they are read.
   */
  constructor(
    ops: readonly T[] | (() => readonly T[]),
    options: { readonly wireChecked?: () => number } = {},
  ) {
    if (typeof ops === "function") this.read = ops;
    else this.ops = ops;
    this.checked = options.wireChecked;
  }

  get wireChecked(): number {
    return this.checked?.() ?? 0;
  }

  all(): readonly T[] {
    this.ops ??= this.read!();
    return this.ops;
  }

  onRemote(_listener: (ops: readonly T[]) => void): () => void {
    return () => undefined;
  }

  /** Closes the log (it holds nothing to release). */
  async close(): Promise<void> {}
}
