/**
 * op-log.jsonl read a step at a time (op-log-lines.ts) reads every file as one whole read and
 * parse would: lines longer than a step, characters of several bytes cut by a step's end, and a
 * file that ends mid-line or holds a line that is not an op.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { readOpLines } from "../src/op-log-lines.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-op-lines-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The ops `readOpLines` finds in `bytes`' first `size` bytes (all of them by default). */
function readBack(bytes: Buffer, size = bytes.length): unknown[] | undefined {
  const file = path.join(dir, "op-log.jsonl");
  fs.writeFileSync(file, bytes);
  const fd = fs.openSync(file, "r");
  try {
    return readOpLines(fd, size);
  } finally {
    fs.closeSync(fd);
  }
}

/** Text of up to ~200 KB built from runs of one character (1 to 4 UTF-8 bytes each). */
const text = fc
  .array(fc.tuple(fc.constantFrom("a", "é", "漢", "🪵", "\n", '"'), fc.integer({ min: 1, max: 40_000 })), {
    maxLength: 6,
  })
  .map((runs) => runs.map(([c, n]) => c.repeat(n)).join(""));

const ops = fc.array(
  fc.record({ "op-id": fc.stringMatching(/^op_[0-9A-Z]{4}$/), body: text, n: fc.integer() }),
  { maxLength: 8 },
);

const lines = (xs: readonly unknown[]) => Buffer.from(xs.map((x) => `${JSON.stringify(x)}\n`).join(""));

describe("op-log.jsonl read a step at a time", () => {
  it("reads every file's ops as a whole parse does", () => {
    fc.assert(
      fc.property(ops, (xs) => {
        expect(readBack(lines(xs))).toEqual(xs);
      }),
      { numRuns: 60 },
    );
  });

  it("reads only the first `size` bytes (a writer's later appends are not the vouched file)", () => {
    fc.assert(
      fc.property(ops, ops, (xs, more) => {
        const first = lines(xs);
        expect(readBack(Buffer.concat([first, lines(more)]), first.length)).toEqual(xs);
      }),
      { numRuns: 30 },
    );
  });

  it("answers none for a last line not ended, or a line that is not an op, wherever it falls", () => {
    fc.assert(
      fc.property(
        ops,
        fc.nat(),
        fc.constantFrom("{}", "[1]", "not json", "", '{"op-id":7}'),
        (xs, at, bad) => {
          const whole = lines(xs);
          // Cut off the final newline: the last line is not ended.
          if (whole.length > 0) expect(readBack(whole.subarray(0, whole.length - 1))).toBeUndefined();
          const ls = xs.map((x) => JSON.stringify(x));
          ls.splice(at % (ls.length + 1), 0, bad);
          expect(readBack(Buffer.from(ls.map((l) => `${l}\n`).join("")))).toBeUndefined();
        },
      ),
      { numRuns: 40 },
    );
  });

  it("answers none when the file is shorter than the size vouched for", () => {
    const whole = lines([{ "op-id": "op_A", body: "x".repeat(100_000) }]);
    expect(readBack(whole, whole.length + 10)).toBeUndefined();
  });
});
