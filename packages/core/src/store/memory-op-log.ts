/**
 * An in-memory {@link OpLog}: for tests, and for the replicas of property tests, which exchange ops
 * with {@link MemoryOpLog.receive} as a sync peer would deliver them.
 */
import type { OpLog, StoredOp } from "./op-log.js";

/**
 * Copies an op as storage would (JSON in, JSON out), checking that it is a JSON object with a
 * non-empty string "op-id". Throws a TypeError naming the problem.
 */
export function copyStoredOp<T extends StoredOp>(op: T): T {
  if (typeof op !== "object" || op === null || Array.isArray(op)) {
    throw new TypeError("an op must be a JSON object");
  }
  const id: unknown = (op as { "op-id"?: unknown })["op-id"];
  if (typeof id !== "string" || id === "") throw new TypeError('an op must have a non-empty string "op-id"');
  let text: string;
  try {
    text = JSON.stringify(op);
  } catch (e) {
    throw new TypeError(`op ${id} is not JSON: ${(e as Error).message}`);
  }
  return JSON.parse(text) as T;
}

/** An in-memory, all-or-nothing, deduplicating op log. */
export class MemoryOpLog<T extends StoredOp = StoredOp> implements OpLog<T> {
  private readonly held: T[] = [];
  private readonly ids = new Set<string>();
  private readonly listeners = new Set<(ops: readonly T[]) => void>();
  private closed = false;

  /** @param initial ops held from the start (as if loaded), deduplicated. */
  constructor(initial: readonly T[] = []) {
    this.take(initial);
  }

  all(): readonly T[] {
    return this.held;
  }

  async append(ops: readonly T[]): Promise<readonly T[]> {
    if (this.closed) throw new Error("the op log is closed");
    return this.take(ops);
  }

  /**
   * Ops arriving from elsewhere (a peer): held like appended ones, then announced to the
   * {@link onRemote} listeners. Returns the ops that were new.
   */
  receive(ops: readonly T[]): readonly T[] {
    if (this.closed) throw new Error("the op log is closed");
    const added = this.take(ops);
    if (added.length > 0) for (const l of [...this.listeners]) l(added);
    return added;
  }

  onRemote(listener: (ops: readonly T[]) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Closes the log: later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }

  /** Validates and copies every op before holding any, so a bad op leaves the log unchanged. */
  private take(ops: readonly T[]): T[] {
    const fresh: T[] = [];
    const batch = new Set<string>();
    for (const op of ops) {
      const copy = copyStoredOp(op);
      const id = copy["op-id"];
      if (this.ids.has(id) || batch.has(id)) continue;
      batch.add(id);
      fresh.push(copy);
    }
    for (const op of fresh) {
      this.ids.add(op["op-id"]);
      this.held.push(op);
    }
    return fresh;
  }
}
