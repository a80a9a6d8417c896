/**
 * op-log.jsonl's sidecar vouches only for sound chunks: a writer that holds the document in memory
 * and closes after a chunk was damaged in place under it (cut short, a byte flipped) leaves a file
 * no reader serves, so the next open names the damage instead of reading past it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chunkFiles } from "@kumiki-graph/test-support/files";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore } from "../src/open-store.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const DAMAGE: Record<string, (file: string) => void> = {
  "cut short": (file) => fs.truncateSync(file, fs.statSync(file).size - 7),
  "a byte flipped": (file) => {
    const data = fs.readFileSync(file);
    data[Math.floor(data.length / 2)]! ^= 0x5a;
    fs.writeFileSync(file, data);
  },
};

describe("what op-log.jsonl's sidecar vouches for", () => {
  for (const [kind, damage] of Object.entries(DAMAGE)) {
    it(`not a chunk ${kind} under an open writer`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-vouch-"));
      dirs.push(dir);
      const made = await openWorkspaceStore(dir, { author: "agent:a", create: true, checker: false });
      if (!made.ok) throw new Error(made.error.message);
      const ws = made.value;
      for (const name of ["a", "b"])
        expect((await ws.store.add({ layer: "slot", name, body: "Int = 1" })).ok).toBe(true);
      const read = await readWorkspaceOps(dir);
      expect(read.ok && read.value.ops?.length).toBe(2);
      for (const file of chunkFiles(path.join(dir, ".kumiki", "automerge"))) damage(file);
      await ws.close();
      // The writer's close rewrote the sidecar; it lists no damaged file, so the read path declines.
      const after = await readWorkspaceOps(dir);
      expect(after.ok && after.value.ops).toBeUndefined();
      const again = await openWorkspaceStore(dir, { author: "agent:a", checker: false });
      if (!again.ok) throw new Error(again.error.message);
      expect(again.value.workspace.log.damage).toBeDefined();
      // Nothing read past: both ops are there (from op-log.jsonl), writes refused until repaired.
      expect(again.value.store.read().definitions()).toHaveLength(2);
      await again.value.close();
    });
  }
});

describe("op-log.jsonl's bytes, read when a reader first asks for ops", () => {
  async function twoSlots(): Promise<{ dir: string; ws: Awaited<ReturnType<typeof openWorkspaceStore>> }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-vouch-"));
    dirs.push(dir);
    const ws = await openWorkspaceStore(dir, { author: "agent:a", create: true, checker: false });
    if (!ws.ok) throw new Error(ws.error.message);
    for (const name of ["a", "b"])
      expect((await ws.value.store.add({ layer: "slot", name, body: "Int = 1" })).ok).toBe(true);
    return { dir, ws };
  }

  it("are none once a writer appended after the read (the caller opens in full): never the new file under the old state", async () => {
    const { dir, ws } = await twoSlots();
    if (!ws.ok) throw new Error(ws.error.message);
    const read = await readWorkspaceOps(dir);
    if (!read.ok) throw new Error(read.error.message);
    const state = read.value.state;
    expect(state).toBeDefined();
    // Another writer's append lands between the read (under the lock) and the first look at ops.
    expect((await ws.value.store.add({ layer: "slot", name: "c", body: "Int = 1" })).ok).toBe(true);
    expect(read.value.ops).toBeUndefined();
    const again = await readWorkspaceOps(dir);
    expect(again.ok && again.value.ops?.map((op) => (op as { name?: string }).name)).toEqual(["a", "b", "c"]);
    expect(again.ok && again.value.state).not.toBe(state);
    await ws.value.close();
  });

  it("are not read by a reader that asks only for the state (a check answered from its cache)", async () => {
    const { dir, ws } = await twoSlots();
    if (!ws.ok) throw new Error(ws.error.message);
    await ws.value.close();
    const read = await readWorkspaceOps(dir);
    if (!read.ok) throw new Error(read.error.message);
    // Gone after the read: the state was vouched for from the sidecar and the chunk listing alone.
    fs.rmSync(path.join(dir, ".kumiki", "op-log.jsonl"));
    expect(read.value.state).toBeDefined();
    expect(read.value.ops).toBeUndefined();
  });

  it("are the vouched ops when nothing changed", async () => {
    const { dir, ws } = await twoSlots();
    if (!ws.ok) throw new Error(ws.error.message);
    const read = await readWorkspaceOps(dir);
    expect(read.ok && read.value.ops?.map((op) => (op as { name?: string }).name)).toEqual(["a", "b"]);
    expect(read.ok && read.value.wireChecked).toBe(2);
    await ws.value.close();
  });
});
