/**
 * Idempotent writes: a caller that may retry a write (an MCP client whose answer was lost to a
 * crash or a timeout) gives it a key (the write's `idempotency` option, write-options.ts); the first write under a key records, durably and before its
 * ops are appended, the op-ids it is about to store. A write under a known key is not written
 * again: when the graph holds those op-ids, it is answered with the first write's receipt; when it
 * does not (the process died between the record and the append), it is written now. A key given
 * again with another request is refused (`idempotency-key-reused`).
 *
 * The ledger is a seam ({@link IdempotencyLedger}); a workspace keeps one in
 * `.kumiki/idempotency.jsonl` (`FileIdempotencyLedger`, file-idempotency-ledger.ts), shared by every
 * process on it.
 */

/** What a ledger remembers of a write made under a key. */
export interface IdempotencyRecord {
  readonly key: string;
  /** What was asked (the caller's digest of its request): the same key with another request is refused. */
  readonly request: string;
  /** The op-ids the write stores, in order. */
  readonly opIds: readonly string[];
  readonly removed?: readonly string[];
  readonly warnings?: readonly string[];
  /**
   * The whole answer of a request of several writes (`Store.once`, e.g. `kumiki_fix_apply`),
   * recorded when it finished: a retry is answered with it.
   */
  readonly answer?: unknown;
}

/**
 * Where keys are remembered. A ledger shared by several processes through a database answers with
 * promises; a file or memory one synchronously.
 */
export interface IdempotencyLedger {
  /** The record of `key`, or undefined. */
  lookup(key: string): IdempotencyRecord | undefined | Promise<IdempotencyRecord | undefined>;
  /** Records `record` durably (it must survive a crash right after this returns, or resolves). */
  record(record: IdempotencyRecord): void | Promise<void>;
}

/** An {@link IdempotencyLedger} in memory (tests, a store without a workspace). */
export class MemoryIdempotencyLedger implements IdempotencyLedger {
  private readonly records = new Map<string, IdempotencyRecord>();
  lookup(key: string): IdempotencyRecord | undefined {
    return this.records.get(key);
  }
  record(record: IdempotencyRecord): void {
    this.records.set(record.key, record);
  }
}
