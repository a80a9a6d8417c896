/**
 * The one durable write (store/files.ts) every file of a workspace and of its storage goes
 * through: what a reader sees, what is left when a write fails, and that the folder is flushed.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/store/files.js";

const root = mkdtempSync(path.join(tmpdir(), "kumiki-files-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("writes the text, the bytes or the pieces given, whole, and leaves no temporary file", () => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: "grapheme" }), fc.uint8Array({ maxLength: 70_000 })), {
          maxLength: 6,
        }),
        (pieces) => {
          const dir = path.join(root, `w${n++}`);
          mkdirSync(dir);
          const file = path.join(dir, "f");
          writeFileSync(file, "old");
          const expected = Buffer.concat(pieces.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));
          writeFileAtomic(file, pieces);
          expect(readFileSync(file).equals(expected)).toBe(true);
          expect(readdirSync(dir)).toEqual(["f"]);
          writeFileAtomic(file, "one string");
          expect(readFileSync(file, "utf8")).toBe("one string");
        },
      ),
      { numRuns: 40 },
    );
  });

  it("a write that fails leaves the old file and no temporary file, and says why", () => {
    const dir = path.join(root, "fails");
    mkdirSync(path.join(dir, "target"), { recursive: true });
    writeFileSync(path.join(dir, "target", "inside"), "x");
    // The target is a folder that is not empty: the rename is refused after the data was written.
    expect(() => writeFileAtomic(path.join(dir, "target"), "data")).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir)).toEqual(["target"]);
    // A piece that throws while the data is written: the same.
    const file = path.join(dir, "g");
    writeFileSync(file, "old");
    function* broken(): Generator<string> {
      yield "half";
      throw new Error("the producer failed");
    }
    expect(() => writeFileAtomic(file, broken())).toThrow(/the producer failed/);
    expect(readFileSync(file, "utf8")).toBe("old");
    expect(readdirSync(dir).sort()).toEqual(["g", "target"]);
  });

  it("writes through the temporary file it is given and flushes the target's folder", () => {
    const dir = path.join(root, "named");
    mkdirSync(path.join(dir, "tmp"), { recursive: true });
    const flushed: string[] = [];
    writeFileAtomic(path.join(dir, "f"), "x", {
      tmp: path.join(dir, "tmp", "t1"),
      fsyncDir: (d) => flushed.push(d),
    });
    expect(readFileSync(path.join(dir, "f"), "utf8")).toBe("x");
    expect(readdirSync(path.join(dir, "tmp"))).toEqual([]);
    expect(flushed).toEqual([dir]);
  });
});
