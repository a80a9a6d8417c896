import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { syncWorkspace } from "@kumiki-graph/sync-server";
import { type BenchRow, summarize } from "./harness.js";
import { repoRoot } from "./paths.js";

/**
 * Two figures of issue 40 that are times between events, not costs:
 *
 * - how soon an open store's `onChange` hears another process's write: 10 real node processes each
 *   add one definition to the workspace and print when the add was acknowledged; the listener's
 *   clock minus that one (same machine, same clock);
 * - the reconnect schedule against a dead server: a TCP server that accepts and drops every
 *   connection, and `syncWorkspace` trying it for 25 s; the gaps between its attempts.
 */
export async function benchEdges(): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-edges-"));
  try {
    return [await changeLatency(path.join(root, "watch")), await reconnectSchedule(path.join(root, "dead"))];
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function changeLatency(dir: string): Promise<BenchRow> {
  const opened = await openWorkspaceStore(dir, { create: true, author: "agent:bench" });
  if (!opened.ok) throw new Error(opened.error.message);
  const samples: number[] = [];
  try {
    for (let i = 0; i < 10; i++) {
      const heard = new Promise<number>((resolve) => {
        const stop = opened.value.store.onChange((e) => {
          if (e.source !== "remote") return;
          stop();
          resolve(Date.now());
        });
      });
      const script = `import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
const ws = await openWorkspaceStore(${JSON.stringify(dir)}, { author: "agent:other" });
if (!ws.ok) throw new Error(ws.error.message);
const r = await ws.value.store.add({ layer: "slot", name: "n${i}", body: ": Int = 1" });
if (!r.ok) throw new Error(r.error.message);
console.log(Date.now());
await ws.value.close();`;
      const acknowledged = await new Promise<number>((resolve, reject) =>
        execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: repoRoot }, (e, out) =>
          e ? reject(e) : resolve(Number(out.trim())),
        ),
      );
      samples.push((await heard) - acknowledged);
    }
  } finally {
    await opened.value.close();
  }
  return {
    name: "onChange hears another process's write (ms after its add was acknowledged; 10 writes)",
    ours: summarize(samples),
    target: "within 1 s",
  };
}

async function reconnectSchedule(dir: string): Promise<BenchRow> {
  const attempts: number[] = [];
  const dead = net.createServer((socket) => {
    attempts.push(Date.now());
    socket.destroy();
  });
  await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
  try {
    const init = await initWorkspace(dir);
    if (!init.ok) throw new Error(init.error.message);
    await init.value.log.close();
    const port = (dead.address() as net.AddressInfo).port;
    // connectTries raised: by default a sync that never opened a socket gives up after 4 tries.
    await syncWorkspace(dir, { url: `ws://127.0.0.1:${port}`, timeoutMs: 25_000, connectTries: 1_000 });
  } finally {
    dead.close();
  }
  const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
  return {
    name: "reconnect gaps against a server that drops every connection (25 s of syncWorkspace)",
    ours: summarize(gaps),
    note: `${attempts.length} attempts; gaps ${gaps.map((g) => g.toLocaleString("en")).join(", ")} ms`,
  };
}
