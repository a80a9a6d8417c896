import type { OpLog, StoredOp } from "../../src/store/op-log.js";

/**
 * An in-memory OpLog for tests: append is all or nothing and can be made to fail; `deliver` takes
 * ops from elsewhere (a peer) and tells the listeners, as a sync would.
 */
export class TestLog implements OpLog {
  private readonly held: StoredOp[] = [];
  private readonly ids = new Set<string>();
  private readonly listeners = new Set<(ops: readonly StoredOp[]) => void>();
  /** When set, the next append throws it. */
  failNext: Error | undefined;
  appends = 0;

  all(): readonly StoredOp[] {
    return this.held;
  }

  async append(ops: readonly StoredOp[]): Promise<readonly StoredOp[]> {
    await Promise.resolve();
    if (this.failNext !== undefined) {
      const e = this.failNext;
      this.failNext = undefined;
      throw e;
    }
    this.appends++;
    return this.take(ops);
  }

  private take(ops: readonly StoredOp[]): StoredOp[] {
    const added: StoredOp[] = [];
    for (const op of ops) {
      if (this.ids.has(op["op-id"])) continue;
      this.ids.add(op["op-id"]);
      // A stored op is data: what a peer gets back is a copy, as through a real log.
      const copy = JSON.parse(JSON.stringify(op)) as StoredOp;
      this.held.push(copy);
      added.push(copy);
    }
    return added;
  }

  /** Ops arriving from elsewhere: held, then announced. */
  deliver(ops: readonly StoredOp[]): void {
    const added = this.take(ops);
    if (added.length > 0) for (const l of this.listeners) l(added);
  }

  onRemote(listener: (ops: readonly StoredOp[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
