/**
 * A workspace whose storage is damaged on disk — the newest chunk truncated, a byte flipped in it,
 * emptied, deleted; every chunk deleted; op-log.jsonl damaged — read by real `kumiki` processes:
 * status names the damage, reads still show every op, a write is refused and changes no byte, and
 * `kumiki repair` brings every acknowledged op back, moves the damaged file aside and leaves a
 * workspace that writes again. The writes that make what is then damaged open the document in
 * full (`KUMIKI_PENDING_WRITES=off`: a pending write lands in neither the chunks nor op-log.jsonl);
 * the refused write is tried as a call in its own process makes it by default, pending writes on.
 */
import fs from "node:fs";
import path from "node:path";
import { startSyncServer } from "@kumiki-graph/sync-server";
import { chunkFiles } from "@kumiki-graph/test-support/files";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, run, runBin, snapshot, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

/** Writes that store in the chunks and op-log.jsonl, which the tests then damage. */
const FULL_WRITES = { KUMIKI_PENDING_WRITES: "off" };

/** A temp root, a test environment and a real sync server on it, for `fn`; the server closed after. */
async function withServer(
  prefix: string,
  fn: (w: { root: string; env: Record<string, string>; url: string }) => Promise<void>,
): Promise<void> {
  const root = tempDir(prefix);
  const cache = tempDir(`${prefix}-cache`);
  dirs.push(root, cache);
  const server = await startSyncServer({ dataDir: path.join(root, "server") });
  if (!server.ok) throw new Error(server.error.message);
  try {
    await fn({ root, env: testEnv(cache, FULL_WRITES), url: server.value.url });
  } finally {
    await server.value.close();
  }
}

/** A workspace with two slots; `last` are the chunk files the second slot's add wrote. */
async function workspace(): Promise<{ root: string; env: Record<string, string>; last: string[] }> {
  const root = tempDir("damage");
  const cache = tempDir("damage-cache");
  dirs.push(root, cache);
  const env = testEnv(cache, FULL_WRITES);
  const opts = { cwd: root, env };
  expect((await run(["init"], opts)).code).toBe(0);
  expect((await run(["add", "slot", "first", "Int = 1"], opts)).code).toBe(0);
  const storage = path.join(root, ".kumiki", "automerge");
  const before = new Set(chunkFiles(storage));
  expect((await run(["add", "slot", "second", "Int = 2"], opts)).code).toBe(0);
  const last = chunkFiles(storage).filter((f) => !before.has(f));
  expect(last.length).toBeGreaterThan(0);
  return { root, env, last };
}

/** A new workspace at `dir` holding 60 slots (one import); the options to run the bin in it. */
async function sixtySlots(
  dir: string,
  env: Record<string, string>,
): Promise<{ cwd: string; env: Record<string, string> }> {
  fs.mkdirSync(dir);
  const opts = { cwd: dir, env };
  expect((await run(["init"], opts)).code).toBe(0);
  const program = Array.from({ length: 60 }, (_, i) => `slot s${i} : Int = ${i}\n`).join("\n");
  fs.writeFileSync(path.join(dir, "p.kumiki"), program);
  expect((await run(["import", "p.kumiki"], opts)).code).toBe(0);
  return opts;
}

/**
 * Adds slots in the workspace of `opts` until one add writes its op in chunks of its own: new
 * incremental chunks, every older chunk left. On a loaded machine the import before can leave an
 * incremental chunk beside the snapshot, and the next write then compacts them all into a new one
 * (seen 2 times in 12 beside three busy loops), whose loss would lose every op, not the write's.
 * Returns the ops the workspace holds then and the chunks only the last write is in.
 */
async function writeAlone(
  opts: { cwd: string; env: Record<string, string> },
  storage: string,
): Promise<{ held: number; alone: string[] }> {
  const start = (JSON.parse((await run(["status", "--json"], opts)).out) as { ops: number }).ops;
  // After a compaction the document is one snapshot, which the next small write never outweighs.
  for (let i = 0; i < 3; i++) {
    const before = chunkFiles(storage);
    expect((await run(["add", "slot", `last${i}`, "Int = 7"], opts)).code).toBe(0);
    const after = chunkFiles(storage);
    const alone = after.filter((f) => !before.includes(f));
    const kept = before.every((f) => after.includes(f));
    if (kept && alone.length > 0 && alone.every((f) => f.includes(`${path.sep}incremental${path.sep}`)))
      return { held: start + i + 1, alone };
  }
  throw new Error("three writes in a row compacted the document");
}

const DAMAGE: Record<string, (w: { root: string; last: string[] }) => void> = {
  truncated: ({ last }) => fs.truncateSync(last[0]!, fs.statSync(last[0]!).size - 7),
  "byte flipped": ({ last }) => {
    const data = fs.readFileSync(last[0]!);
    data[Math.floor(data.length / 2)]! ^= 0x5a;
    fs.writeFileSync(last[0]!, data);
  },
  emptied: ({ last }) => fs.writeFileSync(last[0]!, ""),
  "deleted (one chunk)": ({ last }) => {
    for (const f of last) fs.rmSync(f);
  },
  "deleted (every chunk)": ({ root }) => {
    for (const f of chunkFiles(path.join(root, ".kumiki", "automerge"))) fs.rmSync(f);
  },
};

describe("a damaged workspace, through real kumiki processes", () => {
  for (const [kind, damage] of Object.entries(DAMAGE)) {
    it(`${kind}: status names it, reads show every op, writes change nothing, repair restores it`, async () => {
      const w = await workspace();
      const opts = { cwd: w.root, env: w.env };
      damage(w);

      const status = runBin(["status", "--json"], opts);
      expect(status.code).toBe(0);
      const s = JSON.parse(status.out) as {
        ops: number;
        damage?: { chunks: unknown[]; lostChanges: unknown[] };
      };
      expect(s.ops).toBe(2);
      expect(s.damage).toBeDefined();
      expect(runBin(["status"], opts).out).toContain("DAMAGED");
      expect(runBin(["view", "slot.second"], opts).out).toContain("slot second : Int = 2");

      const files = snapshot(path.join(w.root, ".kumiki"));
      // As a call makes it by default: the pending write declines (the chunks changed) and the full open refuses.
      const { KUMIKI_PENDING_WRITES: _, ...byDefault } = w.env;
      const refused = runBin(["add", "slot", "third", "Int = 3"], { cwd: w.root, env: byDefault });
      expect(refused.code).toBe(1);
      expect(refused.err).toContain("damaged");
      expect(refused.err).toContain("kumiki repair");
      expect(snapshot(path.join(w.root, ".kumiki"))).toEqual(files);

      const dry = runBin(["repair", "--dry-run", "--json"], opts);
      expect(dry.code).toBe(1);
      expect(snapshot(path.join(w.root, ".kumiki"))).toEqual(files);

      const fixed = runBin(["repair", "--json"], opts);
      expect(fixed.code, fixed.err).toBe(0);
      const r = JSON.parse(fixed.out) as {
        repaired: boolean;
        before: number;
        fromOpLog: number;
        after: number;
        acknowledged: string;
        chunks: { movedTo?: string }[];
      };
      expect(r).toMatchObject({ repaired: true, after: 2, acknowledged: "all" });
      expect(r.before + r.fromOpLog).toBe(2);
      expect(r.fromOpLog).toBeGreaterThan(0);
      for (const c of r.chunks) expect(fs.existsSync(c.movedTo!)).toBe(true);

      expect(runBin(["repair", "--dry-run"], opts)).toMatchObject({ code: 0 });
      const after = JSON.parse(runBin(["status", "--json"], opts).out) as { ops: number; damage?: unknown };
      expect(after).toMatchObject({ ops: 2 });
      expect(after.damage).toBeUndefined();
      expect(runBin(["add", "slot", "third", "Int = 3"], opts).code).toBe(0);
      expect(runBin(["list"], opts).out.split("\n")).toEqual(
        expect.arrayContaining(["slot.first", "slot.second", "slot.third"]),
      );
    });
  }

  it("a damaged op-log.jsonl: the document is whole, repair writes the file again and keeps the old one", async () => {
    const w = await workspace();
    const opts = { cwd: w.root, env: w.env };
    const file = path.join(w.root, ".kumiki", "op-log.jsonl");
    const good = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, `${good.slice(0, 40)}\n\u0000garbage\n`);
    const fixed = runBin(["repair", "--json"], opts);
    expect(fixed.code, fixed.err).toBe(0);
    const r = JSON.parse(fixed.out) as { opLog: { unreadableLines: number; movedTo: string }; after: number };
    expect(r.opLog.unreadableLines).toBe(2);
    expect(r.after).toBe(2);
    expect(fs.readFileSync(r.opLog.movedTo, "utf8")).toContain("garbage");
    expect(fs.readFileSync(file, "utf8")).toBe(good);
    expect(runBin(["view", "slot.second"], opts).out).toContain("slot second : Int = 2");
    // Any full open writes a damaged file again too (it is derived from the document).
    fs.writeFileSync(file, "garbage\n");
    expect(runBin(["add", "slot", "third", "Int = 3"], opts).code).toBe(0);
    expect(fs.readFileSync(file, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
  });
});

describe("repair with a remote: what only the server holds comes back", () => {
  it("a chunk and op-log.jsonl both lost an op the server has: repair syncs it back", async () => {
    await withServer("damage-remote", async ({ root, env, url }) => {
      const a = path.join(root, "a");
      const b = path.join(root, "b");
      // A document large enough that B's one op arrives as an incremental chunk beside its
      // snapshot (a tiny one is compacted into a single snapshot, and losing that loses the
      // document's first change: then repair says to clone again instead of syncing).
      const inA = await sixtySlots(a, env);
      expect((await run(["remote", "add", "origin", url], inA)).code).toBe(0);
      expect((await run(["sync"], inA)).code).toBe(0);
      const graph = (JSON.parse((await run(["status", "--json"], inA)).out) as { graph: string }).graph;
      expect((await run(["clone", `${url}/${graph}`, b], { cwd: root, env })).code).toBe(0);
      expect((await run(["add", "slot", "fromB", "Int = 2"], { cwd: b, env })).code).toBe(0);
      expect((await run(["sync"], { cwd: b, env })).code).toBe(0);
      // A takes in B's op: a new chunk, and a line of op-log.jsonl.
      const storage = path.join(a, ".kumiki", "automerge");
      const before = new Set(chunkFiles(storage));
      expect((await run(["sync"], inA)).code).toBe(0);
      const fresh = chunkFiles(storage).filter((f) => !before.has(f));
      expect(fresh.length).toBeGreaterThan(0);
      // Both local copies of fromB are lost: its chunks emptied, its line cut from op-log.jsonl.
      for (const f of fresh) fs.writeFileSync(f, "");
      const file = path.join(a, ".kumiki", "op-log.jsonl");
      const lines = fs.readFileSync(file, "utf8").split("\n");
      fs.writeFileSync(file, lines.filter((l) => !l.includes('"fromB"')).join("\n"));

      // In this process (the server runs here too: a synchronous child would block it).
      const fixed = await run(["repair", "--json"], inA);
      expect(fixed.code, fixed.err).toBe(0);
      const r = JSON.parse(fixed.out) as { repaired: boolean; server?: { remote: string; received: number } };
      expect(r.repaired, fixed.out).toBe(true);
      expect(r.server).toMatchObject({ remote: "origin" });
      expect(r.server!.received).toBeGreaterThan(0);
      expect((await run(["view", "slot.fromB"], inA)).out).toContain("slot fromB : Int = 2");
      const status = JSON.parse((await run(["status", "--json"], inA)).out) as {
        ops: number;
        damage?: unknown;
      };
      expect(status.damage).toBeUndefined();
      expect(status.ops).toBe(61);
    });
  }, 120_000);
});

describe("sync on a damaged workspace never reports success while the server lacks an op", () => {
  it("an op only op-log.jsonl holds: sync exits 1 saying so and to repair, repair pushes it, the next sync is clean", async () => {
    await withServer("damage-sync", async ({ root, env, url }) => {
      const a = path.join(root, "a");
      const inA = await sixtySlots(a, env);
      // The last write's chunks lost (emptied); op-log.jsonl still holds its op.
      const { held, alone } = await writeAlone(inA, path.join(a, ".kumiki", "automerge"));
      for (const f of alone) fs.writeFileSync(f, "");
      expect((await run(["remote", "add", "origin", url], inA)).code).toBe(0);
      const graph = (JSON.parse((await run(["status", "--json"], inA)).out) as { graph: string }).graph;
      const onServer = async (n: number) => {
        const d = path.join(root, `check-${n}`);
        const c = await run(["clone", `${url}/${graph}`, d, "--json"], { cwd: root, env });
        expect(c.code, c.err).toBe(0);
        return (JSON.parse(c.out) as { ops: number }).ops;
      };
      const synced = await run(["sync", "--json"], inA);
      expect(synced.code).toBe(1);
      const error = (
        JSON.parse(synced.out) as { error: { code: string; message: string; details: { unpushed: number } } }
      ).error;
      expect(error.code).toBe("store-damaged");
      expect(error.details.unpushed).toBe(1);
      expect(error.message).toMatch(/1 op this workspace holds is not on it.*Run kumiki repair/);
      expect(await onServer(1)).toBe(held - 1);
      expect((await run(["repair"], inA)).code).toBe(0);
      expect(await onServer(2)).toBe(held);
      const again = await run(["sync", "--json"], inA);
      expect(again.code, again.err).toBe(0);
      expect((JSON.parse(again.out) as { unpushed: number }).unpushed).toBe(0);
    });
  }, 120_000);
});

describe("a workspace poisoned by a forged op taken before the original", () => {
  it("sync is refused saying so; repair puts the forged op aside, takes the server's, and the honest op is pushed", async () => {
    await withServer("poisoned", async ({ root, env, url }) => {
      const a = path.join(root, "a");
      const c = path.join(root, "c");
      fs.mkdirSync(a);
      const inA = { cwd: a, env };
      const inC = { cwd: c, env };
      expect((await run(["init"], inA)).code).toBe(0);
      expect((await run(["remote", "add", "origin", url], inA)).code).toBe(0);
      expect((await run(["add", "slot", "seed", "Int = 0"], inA)).code).toBe(0);
      expect((await run(["sync"], inA)).code).toBe(0);
      const graph = (JSON.parse((await run(["status", "--json"], inA)).out) as { graph: string }).graph;
      expect((await run(["clone", `${url}/${graph}`, c], { cwd: root, env })).code).toBe(0);
      // A writes x and pushes it; C takes a forgery of it (same op-id, another body) first.
      expect((await run(["add", "slot", "x", "Int = 1"], inA)).code).toBe(0);
      expect((await run(["sync"], inA)).code).toBe(0);
      const exported = (await run(["patch", "export"], inA)).out;
      const forged = exported
        .split("\n")
        .filter((l) => l.includes('"name":"x"'))
        .map((l) => l.replace('" : Int = 1"', '" : Int = 99"'))
        .join("\n");
      expect(forged).toContain("Int = 99");
      fs.writeFileSync(path.join(root, "forged.jsonl"), `${forged}\n`);
      expect((await run(["patch", "apply", path.join(root, "forged.jsonl")], inC)).code).toBe(0);
      expect((await run(["add", "slot", "honest", "Int = 5"], inC)).code).toBe(0);
      const opId = (JSON.parse(forged) as { "op-id": string })["op-id"];

      const refused = await run(["sync", "--json"], inC);
      expect(refused.code).toBe(1);
      const error = (
        JSON.parse(refused.out) as { error: { message: string; details: { contested?: string } } }
      ).error;
      expect(error.details.contested).toBe(opId);
      expect(error.message).toMatch(/already held with other content.*kumiki repair puts it aside/);
      // A dry run names it and changes nothing.
      const dry = await run(["repair", "--dry-run"], inC);
      expect(dry.code).toBe(1);
      expect(dry.out).toContain(opId);
      const fixed = await run(["repair", "--json"], inC);
      expect(fixed.code, fixed.err).toBe(0);
      const r = JSON.parse(fixed.out) as {
        contested: { ops: { opId: string }[]; movedTo: string; kept: number };
        server: { sent: number };
      };
      expect(r.contested.ops.map((o) => o.opId)).toEqual([opId]);
      expect(r.contested.kept).toBe(1);
      // Nothing is lost: the forgery is kept aside, as it was.
      expect(fs.readFileSync(r.contested.movedTo, "utf8")).toContain("Int = 99");
      expect(r.server.sent, fixed.out).toBe(1);
      expect((await run(["view", "slot.x"], inC)).out).toBe("slot x : Int = 1\n");
      expect((await run(["sync"], inC)).code).toBe(0);
      expect((await run(["sync"], inA)).code).toBe(0);
      expect((await run(["view", "slot.honest"], inA)).out).toBe("slot honest : Int = 5\n");
    });
  }, 120_000);
});

describe("repair when the document's first change is lost and a remote holds the graph", () => {
  /** A synced with a server, then one more local op, then every chunk deleted (the first change with them). */
  async function lostRoot(root: string, env: Record<string, string>, url: string) {
    const a = path.join(root, "a");
    fs.mkdirSync(a);
    const inA = { cwd: a, env };
    expect((await run(["init"], inA)).code).toBe(0);
    expect((await run(["add", "slot", "first", "Int = 1"], inA)).code).toBe(0);
    expect((await run(["remote", "add", "origin", url], inA)).code).toBe(0);
    expect((await run(["sync"], inA)).code).toBe(0);
    const graph = (JSON.parse((await run(["status", "--json"], inA)).out) as { graph: string }).graph;
    // Not pushed yet: only op-log.jsonl and the (now deleted) chunks hold it.
    expect((await run(["add", "slot", "local", "Int = 2"], inA)).code).toBe(0);
    for (const f of chunkFiles(path.join(a, ".kumiki", "automerge"))) fs.rmSync(f);
    return { a, inA, graph };
  }

  it("takes up the server's history (not a new one), brings back every op and pushes the unpushed one", async () => {
    await withServer("damage-root", async ({ root, env, url }) => {
      const { inA, graph } = await lostRoot(root, env, url);
      const fixed = await run(["repair", "--json"], inA);
      expect(fixed.code, fixed.err).toBe(0);
      const r = JSON.parse(fixed.out) as {
        newHistory: boolean;
        rootFromRemote: boolean;
        fromRemote: number;
        fromOpLog: number;
        after: number;
        server?: { sent: number; received: number };
      };
      expect(r).toMatchObject({
        newHistory: false,
        rootFromRemote: true,
        fromRemote: 1,
        fromOpLog: 1,
        after: 2,
      });
      // Synced after the repair: the op the server never had was pushed, and the one that came
      // with the server's copy counts as received (it said "received 0").
      expect(r.server?.sent).toBe(1);
      expect(r.server?.received).toBe(1);
      const status = JSON.parse((await run(["status", "--json"], inA)).out) as {
        ops: number;
        damage?: unknown;
      };
      expect(status).toMatchObject({ ops: 2 });
      expect(status.damage).toBeUndefined();
      // A fresh clone shares the history: it holds both ops, and A and B sync both ways.
      const b = path.join(root, "b");
      expect((await run(["clone", `${url}/${graph}`, b], { cwd: root, env })).code).toBe(0);
      expect((await run(["view", "slot.local"], { cwd: b, env })).out).toContain("slot local : Int = 2");
      expect((await run(["add", "slot", "fromB", "Int = 3"], { cwd: b, env })).code).toBe(0);
      expect((await run(["sync"], { cwd: b, env })).code).toBe(0);
      expect((await run(["sync"], inA)).code).toBe(0);
      expect((await run(["list"], inA)).out.split("\n")).toEqual(
        expect.arrayContaining(["slot.first", "slot.local", "slot.fromB"]),
      );
    });
  }, 120_000);

  it("an unreachable remote: nothing changes and the repair says why; --offline starts a new history", async () => {
    const root = tempDir("damage-root-down");
    const cache = tempDir("damage-root-down-cache");
    dirs.push(root, cache);
    const env = testEnv(cache, FULL_WRITES);
    const server = await startSyncServer({ dataDir: path.join(root, "server") });
    if (!server.ok) throw new Error(server.error.message);
    const { a, inA } = await lostRoot(root, env, server.value.url);
    await server.value.close();
    const files = snapshot(path.join(a, ".kumiki"));
    const refused = await run(["repair", "--timeout", "2"], inA);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("the remote's copy could not be fetched");
    expect(refused.err).toContain("nothing was changed");
    const json = await run(["repair", "--timeout", "2", "--json"], inA);
    expect(JSON.parse(json.out)).toMatchObject({ error: { code: "remote-unavailable" } });
    expect(snapshot(path.join(a, ".kumiki"))).toEqual(files);
    const offline = await run(["repair", "--offline", "--json"], inA);
    expect(offline.code, offline.err).toBe(0);
    expect(JSON.parse(offline.out)).toMatchObject({ newHistory: true, rootFromRemote: false, after: 2 });
    expect((await run(["view", "slot.local"], inA)).out).toContain("slot local : Int = 2");
  }, 120_000);
});

describe("sync --files on a hostile tree, through real kumiki processes", () => {
  it("a layer folder linked out of the workspace and a Latin-1 file: each refused with the reason, nothing written anywhere", () => {
    const root = tempDir("tree-link");
    const outside = tempDir("tree-outside");
    const cache = tempDir("tree-link-cache");
    dirs.push(root, outside, cache);
    const opts = { cwd: root, env: testEnv(cache, FULL_WRITES) };
    expect(runBin(["init"], opts).code).toBe(0);
    expect(runBin(["add", "slot", "a", "Int = 1"], opts).code).toBe(0);
    expect(runBin(["sync", "--files"], opts).code).toBe(0);
    // slots/ moved out and linked back; the store then changes slot.a.
    fs.renameSync(path.join(root, "slots"), path.join(outside, "slots"));
    fs.symlinkSync(path.join(outside, "slots"), path.join(root, "slots"));
    expect(runBin(["replace", "slot.a", "Int = 2"], opts).code).toBe(0);
    const before = snapshot(outside);
    const store = snapshot(path.join(root, ".kumiki"));
    const linked = runBin(["sync", "--files"], opts);
    expect(linked.code).not.toBe(0);
    expect(linked.err).toMatch(/slots is a symbolic link .*nothing was read or written/);
    expect(snapshot(outside)).toEqual(before);
    expect(snapshot(path.join(root, ".kumiki"))).toEqual(store);
    // The link replaced by a folder of its own, with a Latin-1 file in it.
    fs.rmSync(path.join(root, "slots"));
    fs.mkdirSync(path.join(root, "slots"));
    fs.writeFileSync(
      path.join(root, "slots", "a.kumiki"),
      Buffer.from([...Buffer.from('slot a : Text = "'), 0xe9, 0x22, 0x0a]),
    );
    const latin1 = runBin(["sync", "--files"], opts);
    expect(latin1.code).not.toBe(0);
    expect(latin1.err).toMatch(/a\.kumiki is not UTF-8 text \(byte 17 is 0xe9\)/);
    expect(snapshot(path.join(root, ".kumiki"))).toEqual(store);
    expect(runBin(["view", "slot.a"], opts).out).toBe("slot a : Int = 2\n");
  });
});
