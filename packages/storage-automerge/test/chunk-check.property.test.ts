/**
 * The chunk check against real Automerge chunks: every sound chunk passes, and every truncation and
 * every single-byte change of one is caught (Automerge's own incremental load drops a partial last
 * chunk silently, so this check is what stands between a damaged file and a lost change).
 */
import { createHash } from "node:crypto";
import * as A from "@automerge/automerge";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkDamage, snapshotName, walkChunks } from "../src/chunk-check.js";

const SEED = Number(process.env.KUMIKI_PROPERTY_SEED ?? 24);

function chunks(): { snapshot: Uint8Array; incremental: Uint8Array; heads: string[] } {
  let d = A.from<{ list: string[] }>({ list: [] });
  const h = A.getHeads(d);
  d = A.change(d, (x) => {
    x.list.push("a bundle of ops ".repeat(40));
  });
  return { snapshot: A.save(d), incremental: A.saveSince(d, h), heads: A.getHeads(d) };
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

describe("chunkDamage", () => {
  const { snapshot, incremental, heads } = chunks();

  it("passes sound chunks, names a snapshot as automerge-repo does", () => {
    expect(chunkDamage("snapshot", snapshotName(heads), snapshot)).toBeUndefined();
    expect(chunkDamage("incremental", sha(incremental), incremental)).toBeUndefined();
    const both = new Uint8Array([...snapshot, ...incremental]);
    expect(walkChunks(both)).toEqual({ sound: both });
    expect(chunkDamage("incremental", sha(incremental), new Uint8Array())).toBe("empty file");
  });

  it("catches every truncation and keeps the sound chunks before it", () => {
    const both = new Uint8Array([...snapshot, ...incremental]);
    for (let n = 1; n < both.length; n++) {
      const cut = both.subarray(0, n);
      // Cut at the boundary, a file of whole chunks is sound as a file: its name tells (when it
      // is incremental), or the changes op-log.jsonl knows of (the workspace's lost-change check).
      if (n !== snapshot.length) expect(chunkDamage("snapshot", "x", cut), `cut to ${n}`).toBeDefined();
      expect(chunkDamage("incremental", sha(both), cut), `cut to ${n}`).toBeDefined();
      expect(walkChunks(cut).sound.length).toBe(n >= snapshot.length ? snapshot.length : 0);
    }
  });

  it("catches every single-byte change of a snapshot and of an incremental chunk", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.nat(), fc.integer({ min: 1, max: 255 }), (snap, at, mask) => {
        const sound = snap ? snapshot : incremental;
        const data = Uint8Array.from(sound);
        data[at % data.length]! ^= mask;
        const name = snap ? snapshotName(heads) : sha(sound);
        expect(chunkDamage(snap ? "snapshot" : "incremental", name, data)).toBeDefined();
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });
});
