/**
 * Sharding behind a proxy: clients connect to a graph's own path (`ws://host/g/<graph>`), so an
 * HTTP proxy that knows nothing of Kumiki can send each graph to its own server. Here a minimal
 * path-routing proxy on 127.0.0.1 (it forwards the upgrade's bytes, nothing more) sends one graph
 * to server 1 and everything else to server 2; each graph lands on its server alone, and a
 * connection to one graph's path reaches no other graph, whatever its token grants.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import path from "node:path";
import { type AutomergeUrl, type PeerId, Repo } from "@automerge/automerge-repo";
import { WebSocketClientAdapter } from "@automerge/automerge-repo-network-websocket";
import { afterEach, describe, expect, it } from "vitest";
import { cloneWorkspace, type SyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, serve, TOKENS, tempDir, tokensFor, withStore } from "./helpers.js";

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A proxy that routes each WebSocket upgrade by its path to the port `route` gives. */
async function routingProxy(route: (requestPath: string) => number): Promise<string> {
  const proxy = http.createServer((_req, res) => {
    res.writeHead(404);
    res.end();
  });
  const sockets = new Set<net.Socket>();
  proxy.on("upgrade", (req, socket: net.Socket, head: Buffer) => {
    const upstream = net.connect(route(req.url ?? "/"), "127.0.0.1", () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => {
        sockets.delete(s);
        socket.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve()));
  closers.push(
    () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => resolve());
      }),
  );
  return `ws://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

async function server(root: string, name: string, graphs: readonly string[]): Promise<SyncServer> {
  // The admin token may write every graph ("*"): only the routing keeps a graph on its server.
  const s = await serve(path.join(root, name), tokensFor(graphs[0]!));
  closers.push(() => s.close());
  return s;
}

describe("sharding behind a proxy", () => {
  it("routes each graph by its path to its own server, and a graph's path reaches that graph only", async () => {
    const root = tempDir("proxy");
    dirs.push(root);
    const a = path.join(root, "a");
    const b = path.join(root, "b");
    const graphA = await newWorkspace(a);
    const graphB = await newWorkspace(b);
    for (const [dir, name] of [
      [a, "fromA"],
      [b, "fromB"],
    ] as const)
      await withStore(dir, "agent:x", async (s) =>
        must(await s.add({ layer: "slot", name, body: "Int = 1" })),
      );
    const one = await server(root, "one", [graphA]);
    const two = await server(root, "two", [graphA]);
    const port = (s: SyncServer) => Number(new URL(s.url.replace("ws:", "http:")).port);
    const proxy = await routingProxy((p) => (p.includes(`/g/${graphA}`) ? port(one) : port(two)));

    for (const dir of [a, b])
      must(await syncWorkspace(dir, { url: proxy, token: TOKENS.admin, timeoutMs: 20_000 }));
    // Graph A is on server 1 only, graph B on server 2 only.
    const clone = (s: SyncServer, graph: string, name: string) =>
      cloneWorkspace(`${s.url}/${graph}`, path.join(root, name), { token: TOKENS.admin, timeoutMs: 10_000 });
    expect(must(await clone(one, graphA, "a1")).ops).toBe(1);
    expect(must(await clone(two, graphB, "b2")).ops).toBe(1);
    const missing = await clone(two, graphA, "a2");
    expect(missing.ok ? "" : missing.error.code).toBe("graph-unavailable");
    // Through the proxy, by its graph path too (clone takes what sync connects to).
    expect(
      must(
        await cloneWorkspace(`${proxy}/g/${graphB}`, path.join(root, "b3"), {
          token: TOKENS.admin,
          timeoutMs: 10_000,
        }),
      ).ops,
    ).toBe(1);

    // A connection to graph A's path on server 2, with the admin token: graph B (held there) is
    // out of its reach.
    const raw = new Repo({
      network: [new WebSocketClientAdapter(`${two.url}/g/${graphA}?token=${TOKENS.admin}`, 60_000)],
      peerId: "pinned-peer" as PeerId,
    });
    try {
      for (let i = 0; i < 400 && raw.peers.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      const found = await raw
        .find(graphB as AutomergeUrl, { allowableStates: ["ready", "unavailable"] })
        .then((h) => (h.isReady() ? "ready" : "unavailable"))
        .catch(() => "unavailable");
      expect(found).toBe("unavailable");
    } finally {
      await raw.shutdown();
    }
  });
});
