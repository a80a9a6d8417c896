/** The idempotency ledger a workspace keeps in `.kumiki/idempotency.jsonl` (Node only: a file). */
import fs from "node:fs";
import type { IdempotencyLedger, IdempotencyRecord } from "./idempotency.js";

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
