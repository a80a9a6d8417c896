/**
 * op-log.jsonl's lines read as ops a step at a time: 64 KiB read into one reused buffer, decoded
 * and parsed, so a 100,000-op file (26 MB) is never one buffer and one string in memory at once.
 * Fresh memory is what a whole read cost: on this project's machines touching a page the first
 * time costs about 3 ms per MB (a 26 MB `Buffer.allocUnsafe` then `fill`: 87 ms; the same fill
 * again: 1.6 ms), and the whole read allocated 26 MB of buffer then 26 MB of string — 95 ms to
 * read and 95 ms to decode, against 9 ms to read the file through one 1 MiB buffer. Steps of 64
 * KiB decode to strings V8 places in its young generation, whose pages are reused once each step's
 * string is garbage.
 */
import fs from "node:fs";
import type { StoredOp } from "@kumiki-graph/core/read";

/** Bytes read and decoded per step (below V8's largest young-generation object). */
const STEP = 64 * 1024;

const NEWLINE = 0x0a;

/**
 * The ops of the first `size` bytes of the file open at `fd`, one a line; undefined when a line is
 * not a JSON object with a string "op-id", the last line is not ended, or the file is shorter.
 */
export function readOpLines(fd: number, size: number): StoredOp[] | undefined {
  const ops: StoredOp[] = [];
  const buf = Buffer.allocUnsafe(Math.max(1, Math.min(STEP, size)));
  // The bytes of a line begun in an earlier step (a line can be longer than a step: a definition's
  // text may hold a million characters). A newline byte is never inside a UTF-8 sequence, so
  // cutting at one never splits a character.
  let carry: Buffer | undefined;
  for (let pos = 0; pos < size; ) {
    const n = fs.readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
    if (n === 0) return undefined;
    pos += n;
    const chunk = buf.subarray(0, n);
    const last = chunk.lastIndexOf(NEWLINE);
    if (last < 0) {
      carry = carry === undefined ? Buffer.from(chunk) : Buffer.concat([carry, chunk]);
      continue;
    }
    let start = 0;
    if (carry !== undefined) {
      start = chunk.indexOf(NEWLINE) + 1;
      if (!takeLines(Buffer.concat([carry, chunk.subarray(0, start)]).toString("utf8"), ops))
        return undefined;
      carry = undefined;
    }
    if (!takeLines(chunk.toString("utf8", start, last + 1), ops)) return undefined;
    if (last + 1 < n) carry = Buffer.from(chunk.subarray(last + 1));
  }
  return carry === undefined ? ops : undefined;
}

/** Appends the ops of `text`'s lines (each ends in "\n") to `ops`; false at the first that is not an op. */
function takeLines(text: string, ops: StoredOp[]): boolean {
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) return false;
    try {
      const op = JSON.parse(text.slice(at, end)) as { "op-id"?: unknown };
      if (typeof op !== "object" || op === null || typeof op["op-id"] !== "string") return false;
      ops.push(op as StoredOp);
    } catch {
      return false;
    }
    at = end + 1;
  }
  return true;
}
