/**
 * Back-pressure for slow readers: a peer that stops reading (a real process, SIGSTOPped) while the
 * graph grows is dropped once it leaves more than `maxBufferedBytes` unread; the server is not held
 * up (its /health answers, another peer syncs), and the peer, let go on, reconnects and has every
 * op. A real sync server on 127.0.0.1 and a real automerge-repo client in a child process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as A from "@automerge/automerge";
import type { DocumentId } from "@automerge/automerge-repo";
import { afterEach, describe, expect, it } from "vitest";
import { cloneWorkspace, type SyncServer, startSyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, tempDir } from "./helpers.js";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const dirs: string[] = [];
const servers: SyncServer[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGCONT");
      c.kill("SIGKILL");
    }
  }
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** `n` characters Automerge's compression cannot shrink much. */
function noise(n: number, seed: number): string {
  let s = "";
  let x = seed;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    s += x.toString(36);
  }
  return s.slice(0, n);
}

/**
 * A peer in its own process: an automerge-repo Repo over the package's KumikiClientAdapter that
 * holds the graph and prints, every 100 ms, its heads and how many connections it has made.
 */
function livePeer(url: string, documentId: string) {
  const script = `
    import { Repo } from "@automerge/automerge-repo";
    import * as A from "@automerge/automerge";
    import { KumikiClientAdapter } from "@kumiki-graph/sync-server";
    const adapter = new KumikiClientAdapter(${JSON.stringify(url)});
    const repo = new Repo({ network: [adapter] });
    const handle = await repo.find(${JSON.stringify(documentId)});
    setInterval(() => {
      const heads = A.getHeads(handle.doc()).sort().join(",");
      console.log("state " + adapter.stats.connections + " " + heads);
    }, 100);
  `;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(proc);
  let last: { connections: number; heads: string } | undefined;
  let err = "";
  let buf = "";
  proc.stdout!.on("data", (b: Buffer) => {
    buf += b.toString("utf8");
    const lines = buf.split("\n");
    buf = lines.pop()!;
    for (const l of lines) {
      const m = /^state (\d+) (.*)$/.exec(l);
      if (m) last = { connections: Number(m[1]), heads: m[2]! };
    }
  });
  proc.stderr!.on("data", (b: Buffer) => {
    err += b.toString("utf8");
  });
  return {
    proc,
    /** Waits (bounded) until the peer holds exactly `heads`; returns its connection count. */
    async holds(heads: string[], ms: number): Promise<number> {
      const want = [...heads].sort().join(",");
      for (let t = 0; t < ms / 100; t++) {
        if (last?.heads === want) return last.connections;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `the peer never held the server's heads (last: ${JSON.stringify(last)}); stderr:\n${err}`,
      );
    },
  };
}

describe("a peer that stops reading", () => {
  it("is dropped past maxBufferedBytes, holds nobody up, and syncs on when it reads again", async () => {
    const root = tempDir("slow-reader");
    dirs.push(root);
    const started = await startSyncServer({
      dataDir: path.join(root, "server"),
      maxBufferedBytes: 1024 * 1024,
    });
    if (!started.ok) throw new Error(started.error.message);
    const server = started.value;
    servers.push(server);
    const ws = path.join(root, "ws");
    const graph = await newWorkspace(ws);
    must(await syncWorkspace(ws, { url: server.url, timeoutMs: 20_000 }));
    const documentId = graph.slice("automerge:".length) as DocumentId;
    const serverHeads = () => A.getHeads(server.repo.handles[documentId]!.doc());

    const peer = livePeer(server.url, graph);
    expect(await peer.holds(serverHeads(), 20_000)).toBe(1);
    peer.proc.kill("SIGSTOP");

    // The graph grows by writes of 1 MB while the peer reads nothing, until it is dropped: past the
    // loopback socket buffers (a few MB) and the 1 MiB bound together (here after 2 or 3 writes,
    // in under 2 s, before keep-alive's pings, unanswered, would end it at 5 to 10 s).
    const store = must(await server.openStore(graph));
    for (let i = 0; i < 24 && server.health().slowPeersDropped === 0; i++)
      must(await store.add({ layer: "slot", name: `blob${i}`, body: `Text = "${noise(990_000, i + 7)}"` }));
    for (let t = 0; t < 100 && server.health().slowPeersDropped === 0; t++)
      await new Promise((r) => setTimeout(r, 100));
    expect(server.health().slowPeersDropped).toBe(1);

    // Nobody waits on it: /health answers, and another workspace clones the whole graph.
    const res = await fetch(`${server.url.replace("ws:", "http:")}/health`);
    expect(res.status).toBe(200);
    const other = must(
      await cloneWorkspace(`${server.url}/${graph}`, path.join(root, "other"), { timeoutMs: 60_000 }),
    );
    expect(other.ops).toBeGreaterThanOrEqual(3);

    // Let go on, the peer finds its socket gone, reconnects and holds every op the server has.
    peer.proc.kill("SIGCONT");
    expect(await peer.holds(serverHeads(), 60_000)).toBeGreaterThanOrEqual(2);
  }, 150_000);
});
