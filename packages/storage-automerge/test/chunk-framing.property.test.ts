/**
 * Automerge's chunk framing, read by one function for the damage check and the sync server's change
 * validator: concatenated real chunks split back into exactly themselves, a cut inside any chunk is
 * named, and no input makes the reader throw.
 */
import * as A from "@automerge/automerge";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeChanges, splitChunks } from "../src/change-check.js";
import { chunkFrameAt } from "../src/chunk-framing.js";

/** Real chunks: the changes of a document with `n` edits (change chunks), and its saved form (a document chunk). */
function realChunks(n: number): Uint8Array[] {
  let doc = A.from<{ xs: number[] }>({ xs: [] });
  for (let i = 0; i < n; i++) doc = A.change(doc, (d) => void d.xs.push(i));
  return [...A.getAllChanges(doc), A.save(doc)];
}

const concat = (parts: readonly Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe("Automerge's chunk framing", () => {
  const pool = realChunks(6);

  it("splits any concatenation of real chunks back into exactly those chunks, with their types", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 8 }), (picks) => {
        const parts = picks.map((i) => pool[i]!);
        const split = splitChunks(concat(parts));
        expect(typeof split).not.toBe("string");
        const got = split as { type: number; bytes: Uint8Array }[];
        expect(got.map((c) => [...c.bytes])).toEqual(parts.map((p) => [...p]));
        expect(got.map((c) => c.type)).toEqual(picks.map((i) => (i === pool.length - 1 ? 0 : 1)));
      }),
    );
  });

  it("names a cut inside any chunk, at every length", () => {
    const whole = concat(pool.slice(0, 3));
    const ends = new Set<number>();
    let at = 0;
    for (let i = 0; i < 3; i++) {
      at += pool[i]!.length;
      ends.add(at);
    }
    for (let n = 1; n < whole.length; n++) {
      const r = splitChunks(whole.subarray(0, n));
      if (ends.has(n)) expect(typeof r, `cut at ${n}`).not.toBe("string");
      else expect(r, `cut at ${n}`).toMatch(/truncated/);
    }
  });

  it("answers any bytes with a frame or a reason, never a throw", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat({ max: 70 }), (bytes, at) => {
        const r = chunkFrameAt(bytes, at);
        if (typeof r !== "string") expect(r.end).toBeLessThanOrEqual(bytes.length);
        expect(() => decodeChanges([bytes])).not.toThrow();
      }),
    );
  });

  it("decodes the changes of a document chunk and of change chunks alike", () => {
    const decoded = decodeChanges([concat(pool.slice(0, 2)), pool[pool.length - 1]!]);
    expect(typeof decoded).not.toBe("string");
    expect((decoded as A.DecodedChange[]).length).toBe(2 + 7);
  });

  it("given the receiver's document, a document chunk yields every change it lacks, and only those when it holds a prefix", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 6 }),
        fc.nat({ max: 6 }),
        fc.nat({ max: 3 }),
        fc.nat({ max: 6 }),
        (before, after, own, extra) => {
          // The sender's document: `before` changes, the receiver forks there (and may make `own`
          // changes of its own), the sender goes on with `after` more and `extra` on a branch merged in.
          let sent = A.from<{ xs: number[] }>({ xs: [] }, { actor: "aa" });
          for (let i = 0; i < before; i++) sent = A.change(sent, (d) => void d.xs.push(i));
          let held = A.clone(sent, { actor: "bb" });
          for (let i = 0; i < own; i++) held = A.change(held, (d) => void d.xs.push(100 + i));
          let branch = A.clone(sent, { actor: "cc" });
          for (let i = 0; i < after; i++) sent = A.change(sent, (d) => void d.xs.push(200 + i));
          for (let i = 0; i < extra; i++) branch = A.change(branch, (d) => void d.xs.push(300 + i));
          sent = A.merge(sent, branch);
          const decoded = decodeChanges([A.save(sent)], held);
          expect(typeof decoded).not.toBe("string");
          const got = new Set((decoded as A.DecodedChange[]).map((c) => c.hash));
          const lacking = A.getAllChanges(sent)
            .map((c) => A.decodeChange(c).hash)
            .filter((h) => !A.hasHeads(held, [h]));
          for (const h of lacking) expect(got.has(h), h).toBe(true);
          if (own === 0) expect([...got].sort()).toEqual([...lacking].sort());
        },
      ),
      { numRuns: 60 },
    );
  });
});
