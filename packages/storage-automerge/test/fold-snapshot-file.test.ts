/**
 * A write in a process of its own takes its graph up from op-log.jsonl's fold kept in
 * `.kumiki/cache/fold.jsonl` (fold-snapshot-file.ts) instead of parsing and folding every op: the
 * first write of a state of the file folds and keeps it, the next ones read only the rows they
 * look at; a snapshot of another state, of another build, or damaged is never taken.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type FoldSnapshot, openStore, SnapshotOpLog } from "@kumiki-graph/core";
import { afterEach, describe, expect, it } from "vitest";
import { heldBySnapshot } from "../src/fold-snapshot-file.js";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";
import { openQuickWrite, type QuickWorkspaceStore } from "../src/quick-write.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function open(dir: string, create = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, { author: "agent:full", ...(create ? { create: true } : {}) });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** A quick write of the build `stamp` (null: no stamp, and so no snapshot). */
async function quick(dir: string, stamp: string | null = "build-1"): Promise<QuickWorkspaceStore> {
  const r = await openQuickWrite(dir, {
    author: "agent:quick",
    validators: [],
    checker: true,
    ...(stamp === null ? {} : { checkStamp: stamp }),
  });
  if (r === undefined) throw new Error("the quick write declined");
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** A workspace holding a few slots and a type they use, closed (its op-log.jsonl current). */
async function workspace(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-fold-snap-"));
  dirs.push(dir);
  const ws = await open(dir, true);
  expect((await ws.store.add({ layer: "type", name: "Count", body: "= Int" })).ok).toBe(true);
  for (const name of ["a", "b", "c"])
    expect((await ws.store.add({ layer: "slot", name, body: "Count = 0" })).ok).toBe(true);
  await ws.close();
  return dir;
}

const snapshotFile = (dir: string) => path.join(dir, ".kumiki", "cache", "fold.jsonl");

/**
 * Rewrites slot `name`'s text in the kept snapshot (its row and nothing else, as many bytes as
 * before: the label says each row's length): visible only to a graph taken up from it.
 */
function plant(dir: string, name: string, from: string, to: string): void {
  expect(Buffer.byteLength(to)).toBe(Buffer.byteLength(from));
  const lines = fs.readFileSync(snapshotFile(dir), "utf8").split("\n");
  const at = lines.findIndex((l, i) => i > 1 && l.includes(`slot ${name} : ${from}`));
  expect(at).toBeGreaterThan(1);
  lines[at] = lines[at]!.replace(`slot ${name} : ${from}`, `slot ${name} : ${to}`);
  fs.writeFileSync(snapshotFile(dir), lines.join("\n"));
}

const textOf = (w: QuickWorkspaceStore, name: string) => w.store.read().lookup("slot", name)?.text;

describe("heldBySnapshot", () => {
  it("answers for the snapshot's ops, not those a graph taken up from it appended to its arrays", () => {
    const ids = ["op_b", "op_d"];
    const snapshot = { head: { causal: { ids } }, rows: 0, row: () => "" } as unknown as FoldSnapshot;
    const held = heldBySnapshot(snapshot);
    // A graph taken up from the snapshot places a pending op (of a clock behind) on the same array.
    ids.push("op_a");
    expect([
      held.count,
      held.holds("op_b"),
      held.holds("op_d"),
      held.holds("op_a"),
      held.holds("op_z"),
    ]).toEqual([2, true, true, false, false]);
  });
});

describe("a quick write over a kept fold snapshot", () => {
  it("keeps op-log.jsonl's fold at the first write and takes its graph up from it at the next", async () => {
    const dir = await workspace();
    const w1 = await quick(dir);
    expect((await w1.store.add({ layer: "slot", name: "d", body: "Count = 1" })).ok).toBe(true);
    await w1.close();
    const [label] = fs.readFileSync(snapshotFile(dir), "utf8").split("\n");
    expect(JSON.parse(label!)).toMatchObject({ v: 1, stamp: "build-1" });
    // Proof that the next write reads the snapshot, not op-log.jsonl: a text planted in it shows.
    plant(dir, "a", "Count = 0", "Count = 4");
    const w2 = await quick(dir);
    expect(textOf(w2, "a")).toContain("Count = 4");
    // The write is judged and stored on top of it, with the pending write before it.
    expect((await w2.store.add({ layer: "slot", name: "e", body: "Count = 2" })).ok).toBe(true);
    expect((await w2.store.add({ layer: "slot", name: "d", body: "Count = 3" })).ok).toBe(false);
    expect(w2.written().map((o) => (o as { name?: string }).name)).toEqual(["e"]);
    await w2.close();
    // The document holds what was written, and op-log.jsonl's own text (the plant was a cache's).
    const full = await open(dir);
    const shown = full.store.read().definitions();
    expect(shown.map((d) => d.name).sort()).toEqual(["Count", "a", "b", "c", "d", "e"]);
    expect(full.store.read().lookup("slot", "a")?.text).toContain("Count = 0");
    await full.close();
  });

  it("answers as a graph folded from op-log.jsonl: the same definitions, refusals and check", async () => {
    // Two workspaces of the same writes: one writes through the snapshot, the other without a
    // stamp (no snapshot: the fold of op-log.jsonl).
    const [dir, other] = [await workspace(), await workspace()];
    for (const [d, stamp] of [
      [dir, "build-1"],
      [other, null],
    ] as const) {
      const w = await quick(d, stamp);
      await w.store.add({ layer: "slot", name: "d", body: "Count = 1" });
      await w.close();
    }
    expect(fs.existsSync(snapshotFile(dir))).toBe(true);
    expect(fs.existsSync(snapshotFile(other))).toBe(false);
    const writes = async (w: QuickWorkspaceStore) => {
      const out = [
        await w.store.replace({ qname: "slot.b", body: "Count = 7" }),
        await w.store.rename({ qname: "type.Count", newName: "Total" }),
        await w.store.add({ layer: "slot", name: "f", body: "Nope = 1" }),
        // A type error only the checker sees (the gate resumed over the snapshot's graph).
        await w.store.replace({ qname: "slot.a", body: 'Total = "x"' }),
        await w.store.remove({ qname: "slot.c" }),
      ].map((r) => (r.ok ? "ok" : r.error.code));
      return {
        out,
        defs: w.store
          .read()
          .definitions()
          .map((d) => [d.qname, d.text]),
      };
    };
    const viaSnapshot = await quick(dir);
    const viaFold = await quick(other, null);
    const [a, b] = [await writes(viaSnapshot), await writes(viaFold)];
    expect(a).toEqual(b);
    expect(a.out).toEqual(["ok", "ok", "undefined-reference", "validation-failed", "ok"]);
    await viaSnapshot.close();
    await viaFold.close();
  });

  it("reads every row when the graph is walked, past the rows it reads one at a time", async () => {
    const dir = await workspace();
    const ws = await open(dir);
    const many = Array.from({ length: 80 }, (_, i) => ({
      op: "add" as const,
      layer: "slot" as const,
      name: `s${i}`,
      body: `Count = ${i}`,
    }));
    expect((await ws.store.apply(many)).ok).toBe(true);
    await ws.close();
    const w1 = await quick(dir);
    await w1.store.add({ layer: "slot", name: "d", body: "Count = 1" });
    await w1.close();
    plant(dir, "s70", "Count = 70", "Count = 77");
    const w = await quick(dir);
    const defs = w.store.read().definitions();
    expect(defs).toHaveLength(85);
    expect(defs.find((d) => d.name === "s70")?.text).toContain("Count = 77");
    expect(defs.find((d) => d.name === "s69")?.text).toContain("Count = 69");
    await w.close();
  });

  it("seeds a read store over op-log.jsonl (the read path) too, with the pending writes after it", async () => {
    const dir = await workspace();
    const w1 = await quick(dir);
    await w1.store.add({ layer: "slot", name: "d", body: "Count = 1" });
    await w1.close();
    const w2 = await quick(dir);
    await w2.store.replace({ qname: "slot.b", body: "Count = 2" });
    await w2.close();
    plant(dir, "a", "Count = 0", "Count = 4");
    const readStore = async (stamp: string) => {
      const read = await readWorkspaceOps(dir);
      if (!read.ok) throw new Error(read.error.message);
      const held = read.value;
      const log = new SnapshotOpLog(() => held.ops!, { seed: () => held.fold?.(stamp) });
      const opened = openStore({ log, author: "agent:read" });
      if (!opened.ok) throw new Error(opened.error.message);
      const defs = opened.value
        .read()
        .definitions()
        .map((d) => [d.qname, d.text.trim()]);
      await opened.value.close();
      return defs;
    };
    const seeded = await readStore("build-1");
    // Taken up from the snapshot (the plant shows), the two pending writes on top of it.
    expect(seeded).toContainEqual(["slot.a", "slot a : Count = 4"]);
    expect(seeded).toContainEqual(["slot.b", "slot b : Count = 2"]);
    expect(seeded).toContainEqual(["slot.d", "slot d : Count = 1"]);
    // Another build's store folds op-log.jsonl: the same but for the plant.
    const folded = await readStore("build-2");
    expect(folded.map(([q, t]) => (q === "slot.a" ? [q, "slot a : Count = 4"] : [q, t]))).toEqual(seeded);
  });

  it("is not taken of another state of op-log.jsonl, of another build, or when it does not read", async () => {
    const dir = await workspace();
    const w1 = await quick(dir);
    await w1.store.add({ layer: "slot", name: "d", body: "Count = 1" });
    await w1.close();
    plant(dir, "a", "Count = 0", "Count = 4");
    const planted = fs.readFileSync(snapshotFile(dir));
    // Another build: folds op-log.jsonl, and keeps its own snapshot in place of the other's.
    const other = await quick(dir, "build-2");
    expect(textOf(other, "a")).toContain("Count = 0");
    await other.close();
    // The planted snapshot as it was (taken: the plant shows), then damaged (not taken): a row
    // cut; a head that does not fit its rows (an op held by row 9 of 5, as many bytes).
    const cut = (b: Buffer) => b.subarray(0, b.length - 20);
    const misfit = (b: Buffer) => Buffer.from(b.toString("utf8").replace('"owner":[0', '"owner":[9'));
    expect(misfit(planted).equals(planted)).toBe(false);
    let value = 5;
    for (const [bytes, shows] of [
      [planted, "Count = 4"],
      [cut(planted), "Count = 0"],
      [misfit(planted), "Count = 0"],
    ] as const) {
      fs.writeFileSync(snapshotFile(dir), bytes);
      const w = await quick(dir);
      expect(textOf(w, "a")).toContain(shows);
      const r = await w.store.replace({ qname: "slot.b", body: `Count = ${value++}` });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      await w.close();
    }
    // A full open folds the pending writes into the document: op-log.jsonl is of another state.
    fs.writeFileSync(snapshotFile(dir), planted);
    await (await open(dir)).close();
    const after = await quick(dir);
    expect(textOf(after, "a")).toContain("Count = 0");
    await after.close();
  });
});
