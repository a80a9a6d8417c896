import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import type { OpLog, StoredOp } from "@kumiki-graph/core";
import { opContentHash, openStore } from "@kumiki-graph/core";
import { testOp as op, runOpLogSuite } from "@kumiki-graph/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AutomergeOpLog } from "../src/automerge-op-log.js";
import { OP_LOG_FORMAT, type OpLogDocument, pushBundle } from "../src/op-log-document.js";
import { OpLogFile } from "../src/op-log-file.js";
import { OpLogOpenError, WorkspaceReplacedError } from "../src/repo-op-log.js";

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

  /** Two replicas of one document (directory copies, as two clones of one graph are). */
  async function twoReplicas(): Promise<[AutomergeOpLog, AutomergeOpLog]> {
    const a = await create();
    await a.append([op()]);
    const w = where.get(a)!;
    await a.close();
    const dir = tempDir();
    fs.cpSync(w.directory, dir, { recursive: true });
    const one = await AutomergeOpLog.open(w);
    const two = await AutomergeOpLog.open({ directory: dir, url: w.url });
    where.set(one, w);
    where.set(two, { directory: dir, url: w.url });
    return [one, two];
  }
  const actor = (n: number) => n.toString(16).padStart(32, "0");
  const merge = (log: AutomergeOpLog, doc: A.Doc<OpLogDocument>) =>
    log.handle.update((d) => A.merge(d, A.clone(doc)));
  const held = (log: AutomergeOpLog) => ({
    // As a set: a full load reads in document order, a live log in arrival order.
    all: log
      .all()
      .map((o) => JSON.stringify(o))
      .sort(),
    invalid: log.invalid.map((e) => `${e.at.join(".")} ${e.opId}`).sort(),
  });

  it("two ops claimed concurrently under one op-id: every replica holds the same one, whatever the order they arrive in", async () => {
    const [one, two] = await twoReplicas();
    const base = one.handle.doc();
    const id = "op_contested_1";
    const claims = [
      { "op-id": id, op: "add", body: "Int = 10" },
      { "op-id": id, op: "add", body: "Int = 99999" },
    ];
    const docs = claims.map((c, i) =>
      A.change(A.clone(base, { actor: actor(i + 1) }), (d: OpLogDocument) => pushBundle(d, [c])),
    );
    const expected = [...claims].sort((x, y) => (opContentHash(x) < opContentHash(y) ? -1 : 1))[0];
    merge(one, docs[0]!);
    merge(two, docs[1]!);
    expect(one.all().at(-1)).toEqual(claims[0]);
    expect(two.all().at(-1)).toEqual(claims[1]);
    const gens = [one.generation, two.generation];
    merge(one, docs[1]!);
    merge(two, docs[0]!);
    // The lowest content hash, on both: the one that had held the other was told (generation).
    expect(one.all().at(-1)).toEqual(expected);
    expect(held(two)).toEqual(held(one));
    expect(one.invalid.filter((e) => e.opId === id)).toHaveLength(1);
    expect(one.generation + two.generation - gens[0]! - gens[1]!).toBe(1);
    // And after a full load, on both.
    await one.close();
    await two.close();
    const again = [await openAgain(one), await openAgain(two)];
    expect(held(again[0]!)).toEqual(held(one));
    expect(held(again[1]!)).toEqual(held(one));
    for (const l of again) await l.close();
  });

  it("a claim made after the original was seen loses, even when a peer puts it first in the document", async () => {
    const [one] = await twoReplicas();
    const original = op();
    await one.append([original]);
    // A hostile peer that has seen the original writes its forgery at the very front.
    const forged = { ...original, body: "slot s = 99999" };
    const peer = A.change(A.clone(one.handle.doc(), { actor: actor(9) }), (d: OpLogDocument) => {
      d.chunks[0]!.unshift(new A.ImmutableString(JSON.stringify([forged])));
    });
    merge(one, peer);
    expect(one.all()).toContainEqual(original);
    expect(one.all()).not.toContainEqual(forged);
    expect(one.invalid).toEqual([expect.objectContaining({ opId: original["op-id"], at: [0, 0, 0] })]);
    await one.close();
    // A full load reads the forgery first in document order: the causal rule still keeps the original.
    const again = await openAgain(one);
    expect(again.all()).toContainEqual(original);
    expect(again.all()).not.toContainEqual(forged);
    expect(held(again)).toEqual(held(one));
    await again.close();
  });

  it("a store whose held op was replaced by a contested op-id's decision folds again and shows the winner", async () => {
    const [one, two] = await twoReplicas();
    const base = one.handle.doc();
    const s1 = openStore({ log: one, author: "agent:one" });
    const s2 = openStore({ log: two, author: "agent:two" });
    if (!s1.ok || !s2.ok) throw new Error("open");
    const w = await s1.value.add({ layer: "slot", name: "x", body: ": Int = 10" });
    if (!w.ok) throw new Error(w.error.message);
    const original = JSON.parse(JSON.stringify(w.value.ops[0])) as Record<string, unknown>;
    // The same id with another body, made without seeing the original (concurrent).
    let forged: Record<string, unknown> = { ...original, body: String(original.body).replace("10", "99999") };
    for (let i = 0; opContentHash(forged) > opContentHash(original); i++) forged = { ...forged, ts: i };
    const theirs = A.change(A.clone(base, { actor: actor(7) }), (d: OpLogDocument) =>
      pushBundle(d, [forged as unknown as StoredOp]),
    );
    const events: boolean[] = [];
    s1.value.onChange((e) => events.push(e.refolded === true));
    const view = (s: typeof s1.value) => {
      const v = s.view("slot.x");
      return v.ok ? v.value.text : v.error.message;
    };
    expect(view(s1.value)).toBe("slot x : Int = 10\n");
    merge(two, theirs);
    expect(view(s2.value)).toBe("slot x : Int = 99999\n");
    merge(one, theirs);
    merge(two, one.handle.doc());
    // The forgery has the lower content hash here (made so), and was concurrent: both show it.
    expect(view(s1.value)).toBe("slot x : Int = 99999\n");
    expect(view(s2.value)).toBe(view(s1.value));
    expect(events).toContain(true);
    for (const s of [s1.value, s2.value]) {
      expect(s.status().quarantined).toContainEqual(
        expect.objectContaining({ opId: original["op-id"], code: "op-id-reused" }),
      );
    }
    await one.close();
    await two.close();
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

describe("AutomergeOpLog whose workspace was replaced", () => {
  afterEach(cleanup);

  it("refuses appends once `replaced` says so, and writes nothing more: no chunk, no op-log.jsonl, not at close", async () => {
    const directory = tempDir();
    let why: string | undefined;
    const opLog = path.join(directory, "op-log.jsonl");
    const created = await AutomergeOpLog.create({ directory, replaced: () => why });
    const log = await AutomergeOpLog.open({
      directory,
      url: created.url,
      replaced: () => why,
      mirror: new OpLogFile(opLog),
    });
    await created.close();
    await log.append([op(1)]);
    const files = () =>
      fs
        .readdirSync(directory, { recursive: true })
        .map(String)
        .filter((f) => fs.statSync(path.join(directory, f)).isFile() && !f.endsWith(".lock"))
        .sort()
        .map((f) => `${f}:${fs.readFileSync(path.join(directory, f)).toString("base64")}`);
    const before = files();
    why = "the workspace at X was replaced: it holds the graph automerge:other now";
    await expect(log.append([op(2)])).rejects.toThrow(WorkspaceReplacedError);
    await log.close();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(files()).toEqual(before);
  });
});
