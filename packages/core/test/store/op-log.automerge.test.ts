import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import { afterEach, describe, expect, it } from "vitest";
import {
  AutomergeOpLog,
  OP_LOG_FORMAT,
  type OpLogDocument,
  OpLogOpenError,
  pushBundle,
} from "../../src/store/automerge-op-log.js";
import type { OpLog, StoredOp } from "../../src/store/op-log.js";
import { openStore } from "../../src/store/store.js";
import { op, runOpLogSuite } from "./op-log.shared.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-oplog-"));
  dirs.push(d);
  return d;
}
async function cleanup(): Promise<void> {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

const where = new WeakMap<OpLog, { directory: string; url: string }>();
async function create(chunkSize?: number): Promise<AutomergeOpLog> {
  const directory = tempDir();
  const log = await AutomergeOpLog.create({ directory, ...(chunkSize ? { chunkSize } : {}) });
  where.set(log, { directory, url: log.url });
  return log;
}
async function openAgain(log: OpLog, chunkSize?: number): Promise<AutomergeOpLog> {
  const w = where.get(log)!;
  const again = await AutomergeOpLog.open({ ...w, ...(chunkSize ? { chunkSize } : {}) });
  where.set(again, w);
  return again;
}

runOpLogSuite("AutomergeOpLog", {
  create: () => create(),
  reopen: async (log) => {
    await log.close();
    return openAgain(log);
  },
  // Another Repo on the same directory stands for another process.
  deliver: async (log, ops) => {
    const other = await openAgain(log);
    await other.append(ops);
    await other.close();
    await (log as AutomergeOpLog).refresh();
  },
  cleanup,
  propertyRuns: 15,
});

describe("AutomergeOpLog", () => {
  afterEach(cleanup);

  it("stores one bundle per append, in chunks, and reads them back in order", async () => {
    const log = await create(3);
    const batches = Array.from({ length: 10 }, (_, i) => (i % 3 === 0 ? [op(i), op(i)] : [op(i)]));
    for (const b of batches) await log.append(b);
    const doc = log.handle.doc();
    expect(doc.format).toBe(OP_LOG_FORMAT);
    expect(doc.chunks.map((c) => c.length)).toEqual([3, 3, 3, 1]);
    expect(doc.chunks[0]![0]).toBeInstanceOf(A.ImmutableString);
    await log.close();
    const again = await openAgain(log, 3);
    expect(again.all()).toEqual(batches.flat());
    await again.close();
  });

  it("an acknowledged append is on disk before close: another open sees it", async () => {
    const log = await create();
    const a = op();
    await log.append([a]);
    const other = await openAgain(log);
    expect(other.all()).toEqual([a]);
    await other.close();
    await log.close();
  });

  it("two logs on one directory interleave appends and compactions without losing an op", async () => {
    const first = await create();
    const second = await openAgain(first);
    const written: StoredOp[] = [];
    for (let i = 0; i < 30; i++) {
      const o = op(i);
      written.push(o);
      await (i % 2 === 0 ? first : second).append([o]);
    }
    await first.refresh();
    await second.refresh();
    const want = written.map((o) => o["op-id"]).sort();
    expect(
      first
        .all()
        .map((o) => o["op-id"])
        .sort(),
    ).toEqual(want);
    expect(
      second
        .all()
        .map((o) => o["op-id"])
        .sort(),
    ).toEqual(want);
    await first.close();
    await second.close();
    const again = await openAgain(first);
    expect(
      again
        .all()
        .map((o) => o["op-id"])
        .sort(),
    ).toEqual(want);
    await again.close();
  });

  it("ops merged into the handle from a peer reach onRemote and are stored", async () => {
    const log = await create();
    await log.append([op()]);
    const peerOps = [op(), op()];
    const peer = A.change(A.clone(log.handle.doc()), (d: OpLogDocument) => pushBundle(d, peerOps));
    const seen: StoredOp[][] = [];
    log.onRemote((ops) => seen.push([...ops]));
    log.handle.update((d) => A.merge(d, peer));
    expect(seen).toEqual([peerOps]);
    await log.close();
    const again = await openAgain(log);
    expect(again.all()).toHaveLength(3);
    await again.close();
  });

  it("a peer's malformed entries are reported, never held, and do not hide valid ones", async () => {
    const log = await create();
    const good = op();
    const peer = A.change(A.clone(log.handle.doc()), (d: OpLogDocument) => {
      d.chunks.push([
        new A.ImmutableString("not json"),
        new A.ImmutableString(JSON.stringify([{ op: "add" }, good])),
      ]);
    });
    const seen: StoredOp[][] = [];
    log.onRemote((ops) => seen.push([...ops]));
    log.handle.update((d) => A.merge(d, peer));
    expect(seen).toEqual([[good]]);
    expect(log.invalid.map((e) => e.at)).toEqual([
      [0, 0],
      [0, 1, 0],
    ]);
    await log.close();
    const again = await openAgain(log);
    expect(again.all()).toEqual([good]);
    expect(again.invalid).toHaveLength(2);
    await again.close();
  });

  it("a peer's op under a held op-id with other content is reported, never held; the first held stands on reopen", async () => {
    const log = await create();
    const original = op();
    await log.append([original]);
    const forged = { ...original, forged: true };
    const peer = A.change(A.clone(log.handle.doc()), (d: OpLogDocument) => pushBundle(d, [forged, original]));
    log.handle.update((d) => A.merge(d, peer));
    expect(log.all()).toEqual([original]);
    expect(log.invalid.map((e) => e.opId)).toEqual([original["op-id"]]);
    expect(log.invalid[0]?.reason).toMatch(/reuses a held op-id with other content/);
    await log.close();
    const again = await openAgain(log);
    expect(again.all()).toEqual([original]);
    expect(again.invalid.map((e) => e.opId)).toEqual([original["op-id"]]);
    // A store over it reports it among the quarantined (`kumiki status`).
    const store = openStore({ log: again, author: "agent:test" });
    if (!store.ok) throw new Error(store.error.message);
    expect(store.value.status().quarantined).toContainEqual(
      expect.objectContaining({ opId: original["op-id"], code: "op-id-reused" }),
    );
    await again.close();
  });

  it("refuses to open what is not there, or not an op log", async () => {
    const log = await create();
    const w = where.get(log)!;
    await log.close();
    const missing = AutomergeOpLog.open({ directory: tempDir(), url: w.url });
    await expect(missing).rejects.toBeInstanceOf(OpLogOpenError);
    await expect(missing).rejects.toMatchObject({ code: "store-missing" });
    await expect(
      AutomergeOpLog.open({ directory: w.directory, url: "automerge:nope" }),
    ).rejects.toMatchObject({
      code: "store-corrupt",
    });
  });
});
