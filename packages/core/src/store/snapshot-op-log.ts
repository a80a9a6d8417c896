import type { FoldSnapshot } from "../graph/fold-snapshot.js";
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
  private readonly seeding: (() => SnapshotSeed<T> | undefined) | undefined;
  /** The seed taken, once asked for (null: there was none). */
  private seeded: SnapshotSeed<T> | null | undefined;

  /**
   * `ops`, or a function that reads them on the first call of {@link all} (a check answered from a
   * cache reads none); `wireChecked`, how many of the first ops are known to pass the wire schema
   * (see {@link ReadableOpLog.wireChecked}), asked after they are read; `seed`, a fold snapshot
   * of the first ops and the ops after them (see {@link ReadableOpLog.seed}), asked when a store
   * first needs its graph: then the first ops are not read unless every op is asked for.
   */
  constructor(
    ops: readonly T[] | (() => readonly T[]),
    options: {
      readonly wireChecked?: () => number;
      readonly seed?: () => SnapshotSeed<T> | undefined;
    } = {},
  ) {
    if (typeof ops === "function") this.read = ops;
    else this.ops = ops;
    this.checked = options.wireChecked;
    this.seeding = options.seed;
  }

  get wireChecked(): number {
    return this.checked?.() ?? 0;
  }

  all(): readonly T[] {
    this.ops ??= this.read!();
    return this.ops;
  }

  seed(): { snapshot: FoldSnapshot; count: number } | undefined {
    if (this.seeded === undefined) this.seeded = this.seeding?.() ?? null;
    return this.seeded ?? undefined;
  }

  heldCount(): number {
    return this.seeded ? this.seeded.count + this.seeded.tail.length : this.all().length;
  }

  since(from: number): readonly T[] {
    const s = this.seeded;
    return s && from >= s.count ? s.tail.slice(from - s.count) : this.all().slice(from);
  }

  onRemote(_listener: (ops: readonly T[]) => void): () => void {
    return () => undefined;
  }

  /** Closes the log (and what its seed reads rows from). */
  async close(): Promise<void> {
    if (this.seeded) this.seeded.close?.();
  }
}

/**
 * A fold snapshot of a {@link SnapshotOpLog}'s first `count` ops, and the ops after them (`tail`:
 * {@link SnapshotOpLog.all} is the first ops, then these).
 */
export interface SnapshotSeed<T extends StoredOp = StoredOp> {
  readonly snapshot: FoldSnapshot;
  readonly count: number;
  readonly tail: readonly T[];
  /** Releases what the snapshot's rows are read from (the log calls it as it closes). */
  close?(): void;
}
