/**
 * A write that does not load the Automerge document (quick-write.ts) is judged against everything
 * stored, is stored before it is answered, is seen by every reader at once, and is folded into the
 * document by the next log that opens, fences or closes it — once, in the order written, with
 * nothing lost whatever else happens meanwhile.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chunkFiles } from "@kumiki-graph/test-support/files";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";
import { PendingBundles } from "../src/pending-bundles.js";
import { openQuickWrite, PENDING_MOST, type QuickWorkspaceStore } from "../src/quick-write.js";
import { repairWorkspace } from "../src/repair.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function open(dir: string, author = "agent:full", create = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, { author, ...(create ? { create: true } : {}) });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

async function quick(dir: string, author = "agent:quick"): Promise<QuickWorkspaceStore> {
  const r = await openQuickWrite(dir, { author, validators: [], checker: true });
  if (r === undefined) throw new Error("the quick write declined");
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** A workspace holding two slots, closed (its op-log.jsonl current). */
async function workspace(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-quick-"));
  dirs.push(dir);
  const ws = await open(dir, "agent:full", true);
  for (const name of ["a", "b"])
    expect((await ws.store.add({ layer: "slot", name, body: "Int = 0" })).ok).toBe(true);
  await ws.close();
  return dir;
}

const pendingFiles = (dir: string) => new PendingBundles(path.join(dir, ".kumiki", "automerge")).names();
const names = (ops: readonly { readonly "op-id": string }[] | undefined) =>
  (ops ?? []).map((op) => (op as { name?: string }).name).filter((n) => n !== undefined);

describe("a write without the Automerge document", () => {
  it("is stored as a pending bundle, read at once by readers, and judged against it", async () => {
    const dir = await workspace();
    const opLog = fs.readFileSync(path.join(dir, ".kumiki", "op-log.jsonl"));
    const before = await readWorkspaceOps(dir);
    const w = await quick(dir);
    const added = await w.store.add({ layer: "slot", name: "c", body: "Int = 1" });
    expect(added.ok, added.ok ? "" : added.error.message).toBe(true);
    // The checker judged it: a body that does not type is refused, and nothing is stored for it.
    const bad = await w.store.add({ layer: "slot", name: "d", body: 'Int = "no"' });
    expect(bad.ok).toBe(false);
    await w.close();
    expect(pendingFiles(dir)).toHaveLength(1);
    // op-log.jsonl is as it was; the read path shows the write, in another state.
    expect(fs.readFileSync(path.join(dir, ".kumiki", "op-log.jsonl")).equals(opLog)).toBe(true);
    const after = await readWorkspaceOps(dir);
    expect(names(after.ok ? after.value.ops : undefined)).toEqual(["a", "b", "c"]);
    expect(after.ok && after.value.state).not.toBe(before.ok && before.value.state);
    // The next quick write reads the first: the name is taken.
    const w2 = await quick(dir);
    expect(
      w2.store
        .read()
        .definitions()
        .map((d) => d.name),
    ).toEqual(["a", "b", "c"]);
    expect((await w2.store.add({ layer: "slot", name: "c", body: "Int = 2" })).ok).toBe(false);
    await w2.close();
  });

  it("is folded into the document by the next open, once and in order, and op-log.jsonl then holds it", async () => {
    const dir = await workspace();
    for (const name of ["c", "d", "e"]) {
      const w = await quick(dir);
      expect((await w.store.add({ layer: "slot", name, body: "Int = 1" })).ok).toBe(true);
      await w.close();
    }
    const read = await readWorkspaceOps(dir);
    const seen = (read.ok ? read.value.ops : undefined)?.map((op) => op["op-id"]);
    expect(pendingFiles(dir)).toHaveLength(3);
    const full = await open(dir);
    expect(pendingFiles(dir)).toHaveLength(0);
    expect(full.workspace.log.all().map((op) => op["op-id"])).toEqual(seen);
    await full.close();
    // The readable op log vouches for the document again, with every op.
    const again = await readWorkspaceOps(dir);
    expect((again.ok ? again.value.ops : undefined)?.map((op) => op["op-id"])).toEqual(seen);
    const reopened = await open(dir);
    expect(reopened.workspace.log.all()).toHaveLength(seen!.length);
    await reopened.close();
  });

  it("reaches a store that is open already at its next read, as others' ops, and its fence folds it in", async () => {
    const dir = await workspace();
    const live = await open(dir, "agent:live");
    const heard: string[] = [];
    live.workspace.log.onRemote((ops) => heard.push(...names(ops)));
    const w = await quick(dir);
    expect((await w.store.add({ layer: "slot", name: "c", body: "Int = 1" })).ok).toBe(true);
    await w.close();
    // A read, synchronous as every read is, takes it in (the document does not hold it yet).
    const shown = live.store.read().definitions();
    expect(shown.map((d) => d.name)).toContain("c");
    expect(heard).toEqual(["c"]);
    expect(live.workspace.log.pendingHeld()).toEqual(pendingFiles(dir));
    await live.store.fence();
    expect(heard).toEqual(["c"]); // announced once
    expect(live.workspace.log.pendingHeld()).toEqual([]);
    expect(pendingFiles(dir)).toHaveLength(0);
    // Its own next write goes after it.
    expect((await live.store.add({ layer: "slot", name: "d", body: "Int = 1" })).ok).toBe(true);
    await live.close();
    const read = await readWorkspaceOps(dir);
    expect(names(read.ok ? read.value.ops : undefined)).toEqual(["a", "b", "c", "d"]);
  });

  it("is shown by a read-only open (no write access), at open and at each read, and left for a writer to fold", async () => {
    const dir = await workspace();
    const w = await quick(dir);
    expect((await w.store.add({ layer: "slot", name: "c", body: "Int = 1" })).ok).toBe(true);
    await w.close();
    const reader = await openWorkspaceStore(dir, { author: "agent:reader", readOnly: true });
    if (!reader.ok) throw new Error(reader.error.message);
    const shown = () =>
      reader.value.store
        .read()
        .definitions()
        .map((d) => d.name);
    expect(shown()).toEqual(["a", "b", "c"]);
    // A write made while it is open is shown at its next read.
    const w2 = await quick(dir);
    expect((await w2.store.add({ layer: "slot", name: "d", body: "Int = 1" })).ok).toBe(true);
    await w2.close();
    expect(shown()).toEqual(["a", "b", "c", "d"]);
    // It folds nothing (it may write nothing): the files wait for a writer, and its writes are refused.
    await reader.value.store.fence();
    expect(pendingFiles(dir)).toHaveLength(2);
    expect((await reader.value.store.add({ layer: "slot", name: "e", body: "Int = 1" })).ok).toBe(false);
    await reader.value.close();
    expect(pendingFiles(dir)).toHaveLength(2);
    const full = await open(dir);
    expect(pendingFiles(dir)).toHaveLength(0);
    expect(names(full.workspace.log.all())).toEqual(["a", "b", "c", "d"]);
    await full.close();
  });

  it("is judged against by a store that is open already, without a fence: one name, one writer", async () => {
    const dir = await workspace();
    const live = await open(dir, "agent:live");
    const w = await quick(dir);
    expect((await w.store.add({ layer: "slot", name: "c", body: "Int = 1" })).ok).toBe(true);
    await w.close();
    // The open store's write takes the lock, folds the pending bundle in, and sees the name taken.
    const again = await live.store.add({ layer: "slot", name: "c", body: "Int = 2" });
    expect(again.ok).toBe(false);
    expect(
      live.store
        .read()
        .definitions()
        .filter((d) => d.name === "c"),
    ).toHaveLength(1);
    await live.close();
  });

  it("removes a bundle whose ops the document holds already, without a second copy (a fold cut short)", async () => {
    const dir = await workspace();
    const w = await quick(dir);
    expect((await w.store.add({ layer: "slot", name: "c", body: "Int = 1" })).ok).toBe(true);
    await w.close();
    const [name] = pendingFiles(dir);
    const pendingDir = path.join(dir, ".kumiki", "automerge", "pending");
    const text = fs.readFileSync(path.join(pendingDir, name!));
    const full = await open(dir);
    await full.close();
    // As if the fold had stored the change and died before removing the file.
    fs.mkdirSync(pendingDir, { recursive: true });
    fs.writeFileSync(path.join(pendingDir, name!), text);
    // A quick write before the next fold reads the ops the file repeats once, and writes after them.
    const q = await quick(dir);
    expect(names(q.ops())).toEqual(["a", "b", "c"]);
    expect((await q.store.add({ layer: "slot", name: "d", body: "Int = 2" })).ok).toBe(true);
    expect(names(q.ops())).toEqual(["a", "b", "c", "d"]);
    await q.close();
    const again = await open(dir);
    expect(names(again.workspace.log.all())).toEqual(["a", "b", "c", "d"]);
    expect(pendingFiles(dir)).toHaveLength(0);
    await again.close();
  });

  it("declines when the files cannot show what is stored, and leaves a bundle that does not parse alone", async () => {
    const dir = await workspace();
    const opLog = path.join(dir, ".kumiki", "op-log.jsonl");
    const text = fs.readFileSync(opLog);
    fs.appendFileSync(opLog, "\n");
    expect(await openQuickWrite(dir, { author: "agent:q", validators: [], checker: true })).toBeUndefined();
    // The full open takes over (and brings the file up to date).
    const full = await open(dir);
    await full.close();
    expect(fs.readFileSync(opLog).equals(text)).toBe(true);
    const pendingDir = path.join(dir, ".kumiki", "automerge", "pending");
    fs.mkdirSync(pendingDir, { recursive: true });
    const broken = path.join(pendingDir, "op_X-0123456789abcdef.json");
    fs.writeFileSync(broken, "[{");
    expect(await openQuickWrite(dir, { author: "agent:q", validators: [], checker: true })).toBeUndefined();
    const again = await open(dir);
    expect(names(again.workspace.log.all())).toEqual(["a", "b"]);
    await again.close();
    expect(fs.readFileSync(broken, "utf8")).toBe("[{");
  });

  it("refuses a write whose storing fails after its file was renamed into place, and leaves no file for a fold", async () => {
    const dir = await workspace();
    const generation = path.join(dir, ".kumiki", "automerge", ".generation");
    fs.rmSync(generation, { force: true });
    fs.mkdirSync(generation); // moving the token fails (EISDIR), after the bundle's rename
    const w = await quick(dir);
    const added = await w.store.add({ layer: "slot", name: "c", body: "Int = 1" }).catch((e: Error) => e);
    expect(added instanceof Error || !added.ok).toBe(true);
    await w.close();
    expect(pendingFiles(dir)).toEqual([]);
    fs.rmdirSync(generation);
    const read = await readWorkspaceOps(dir);
    expect(names(read.ok ? read.value.ops : undefined)).toEqual(["a", "b"]);
  });

  it("names its state as the read path does, whatever order its own file sorts in", async () => {
    const dir = await workspace();
    // A waiting write whose file sorts after the next one's (as a file of a process whose clock ran
    // ahead would): the state lists the files in name order either way.
    const pendingDir = path.join(dir, ".kumiki", "automerge", "pending");
    fs.mkdirSync(pendingDir, { recursive: true });
    fs.writeFileSync(path.join(pendingDir, "op_ZZZZ-0123456789abcdef.json"), '[{"op-id":"op_ZZZZ"}]');
    const w = await quick(dir);
    expect((await w.store.add({ layer: "slot", name: "c", body: "Int = 1" })).ok).toBe(true);
    const state = w.state();
    await w.close();
    const read = await readWorkspaceOps(dir);
    expect(read.ok && read.value.state).toBe(state);
  });

  it(`declines once ${PENDING_MOST} bundles wait, so that the full open folds them`, async () => {
    const dir = await workspace();
    const w = await quick(dir);
    for (let i = 0; i < PENDING_MOST; i++)
      expect((await w.store.add({ layer: "slot", name: `s${i}`, body: "Int = 1" })).ok).toBe(true);
    await w.close();
    expect(pendingFiles(dir)).toHaveLength(PENDING_MOST);
    expect(await openQuickWrite(dir, { author: "agent:q", validators: [], checker: true })).toBeUndefined();
    const full = await open(dir);
    expect(full.store.read().definitions()).toHaveLength(PENDING_MOST + 2);
    await full.close();
    expect(pendingFiles(dir)).toHaveLength(0);
  });
});

describe("pending writes and a repair", () => {
  it("a workspace repaired while writes wait beside its document keeps every one, once", async () => {
    const dir = await workspace();
    for (const name of ["c", "d"]) {
      const w = await quick(dir);
      expect((await w.store.add({ layer: "slot", name, body: "Int = 1" })).ok).toBe(true);
      await w.close();
    }
    // A chunk cut short: the document is damaged, the pending writes wait.
    const storage = path.join(dir, ".kumiki", "automerge");
    for (const file of chunkFiles(storage)) fs.truncateSync(file, fs.statSync(file).size - 7);
    const damaged = await open(dir);
    expect(damaged.workspace.log.damage).toBeDefined();
    expect(names(damaged.workspace.log.all()).sort()).toEqual(["a", "b", "c", "d"]);
    await damaged.close();
    const repaired = await repairWorkspace(dir);
    expect(repaired.ok, repaired.ok ? "" : repaired.error.message).toBe(true);
    // The report counts them: nothing in sound chunks, two from op-log.jsonl, two that waited.
    expect(repaired.ok && repaired.value).toMatchObject({
      before: 0,
      fromOpLog: 2,
      fromPending: 2,
      after: 4,
    });
    const after = await open(dir);
    expect(after.workspace.log.damage).toBeUndefined();
    const held = after.workspace.log.all();
    expect(names(held).sort()).toEqual(["a", "b", "c", "d"]);
    expect(new Set(held.map((o) => o["op-id"])).size).toBe(held.length);
    await after.close();
    expect(pendingFiles(dir)).toEqual([]);
  });
});
