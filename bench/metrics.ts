import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { startSyncServer, syncWorkspace } from "@kumiki-graph/sync-server";
import { type BenchRow, measure } from "./harness.js";

/**
 * The cost of a Prometheus scrape of `kumiki serve` (issue 40): `GET /metrics` over HTTP on a server
 * that holds a graph and has served a sync, against `GET /health` on the same server in the same
 * run (the cheapest request it answers). Also the size of what a scrape carries.
 */
export async function benchMetrics(): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-metrics-"));
  const started = await startSyncServer({ dataDir: path.join(root, "server") });
  if (!started.ok) throw new Error(started.error.message);
  const server = started.value;
  try {
    const ws = path.join(root, "ws");
    const init = await initWorkspace(ws);
    if (!init.ok) throw new Error(init.error.message);
    await init.value.log.close();
    const opened = await openWorkspaceStore(ws, { author: "agent:bench" });
    if (!opened.ok) throw new Error(opened.error.message);
    for (let i = 0; i < 20; i++)
      await opened.value.store.add({ layer: "slot", name: `s${i}`, body: `Int = ${i}` });
    await opened.value.close();
    const synced = await syncWorkspace(ws, { url: server.url, timeoutMs: 30_000 });
    if (!synced.ok) throw new Error(synced.error.message);
    const http = server.url.replace(/^ws/, "http");
    let bytes = 0;
    const metrics = await measure(
      async () => {
        bytes = (await (await fetch(`${http}/metrics`)).text()).length;
      },
      { runs: 101, warmup: 10 },
    );
    const health = await measure(async () => (await fetch(`${http}/health`)).text(), {
      runs: 101,
      warmup: 10,
    });
    return [
      {
        name: "GET /metrics (a graph loaded, after a sync)",
        ours: metrics,
        baseline: { name: "GET /health", timing: health },
        note: `${bytes.toLocaleString("en")} bytes`,
      },
    ];
  } finally {
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
