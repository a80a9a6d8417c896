import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type AutomergeUrl, type PeerId, Repo } from "@automerge/automerge-repo";
import { WebSocketClientAdapter } from "@automerge/automerge-repo-network-websocket";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { cloneWorkspace, syncWorkspace } from "@kumiki-graph/sync-server";
import { type BenchRow, summarize } from "./harness.js";
import { benchSchema, startBin } from "./services.js";

/**
 * The sync server as a service (issue 23), real `kumiki serve` processes on 127.0.0.1:
 *
 * - throughput: 10 clients, each a workspace holding 100 new ops, sync at once (`syncWorkspace`,
 *   in this process); ops per second = 1,000 / the wall time until every sync has confirmed. On
 *   one server over the durable FS storage, and on 1, 2 and 3 servers sharing one PostgreSQL (the
 *   clients spread over the servers in turn).
 * - latency: a peer stays connected to server 2 (automerge-repo's own client) while a workspace
 *   writes one op and syncs it to server 1; the time from the sync's start to the op's arrival at
 *   the peer, 30 times (median and p99).
 *
 * PostgreSQL is the machine's (`KUMIKI_TEST_POSTGRES` or postgres://postgres@127.0.0.1:5432/test),
 * in a schema made for the run and dropped after; without it only the FS row is printed.
 */
export async function benchSyncService(): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-service-"));
  const db = await benchSchema("kumiki_bench");
  const pgUrl = db.url;
  try {
    const rows: BenchRow[] = [];
    const fsRate = await throughput(root, "fs", 1, undefined);
    rows.push(rateRow("1 server, FS storage", fsRate, undefined));
    if (pgUrl !== undefined) {
      for (const n of [1, 2, 3]) {
        const rate = await throughput(root, `pg${n}`, n, pgUrl);
        rows.push(rateRow(`${n} server${n === 1 ? "" : "s"}, one PostgreSQL`, rate, fsRate));
      }
      rows.push(await latency(root, pgUrl));
    }
    return rows;
  } finally {
    await db.drop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

const CLIENTS = 10;
const OPS_PER_CLIENT = 100;

/** A `kumiki serve` the bench runs: where it listens, and how to stop it. */
interface Server {
  readonly url: string;
  stop(): Promise<void>;
}

/** `kumiki serve` as a child process on a free port, without tokens; resolves once it listens. */
async function serve(dir: string, storage: string | undefined): Promise<Server> {
  const p = await startBin(
    ["serve", "--port", "0", ...(storage === undefined ? ["--data", dir] : ["--storage", storage])],
    /listening on (ws:\/\/\S+)/,
  );
  return { url: p.line, stop: p.stop };
}

async function must<T>(
  r: Promise<{ ok: true; value: T } | { ok: false; error: { message: string } }>,
): Promise<T> {
  const v = await r;
  if (!v.ok) throw new Error(v.error.message);
  return v.value;
}

/** Adds `n` slots to the workspace at `dir` through its store. */
async function addOps(dir: string, prefix: string, n: number): Promise<void> {
  const ws = await must(openWorkspaceStore(dir, { author: `agent:${prefix}` }));
  try {
    for (let i = 0; i < n; i++)
      await must(ws.store.add({ layer: "slot", name: `${prefix}${i}`, body: "Int = 0" }));
  } finally {
    await ws.close();
  }
}

/** Ops per second `servers` servers accept from {@link CLIENTS} clients syncing at once. */
async function throughput(
  root: string,
  label: string,
  servers: number,
  storage: string | undefined,
): Promise<number> {
  const dir = path.join(root, label);
  fs.mkdirSync(dir);
  const running: Server[] = [];
  try {
    for (let i = 0; i < servers; i++) running.push(await serve(path.join(dir, `server${i}`), storage));
    const origin = path.join(dir, "origin");
    const init = await must(initWorkspace(origin));
    const graph = init.log.url;
    await init.log.close();
    await must(syncWorkspace(origin, { url: running[0]!.url, timeoutMs: 60_000 }));
    const clients: string[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const c = path.join(dir, `client${i}`);
      await must(cloneWorkspace(`${running[i % servers]!.url}/${graph}`, c, { timeoutMs: 60_000 }));
      await addOps(c, `c${i}x`, OPS_PER_CLIENT);
      clients.push(c);
    }
    const t0 = performance.now();
    await Promise.all(
      clients.map((c, i) => must(syncWorkspace(c, { url: running[i % servers]!.url, timeoutMs: 120_000 }))),
    );
    return (CLIENTS * OPS_PER_CLIENT) / ((performance.now() - t0) / 1000);
  } finally {
    for (const s of running) await s.stop();
  }
}

function rateRow(config: string, rate: number, fsRate: number | undefined): BenchRow {
  const ms = (1000 / rate) * 1000;
  return {
    name: `sync service: ${CLIENTS} clients push ${OPS_PER_CLIENT} ops each at once, ${config}`,
    ours: { median: ms, min: ms, max: ms, runs: 1 },
    note: `${rate.toFixed(0)} ops/s accepted (the row's time is per 1,000 ops)${fsRate === undefined ? "" : `; FS, one server: ${fsRate.toFixed(0)} ops/s`}`,
  };
}

/** From a sync to server 1 to the op's arrival at a peer connected to server 2, 30 times. */
async function latency(root: string, storage: string): Promise<BenchRow> {
  const dir = path.join(root, "latency");
  fs.mkdirSync(dir);
  const one = await serve(path.join(dir, "s1"), storage);
  const two = await serve(path.join(dir, "s2"), storage);
  const writer = path.join(dir, "writer");
  const init = await must(initWorkspace(writer));
  const graph = init.log.url;
  await init.log.close();
  await must(syncWorkspace(writer, { url: one.url, timeoutMs: 60_000 }));
  const peer = new Repo({
    network: [new WebSocketClientAdapter(two.url, 60_000)],
    peerId: "bench-peer" as PeerId,
  });
  try {
    for (let i = 0; i < 400 && peer.peers.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    const handle = await peer.find(graph as AutomergeUrl);
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      await addOps(writer, `lat${i}x`, 1);
      const name = `lat${i}x0`;
      const t0 = performance.now();
      const arrived = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} did not arrive in 15 s`)), 15_000);
        const check = () => {
          if (JSON.stringify(handle.doc()).includes(name)) {
            clearTimeout(timer);
            handle.off("change", check);
            resolve(performance.now() - t0);
          }
        };
        handle.on("change", check);
        check();
      });
      await must(syncWorkspace(writer, { url: one.url, timeoutMs: 60_000 }));
      samples.push(await arrived);
    }
    const s = [...samples].sort((a, b) => a - b);
    const p99 = s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)]!;
    return {
      name: "sync service: a write synced to server 1 arriving at a peer connected to server 2, one PostgreSQL",
      ours: summarize(samples),
      note: `median ${summarize(samples).median.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms over 30 writes (from the sync's start: the client opens its workspace, connects and pushes)`,
    };
  } finally {
    await peer.shutdown();
    await one.stop();
    await two.stop();
  }
}
