/**
 * A workspace's document does not pile up incremental chunks: a writer compacts it into one
 * snapshot once it knows more than 256 of them, even where automerge-repo would not yet (it waits
 * until the incremental chunks outweigh the snapshot), since every later open pays for each chunk
 * file. Nothing is lost by it, whoever else writes meanwhile, and the readable op log still
 * vouches for the chunks as they are.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function open(dir: string, author: string, create = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, { author, checker: false, ...(create ? { create: true } : {}) });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** The graph document's chunk files on disk, by kind. */
function chunks(dir: string): { snapshot: number; incremental: number } {
  const out = { snapshot: 0, incremental: 0 };
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (path.basename(d) === "snapshot") out.snapshot++;
      else if (path.basename(d) === "incremental") out.incremental++;
    }
  };
  walk(path.join(dir, ".kumiki", "automerge"));
  return out;
}

/** A text of `n` characters that does not compress: a snapshot too large for automerge-repo to compact soon. */
function noise(n: number): string {
  let x = 2463534242;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    // xorshift32: no short cycle in the low bits.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.push("abcdefghijklmnopqrstuvwxyz0123456789"[(x >>> 0) % 36]!);
  }
  return out.join("");
}

describe("compaction by count", () => {
  it("keeps at most 256 incremental chunks through 300 writes by 30 openings, losing none", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-compact-"));
    dirs.push(dir);
    const first = await open(dir, "agent:a", true);
    expect(
      (await first.store.add({ layer: "slot", name: "big", body: `Text = "${noise(900_000)}"` })).ok,
    ).toBe(true);
    await first.close();
    let most = 0;
    // As calls in their own process write: each opening takes in every chunk, then writes ten.
    for (let round = 0; round < 30; round++) {
      const w = await open(dir, round % 2 === 0 ? "agent:a" : "agent:b");
      for (let i = 0; i < 10; i++) {
        const r = await w.store.add({ layer: "slot", name: `s${round}x${i}`, body: `Int = ${i}` });
        expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
        most = Math.max(most, chunks(dir).incremental);
      }
      await w.close();
    }
    // automerge-repo alone keeps them all: 300 small chunks never outweigh the snapshot.
    expect(most).toBeLessThanOrEqual(257);
    expect(chunks(dir).incremental).toBeLessThan(300 - 256);
    // A fresh open holds every write; so does the readable op log, which vouches for the chunks now on disk.
    const again = await open(dir, "agent:c");
    expect(again.store.read().definitions()).toHaveLength(301);
    const ops = again.store.status().ops;
    await again.close();
    const fast = await readWorkspaceOps(dir);
    if (!fast.ok) throw new Error(fast.error.message);
    expect(fast.value.ops?.length).toBe(ops);
  }, 120_000);
});
