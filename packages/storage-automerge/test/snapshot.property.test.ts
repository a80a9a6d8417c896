import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore, type StoredOp } from "@kumiki-graph/core";
import { chunkFiles } from "@kumiki-graph/test-support/files";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { initWorkspace, openWorkspace, openWorkspaceReader } from "../src/workspace.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-snap-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const op = (n: number): StoredOp & Record<string, unknown> => ({
  "op-id": `op_01JC${String(n).padStart(22, "0")}`,
  op: "add",
  body: `Int = ${n}`,
});

/** A workspace holding `n` ops appended in bundles of 3, closed. */
async function seeded(n: number): Promise<string> {
  const dir = tempDir();
  const ws = await initWorkspace(dir);
  if (!ws.ok) throw new Error(ws.error.message);
  for (let i = 0; i < n; i += 3)
    await ws.value.log.append(Array.from({ length: Math.min(3, n - i) }, (_, k) => op(i + k)));
  await ws.value.log.close();
  return dir;
}

async function read(dir: string) {
  const r = await openWorkspaceReader(dir);
  if (!r.ok) throw new Error(r.error.message);
  const ids = r.value.log
    .all()
    .map((o) => o["op-id"])
    .sort();
  await r.value.log.close();
  return { snapshot: r.value.snapshot, ids };
}

async function full(dir: string): Promise<string[]> {
  const r = await openWorkspace(dir);
  if (!r.ok) throw new Error(r.error.message);
  const ids = r.value.log
    .all()
    .map((o) => o["op-id"])
    .sort();
  await r.value.log.close();
  return ids;
}

/** Copies into `to` every chunk file of `from`'s storage that `to` lacks (a peer's flushed change). */
function copyMissingChunks(from: string, to: string): number {
  let copied = 0;
  const walk = (rel: string) => {
    const src = path.join(from, ".kumiki", "automerge", rel);
    for (const e of fs.readdirSync(src, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const r = path.join(rel, e.name);
      const dst = path.join(to, ".kumiki", "automerge", r);
      if (e.isDirectory()) walk(r);
      else if (/(snapshot|incremental)$/.test(rel) && !fs.existsSync(dst)) {
        fs.mkdirSync(path.dirname(dst), { recursive: true });
        fs.copyFileSync(path.join(src, e.name), dst);
        copied++;
      }
    }
  };
  walk("");
  return copied;
}

describe("reading a workspace from its verified op-log.jsonl", () => {
  it("reads the stored ops without loading the document after a clean close", async () => {
    const dir = await seeded(10);
    const r = await read(dir);
    expect(r.snapshot).toBe(true);
    expect(r.ids).toEqual(await full(dir));
    expect(r.ids).toHaveLength(10);
  });

  it("loads the document instead when op-log.jsonl was edited by hand", async () => {
    const dir = await seeded(6);
    fs.appendFileSync(path.join(dir, ".kumiki", "op-log.jsonl"), `${JSON.stringify(op(99))}\n`);
    const r = await read(dir);
    expect(r.snapshot).toBe(false);
    expect(r.ids).not.toContain(op(99)["op-id"]);
    expect(r.ids).toHaveLength(6);
  });

  it("loads the document instead when storage holds a chunk the file was not derived from", async () => {
    const dir = await seeded(6);
    // Another writer's change, stored but never mirrored (a peer's ops flushed by automerge-repo).
    const other = tempDir();
    fs.cpSync(dir, other, { recursive: true });
    const ws = await openWorkspace(other);
    if (!ws.ok) throw new Error(ws.error.message);
    await ws.value.log.append([op(50)]);
    await ws.value.log.close();
    expect(copyMissingChunks(other, dir)).toBeGreaterThan(0);
    const r = await read(dir);
    expect(r.snapshot).toBe(false);
    expect(r.ids).toContain(op(50)["op-id"]);
  });

  it("loads the document instead when a chunk was damaged in place, so the damage is seen", async () => {
    for (const damage of ["cut", "emptied", "overwritten"] as const) {
      const dir = await seeded(6);
      const victim = chunkFiles(path.join(dir, ".kumiki", "automerge")).at(-1)!;
      const bytes = fs.readFileSync(victim);
      if (damage === "cut") fs.truncateSync(victim, bytes.length - 5);
      else if (damage === "emptied") fs.writeFileSync(victim, "");
      else {
        bytes[bytes.length >> 1]! ^= 0x5a;
        fs.writeFileSync(victim, bytes);
      }
      const fast = await readWorkspaceOps(dir);
      expect(fast.ok && fast.value.ops, damage).toBeUndefined();
      const r = await openWorkspaceReader(dir);
      if (!r.ok) throw new Error(r.error.message);
      expect(r.value.snapshot, damage).toBe(false);
      expect(r.value.log.damage, damage).toBeDefined();
      await r.value.log.close();
    }
  });

  it("ignores op-log.jsonl written by an older version (its sidecar lists bare chunk names)", async () => {
    const dir = await seeded(4);
    const before = await readWorkspaceOps(dir);
    expect(before.ok && before.value.ops?.length).toBe(4);
    const sidecar = path.join(dir, ".kumiki", "op-log.jsonl.state");
    const side = JSON.parse(fs.readFileSync(sidecar, "utf8")) as { chunks: string[] };
    expect(side.chunks.every((c) => / \d+ \d+$/.test(c))).toBe(true);
    side.chunks = side.chunks.map((c) => c.split(" ")[0]!);
    fs.writeFileSync(sidecar, JSON.stringify(side));
    const fast = await readWorkspaceOps(dir);
    expect(fast.ok && fast.value.ops).toBeUndefined();
    expect(await full(dir)).toHaveLength(4);
  });

  it("serves the first read after a write, and tells a missing workspace as the full open does", async () => {
    const dir = await seeded(3);
    const ws = await openWorkspace(dir);
    if (!ws.ok) throw new Error(ws.error.message);
    await ws.value.log.append([op(40)]);
    await ws.value.log.close();
    const fast = await readWorkspaceOps(dir);
    expect(fast.ok && fast.value.ops?.map((o) => o["op-id"]).sort()).toEqual(await full(dir));
    const none = await readWorkspaceOps(tempDir());
    const opened = await openWorkspace(tempDir());
    expect(none.ok || none.error.code).toBe("no-workspace");
    expect(opened.ok || opened.error.code).toBe("no-workspace");
  });

  it("refuses writes through a snapshot log, changing nothing", async () => {
    const dir = await seeded(3);
    const r = await openWorkspaceReader(dir);
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value.snapshot).toBe(true);
    // A read-only log has no append at all; a store over it refuses writes as a value.
    expect("append" in r.value.log).toBe(false);
    const store = openStore({ log: r.value.log, author: "agent:reader" });
    if (!store.ok) throw new Error(store.error.message);
    const w = await store.value.add({ layer: "slot", name: "more", body: ": Int = 7" });
    expect(w.ok ? "written" : w.error.code).toBe("read-only");
    await r.value.log.close();
    expect(await full(dir)).toHaveLength(3);
  });

  it("always agrees with a full open, whatever was appended and whether the mirror was tampered with", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 12 }), fc.boolean(), async (n, tamper) => {
        const dir = await seeded(n);
        if (tamper) fs.writeFileSync(path.join(dir, ".kumiki", "op-log.jsonl"), "");
        const r = await read(dir);
        expect(r.ids).toEqual(await full(dir));
        expect(r.snapshot).toBe(!tamper);
        fs.rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: 8 },
    );
  });
});
