/**
 * Idempotent writes: a caller that may retry a write (an MCP client whose answer was lost to a
 * crash or a timeout) gives it a key (the write's `idempotency` option, write-options.ts); the first write under a key records, durably and before its
 * ops are appended, the op-ids it is about to store. A write under a known key is not written
 * again: when the graph holds those op-ids, it is answered with the first write's receipt; when it
 * does not (the process died between the record and the append), it is written now. A key given
 * again with another request is refused (`idempotency-key-reused`).
 *
 * The ledger is a seam ({@link IdempotencyLedger}); a workspace keeps one in
 * `.kumiki/idempotency.jsonl` ({@link FileIdempotencyLedger}), shared by every process on it.
 */
import fs from "node:fs";

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

/**
 * An {@link IdempotencyLedger} in a JSON-lines file: one record a line, appended and fsynced; a
 * later line for a key replaces an earlier one. Other processes' records are read when the file
 * has grown since the last look. A torn last line (a crash mid-append) is ignored.
 */
export class FileIdempotencyLedger implements IdempotencyLedger {
  private readonly records = new Map<string, IdempotencyRecord>();
  private read = 0;

  constructor(readonly path: string) {}

  lookup(key: string): IdempotencyRecord | undefined {
    this.catchUp();
    return this.records.get(key);
  }

  record(record: IdempotencyRecord): void {
    const fd = fs.openSync(this.path, "a");
    try {
      fs.writeSync(fd, `${JSON.stringify(record)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    this.records.set(record.key, record);
  }

  private catchUp(): void {
    let size: number;
    try {
      size = fs.statSync(this.path).size;
    } catch {
      return;
    }
    if (size === this.read) return;
    if (size < this.read) {
      this.read = 0;
      this.records.clear();
    }
    const fd = fs.openSync(this.path, "r");
    try {
      const buf = Buffer.alloc(size - this.read);
      fs.readSync(fd, buf, 0, buf.length, this.read);
      const text = buf.toString("utf8");
      const end = text.lastIndexOf("\n") + 1;
      for (const line of text.slice(0, end).split("\n")) {
        if (line === "") continue;
        try {
          const r = JSON.parse(line) as IdempotencyRecord;
          if (typeof r.key === "string" && typeof r.request === "string" && Array.isArray(r.opIds))
            this.records.set(r.key, r);
        } catch {
          // A damaged line: skipped (its key, if retried, is written again).
        }
      }
      this.read += Buffer.byteLength(text.slice(0, end), "utf8");
    } finally {
      fs.closeSync(fd);
    }
  }
}
