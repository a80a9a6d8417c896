import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import {
  type AutomergeUrl,
  type DocHandle,
  type DocumentId,
  type PeerId,
  Repo,
} from "@automerge/automerge-repo";
import { NodeWSServerAdapter, WebSocketClientAdapter } from "@automerge/automerge-repo-network-websocket";
import { NodeFSStorageAdapter } from "@automerge/automerge-repo-storage-nodefs";
import { createStore, MemoryOpLog, type StoredOp } from "@kumiki-graph/core";
import {
  initWorkspace,
  type OpLogDocument,
  openWorkspace,
  pushBundle,
} from "@kumiki-graph/storage-automerge";
import { cloneWorkspace, startSyncServer, syncWorkspace } from "@kumiki-graph/sync-server";
import { WebSocketServer } from "ws";
import { type BenchRow, measure, summarize } from "./harness.js";

/**
 * Sync through a server, against raw automerge-repo doing the same transfer in the same run:
 *
 * - push+pull: 1,000 ops made in workspace A (one Automerge change each) become visible in
 *   workspace B. Ours: `syncWorkspace(A)` then `syncWorkspace(B)` against `startSyncServer` (each
 *   opens the workspace, waits for the handshake, syncs until a durable flush confirms
 *   the same heads, closes). Raw: a Repo over NodeFS storage on a copy of A's storage connects to a
 *   plain automerge-repo server (`NodeWSServerAdapter` + `NodeFSStorageAdapter`) and syncs until
 *   the server holds A's heads, shuts down; then the same for a copy of B until it holds them.
 *   Seven runs after an untimed warm-up round, ours and raw taking turns (which goes first
 *   alternating), 1,000 new ops each;
 *   the note also gives the median of the runs' own ratios (see {@link paired}).
 * - clone: a fresh replica of a 10,000-op graph (one change per op). Ours: `cloneWorkspace`.
 *   Raw: a Repo over empty NodeFS storage, `find` once the server answered, until its heads are
 *   the server's, shut down.
 *
 * Ops are real (written by a store), so the server's op-schema check runs on every one.
 */
export async function benchSync(): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-sync-"));
  try {
    return [...(await benchPushPull(root)), await benchClone(root)];
  } finally {
    // automerge-repo's raw clients save on a 100 ms timer that outlives shutdown: let it land.
    await new Promise((resolve) => setTimeout(resolve, 500));
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** `n` valid ops (one `add` each), written by a store over a memory log. */
async function makeOps(n: number, prefix: string): Promise<StoredOp[]> {
  const log = new MemoryOpLog();
  const store = createStore({ log, author: "agent:bench" });
  if (!store.ok) throw new Error(store.error.message);
  for (let i = 0; i < n; i++) {
    const r = await store.value.add({ layer: "slot", name: `${prefix}${i}`, body: `Int = ${i}` });
    if (!r.ok) throw new Error(r.error.message);
  }
  return [...log.all()];
}

interface RawServer {
  readonly url: string;
  readonly repo: Repo;
  close(): Promise<void>;
}

async function rawServer(dir: string): Promise<RawServer> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  const port = (wss.address() as { port: number }).port;
  const repo = new Repo({
    storage: new NodeFSStorageAdapter(dir),
    network: [new NodeWSServerAdapter(wss as never)],
    peerId: "raw-server" as PeerId,
    sharePolicy: async () => false,
  });
  return {
    url: `ws://127.0.0.1:${port}`,
    repo,
    async close() {
      await repo.shutdown();
      wss.close();
    },
  };
}

function headsOf(doc: A.Doc<unknown>): string {
  return A.getHeads(doc).sort().join(",");
}

/** A raw automerge-repo client: connects, waits for the server, syncs `url` until `until`, shuts down. */
async function rawClientSync(
  storageDir: string,
  serverUrl: string,
  url: AutomergeUrl,
  until: (handle: DocHandle<OpLogDocument>) => Promise<void>,
): Promise<void> {
  const repo = new Repo({
    storage: new NodeFSStorageAdapter(storageDir),
    network: [new WebSocketClientAdapter(serverUrl)],
  });
  // The client adapter says "ready" after 1 s even unanswered: wait for the server itself.
  await new Promise<void>((r) => repo.networkSubsystem.once("peer", () => r()));
  const handle = await repo.find<OpLogDocument>(url);
  await until(handle);
  await repo.shutdown();
}

/** Resolves once the handle's heads are `want`. */
function headsReach(handle: DocHandle<OpLogDocument>, want: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const check = () => {
      if (headsOf(handle.doc()) === want) {
        handle.off("change", check);
        resolve();
      }
    };
    handle.on("change", check);
    check();
  });
}

async function waitServer(server: RawServer, id: DocumentId, want: string): Promise<void> {
  for (;;) {
    const h = server.repo.handles[id];
    if (h?.isReady() && headsOf(h.doc()) === want) return;
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** The push+pull row, then its two legs (A's push, B's pull) timed in the same runs. */
async function benchPushPull(root: string): Promise<BenchRow[]> {
  const n = 1_000;
  const runs = 7;
  const batches: StoredOp[][] = [];
  process.stderr.write("bench: sync: writing ops…\n");
  // One more round than is timed: the first warms both sides' code paths up and is dropped.
  const rounds = runs + 1;
  const all = await makeOps(n * rounds, "p");
  for (let i = 0; i < rounds; i++) batches.push(all.slice(i * n, (i + 1) * n));
  const server = await startSyncServer({ dataDir: path.join(root, "ours-server") });
  if (!server.ok) throw new Error(server.error.message);
  const a = path.join(root, "a");
  const b = path.join(root, "b");
  const init = await initWorkspace(a);
  if (!init.ok) throw new Error(init.error.message);
  const url = init.value.config.graph as AutomergeUrl;
  await init.value.log.close();
  process.stderr.write("bench: sync: first push and clone…\n");
  const first = await syncWorkspace(a, { url: server.value.url });
  if (!first.ok) throw new Error(first.error.message);
  const cloned = await cloneWorkspace(`${server.value.url}/${url}`, b);
  if (!cloned.ok) throw new Error(cloned.error.message);
  const id = url.slice("automerge:".length) as DocumentId;
  let received = 0;
  const legs = {
    ours: { push: [] as number[], pull: [] as number[], both: [] as number[] },
    raw: { push: [] as number[], pull: [] as number[], both: [] as number[] },
  };
  const oursRun = async () => {
    const t0 = performance.now();
    const pushed = await syncWorkspace(a, { url: server.value.url });
    const t1 = performance.now();
    const pulled = await syncWorkspace(b, { url: server.value.url });
    const t2 = performance.now();
    if (!pushed.ok || !pulled.ok) throw new Error("sync failed");
    received = pulled.value.received;
    if (received !== n) throw new Error(`B received ${received} ops, expected ${n}`);
    legs.ours.push.push(t1 - t0);
    legs.ours.pull.push(t2 - t1);
    legs.ours.both.push(t2 - t0);
  };
  /** Copies of the three storages as ours has them now, byte for byte, for raw to start from. */
  const copyForRaw = (k: number) => {
    const copy = (from: string, name: string) => {
      const to = path.join(root, `raw-${name}-${k}`);
      // With the storage ids: what each side persisted of its sync with the other is raw's too.
      fs.cpSync(from, to, { recursive: true });
      return to;
    };
    return {
      a: copy(path.join(a, ".kumiki", "automerge"), "a"),
      b: copy(path.join(b, ".kumiki", "automerge"), "b"),
      server: copy(path.join(root, "ours-server"), "server"),
    };
  };
  const rawRun = async (dirs: { a: string; b: string; server: string }, target: string) => {
    const raw = await rawServer(dirs.server);
    try {
      const t0 = performance.now();
      await rawClientSync(dirs.a, raw.url, url, () => waitServer(raw, id, target));
      const t1 = performance.now();
      await rawClientSync(dirs.b, raw.url, url, (handle) => headsReach(handle, target));
      const t2 = performance.now();
      legs.raw.push.push(t1 - t0);
      legs.raw.pull.push(t2 - t1);
      legs.raw.both.push(t2 - t0);
    } finally {
      await raw.close();
    }
  };
  // Each round: A writes 1,000 ops (each stored durably as written, as an agent's writes are), the
  // three storages are copied for raw, then ours and raw take turns, which goes first alternating,
  // so that a change in the shared machine's load falls on both alike.
  for (let k = 0; k < rounds; k++) {
    process.stderr.write(
      `bench: sync: 1k push+pull, ${k === 0 ? "warm-up round" : `run ${k} of ${runs}`}…\n`,
    );
    const ws = await openWorkspace(a);
    if (!ws.ok) throw new Error(ws.error.message);
    for (const op of batches[k]!) await ws.value.log.append([op]);
    const target = headsOf(ws.value.log.handle.doc());
    await ws.value.log.close();
    const dirs = copyForRaw(k);
    if (k % 2 === 0) {
      await oursRun();
      await rawRun(dirs, target);
    } else {
      await rawRun(dirs, target);
      await oursRun();
    }
    if (k === 0)
      for (const side of [legs.ours, legs.raw]) for (const times of Object.values(side)) times.length = 0;
  }
  const ours = summarize(legs.ours.both);
  const baseline = summarize(legs.raw.both);
  await server.value.close();
  const pairedOf = (leg: "both" | "push" | "pull") => paired(legs.ours[leg], legs.raw[leg]);
  return [
    {
      name: `sync: ${n} ops made in A visible in B through the server`,
      ours,
      baseline: { name: "raw automerge-repo: A pushes, then B pulls (NodeFS, WebSocket)", timing: baseline },
      target: "≤ 1.2×",
      note: `ours: open + handshake + sync + a fold when what arrived is not proven to stand alone + durable flush confirmation + close, for A then B; ${pairedOf("both")}`,
    },
    {
      name: `sync: ${n} ops, A's push (a leg of the row above)`,
      ours: summarize(legs.ours.push),
      baseline: { name: "raw automerge-repo: A pushes", timing: summarize(legs.raw.push) },
      note: `ours also: the server checks every op, confirms once durable; the client reports; ${pairedOf("push")}`,
    },
    {
      name: `sync: ${n} ops, B's pull (a leg of the row above)`,
      ours: summarize(legs.ours.pull),
      baseline: { name: "raw automerge-repo: B pulls", timing: summarize(legs.raw.pull) },
      note: pairedOf("pull"),
    },
  ];
}

/**
 * The median of the runs' own ratios (each run's ours over its raw, measured back to back on the
 * same graph): the runs differ in graph size (2,000 to 8,000 ops) and this shared machine's load
 * drifts, which widens each side's spread far more than the pairs differ.
 */
function paired(ours: readonly number[], raw: readonly number[]): string {
  const ratios = ours.map((o, k) => o / raw[k]!).sort((x, y) => x - y);
  const median = ratios[Math.floor(ratios.length / 2)]!;
  return `paired: median of per-run ratios ${median.toFixed(2)}× (${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)}×)`;
}

async function benchClone(root: string): Promise<BenchRow> {
  const n = 10_000;
  process.stderr.write("bench: sync: building a 10k-op graph…\n");
  const ops = await makeOps(n, "c");
  const seed = path.join(root, "seed");
  const init = await initWorkspace(seed);
  if (!init.ok) throw new Error(init.error.message);
  const url = init.value.config.graph as AutomergeUrl;
  let doc = A.clone(init.value.log.handle.doc());
  for (const op of ops) doc = A.change(doc, (d) => pushBundle(d, [op]));
  const history = A.save(doc);
  init.value.log.handle.update((d) => A.loadIncremental(d, history));
  await init.value.log.close();
  const server = await startSyncServer({ dataDir: path.join(root, "clone-server") });
  if (!server.ok) throw new Error(server.error.message);
  const pushed = await syncWorkspace(seed, { url: server.value.url, timeoutMs: 120_000 });
  if (!pushed.ok) throw new Error(pushed.error.message);
  await server.value.close();
  const rawSrv = path.join(root, "clone-raw-server");
  fs.cpSync(path.join(root, "clone-server"), rawSrv, { recursive: true });
  fs.rmSync(path.join(rawSrv, "storage-adapter-id"), { force: true });
  const ourServer = await startSyncServer({ dataDir: path.join(root, "clone-server") });
  if (!ourServer.ok) throw new Error(ourServer.error.message);
  const raw = await rawServer(rawSrv);
  const target = headsOf(doc);
  const dest = path.join(root, "clone-dest");
  const reset = () => fs.rmSync(dest, { recursive: true, force: true });
  let held = 0;
  const ours = await measure(
    async () => {
      const c = await cloneWorkspace(`${ourServer.value.url}/${url}`, dest, { timeoutMs: 120_000 });
      if (!c.ok) throw new Error(c.error.message);
      held = c.value.ops;
    },
    { runs: 5, warmup: 1, setup: reset },
  );
  if (held !== n) throw new Error(`the clone holds ${held} ops, expected ${n}`);
  // Each raw run gets its own directory: automerge-repo's throttled save can land after shutdown.
  let r = 0;
  const baseline = await measure(
    () => rawClientSync(path.join(root, `raw-dest-${r++}`), raw.url, url, (h) => headsReach(h, target)),
    { runs: 5, warmup: 1 },
  );
  reset();
  await raw.close();
  await ourServer.value.close();
  return {
    name: `sync: fresh clone of a ${n / 1000}k-op graph`,
    ours,
    baseline: {
      name: "raw automerge-repo: find on empty NodeFS storage until the server's heads",
      timing: baseline,
    },
    target: "≤ 1.2×",
    note: "ours: + parsing every op, the readable op log, config and remote written, durable writes",
  };
}
