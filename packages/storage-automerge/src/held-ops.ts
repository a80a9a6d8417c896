/**
 * A workspace's ops as op-log.jsonl and then the pending bundles beside its document give them,
 * each op-id held once (the first copy kept): what the read path and a quick write both read.
 */
import type { StoredOp } from "@kumiki-graph/core/read";

/** Ops in the order taken, repeats of an op-id dropped. */
export class HeldOps<T extends StoredOp = StoredOp> {
  readonly ops: T[] = [];
  /**
   * The op-ids held, filled only when an op-id could repeat one: while every op taken has an op-id
   * greater than all before it (op-log.jsonl in op-id order, then a write's fresh ids), comparing
   * with {@link greatest} answers — hashing 100,000 op-ids into a Set was a tenth of a write's CPU.
   */
  private ids: Set<string> | undefined;
  private greatest = "";

  /** `before`: whether an op-id is held before these ops (not taken again: op-log.jsonl's, by its snapshot). */
  constructor(private readonly before?: (id: string) => boolean) {}

  /** Whether an op with this op-id is held (here, or before). */
  holds(id: string): boolean {
    if (this.before?.(id) === true) return true;
    if (id > this.greatest) return false;
    if (this.ids === undefined) this.ids = new Set(this.ops.map((op) => op["op-id"]));
    return this.ids.has(id);
  }

  /** Holds the ops of `ops` not held yet. */
  take(ops: readonly T[]): void {
    for (const op of ops) {
      const id = op["op-id"];
      if (this.holds(id)) continue;
      this.ids?.add(id);
      if (id > this.greatest) this.greatest = id;
      this.ops.push(op);
    }
  }
}
