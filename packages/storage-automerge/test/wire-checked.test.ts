/**
 * op-log.jsonl's sidecar says whether every line passed the op wire schema when it was written
 * (under core's WIRE_SCHEMA_VERSION), and the read path's fold then skips checking them again: a
 * tenth of a read's CPU at 20,000 definitions. An op that fails the schema must still be
 * quarantined by every reader, as a full open quarantines it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore, type StoredOp, WIRE_SCHEMA_VERSION } from "@kumiki-graph/core/read";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";
import { openWorkspaceReader } from "../src/workspace.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function open(dir: string, create = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, { author: "agent:test", ...(create ? { create: true } : {}) });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** A workspace holding two slots, closed (op-log.jsonl current). */
async function workspace(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-wire-"));
  dirs.push(dir);
  const ws = await open(dir, true);
  for (const name of ["a", "b"])
    expect((await ws.store.add({ layer: "slot", name, body: "Int = 0" })).ok).toBe(true);
  await ws.close();
  return dir;
}

const sidecar = (dir: string) =>
  JSON.parse(fs.readFileSync(path.join(dir, ".kumiki", "op-log.jsonl.state"), "utf8")) as Record<
    string,
    unknown
  >;

/** What the read path reads: its ops, how many it says were checked, and its store's quarantined op-ids. */
async function readPath(dir: string) {
  const read = await readWorkspaceOps(dir);
  if (!read.ok || read.value.ops === undefined) throw new Error("the read path did not serve");
  const ops = read.value.ops;
  const reader = await openWorkspaceReader(dir);
  if (!reader.ok || !reader.value.snapshot) throw new Error("the reader did not serve from op-log.jsonl");
  const store = openStore({ log: reader.value.log, author: "agent:reader" });
  if (!store.ok) throw new Error(store.error.message);
  const quarantined = store.value.status().quarantined.map((q) => q.opId);
  await store.value.close();
  return { ops, wireChecked: read.value.wireChecked, quarantined };
}

describe("ops checked against the wire schema when op-log.jsonl was written", () => {
  it("are counted by the read path and folded unchecked, to the same graph", async () => {
    const dir = await workspace();
    expect(sidecar(dir).wire).toBe(WIRE_SCHEMA_VERSION);
    const read = await readPath(dir);
    expect(read.wireChecked).toBe(read.ops.length);
    expect(read.ops).toHaveLength(2);
    expect(read.quarantined).toEqual([]);
  });

  it("are none when a stored op fails the schema: every reader quarantines it, as the full open does", async () => {
    const dir = await workspace();
    const ws = await open(dir);
    const last = ws.workspace.log.all().at(-1)!;
    // Past the store (which refuses it), straight into the log: an op of a kind no schema knows,
    // its op-id just after the last one's (so the writes after it append to op-log.jsonl).
    const id = `${last["op-id"].slice(0, -1)}Z`;
    const bad = { ...last, "op-id": id, op: "teleport" } as StoredOp;
    await ws.workspace.log.append([bad]);
    const full = ws.store.status().quarantined.map((q) => q.opId);
    expect(full).toEqual([bad["op-id"]]);
    await ws.close();
    const unsound = async () => {
      const side = sidecar(dir);
      expect(side.wire).toBeUndefined();
      expect(side.notWire).toBe(WIRE_SCHEMA_VERSION);
      const read = await readPath(dir);
      expect(read.ops.map((op) => op["op-id"])).toContain(bad["op-id"]);
      expect(read.wireChecked).toBe(0);
      expect(read.quarantined).toEqual(full);
    };
    await unsound();
    // Later writes append sound lines to a file that holds an unsound one: still none.
    for (const name of ["c", "d"]) {
      const again = await open(dir);
      expect((await again.store.add({ layer: "slot", name, body: "Int = 0" })).ok).toBe(true);
      await again.close();
      await unsound();
    }
  });

  it("are judged whole, once, by the next writer when an older version wrote the sidecar", async () => {
    const dir = await workspace();
    // A sidecar as a version without the record wrote it (its stamps still match the file).
    const file = path.join(dir, ".kumiki", "op-log.jsonl.state");
    const { wire: _, ...older } = sidecar(dir);
    fs.writeFileSync(file, `${JSON.stringify(older)}\n`);
    expect((await readPath(dir)).wireChecked).toBe(0);
    const ws = await open(dir);
    expect((await ws.store.add({ layer: "slot", name: "c", body: "Int = 0" })).ok).toBe(true);
    await ws.close();
    expect(sidecar(dir).wire).toBe(WIRE_SCHEMA_VERSION);
    const read = await readPath(dir);
    expect(read.wireChecked).toBe(read.ops.length);
  });
});
