import fs from "node:fs";
import path from "node:path";
import { cbor } from "@automerge/automerge-repo";
import { chunkFiles } from "@kumiki-graph/test-support/files";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { cloneWorkspace, type SyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, serve, TOKENS, tempDir, tokensFor, viewOf, withStore } from "./helpers.js";

const dirs: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

/** Workspace `a` under a fresh root (removed after the test), and a server for its graph, with the usual tokens. */
async function graphOnServer(prefix: string) {
  const root = temp(prefix);
  const a = path.join(root, "a");
  const graph = await newWorkspace(a);
  const server = await serve(path.join(root, "server"), tokensFor(graph));
  servers.push(server);
  return { root, a, graph, server };
}

describe("sync through a server", () => {
  it("clones and syncs through a server URL with a path (a server behind a proxy), as sync takes it", async () => {
    const { root, a, graph, server } = await graphOnServer("path");
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "count", body: "Int = 0" }));
    });
    const url = `${server.url}/kumiki/graphs`;
    must(await syncWorkspace(a, { url, token: TOKENS.alice, author: "agent:a", timeoutMs: 20_000 }));
    const b = path.join(root, "b");
    must(await cloneWorkspace(`${url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 20_000 }));
    expect(await viewOf(b)).toBe(await viewOf(a));
    expect(await viewOf(b)).toContain("slot count : Int = 0");
  });

  it("reports as sent the ops the server did not have, though the whole document went (the server counts them)", async () => {
    const { a, server } = await graphOnServer("sent");
    const sync = async () =>
      must(
        await syncWorkspace(a, {
          url: server.url,
          token: TOKENS.alice,
          author: "agent:a",
          timeoutMs: 20_000,
        }),
      );
    const add = (from: number) =>
      withStore(a, "agent:a", async (s) => {
        for (let i = from; i < from + 60; i++)
          must(await s.add({ layer: "slot", name: `n${i}`, body: `Int = ${i}` }));
      });
    await add(0);
    expect((await sync()).sent).toBe(60);
    // The server lacks half of the graph now: Automerge sends the whole document (120 ops in it).
    await add(60);
    const second = await sync();
    expect(second.sent).toBe(60);
    expect(second.ops).toBe(120);
    // Nothing new: nothing sent.
    expect((await sync()).sent).toBe(0);
  });

  it("reports only the conflicts and quarantined ops a sync brought, not those the graph held before", async () => {
    const { root, a, graph, server } = await graphOnServer("new-conflicts");
    const b = path.join(root, "b");
    const sync = async (dir: string, token: string, author: string) =>
      must(await syncWorkspace(dir, { url: server.url, token, author, timeoutMs: 20_000 }));
    await sync(a, TOKENS.alice, "agent:a");
    must(await cloneWorkspace(`${server.url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 20_000 }));
    // The same name added on both sides: the merge records one conflict, where it arrives.
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "count", body: "Int = 1" }));
    });
    await withStore(b, "agent:b", async (s) => {
      must(await s.add({ layer: "slot", name: "count", body: "Int = 2" }));
    });
    expect((await sync(a, TOKENS.alice, "agent:a")).conflicts).toEqual([]);
    const merged = await sync(b, TOKENS.bob, "agent:b");
    expect(merged.received).toBe(1);
    expect(merged.conflicts.length).toBe(1);
    // From here on the graph holds that conflict: a push that receives nothing reports none ...
    await withStore(b, "agent:b", async (s) => {
      must(await s.add({ layer: "slot", name: "more", body: "Int = 3" }));
    });
    const pushed = await sync(b, TOKENS.bob, "agent:b");
    expect(pushed.received).toBe(0);
    expect(pushed.conflicts).toEqual([]);
    // ... and a sync that receives ops unrelated to it reports none either, nor does it roll back.
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "other", body: "Int = 4" }));
    });
    await sync(a, TOKENS.alice, "agent:a");
    const pulled = await sync(b, TOKENS.bob, "agent:b");
    expect(pulled.received).toBe(1);
    expect(pulled.conflicts).toEqual([]);
    expect(pulled.rolledBack).toEqual([]);
    expect(JSON.parse(await viewOf(b)).conflicts.length).toBe(1);
  });

  it("three workspaces with concurrent conflicting ops converge to identical views", async () => {
    const { root, a, graph, server } = await graphOnServer("three");
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "type", name: "TodoId", body: "nominal Text where uuid" }));
    });
    const first = must(
      await syncWorkspace(a, { url: server.url, token: TOKENS.alice, author: "agent:a", timeoutMs: 20_000 }),
    );
    expect(first.sent).toBe(1);
    const b = path.join(root, "b");
    const c = path.join(root, "c");
    must(await cloneWorkspace(`${server.url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 20_000 }));
    must(await cloneWorkspace(`${server.url}/${graph}`, c, { token: TOKENS.admin, timeoutMs: 20_000 }));
    // Concurrent: the same name added on all three, plus one distinct op each.
    for (const [dir, who, n] of [
      [a, "agent:a", 1],
      [b, "agent:b", 2],
      [c, "agent:c", 3],
    ] as const) {
      await withStore(dir, who, async (s) => {
        must(await s.add({ layer: "slot", name: "count", body: `Int = ${n}` }));
        must(await s.add({ layer: "slot", name: `only${n}`, body: `Int = ${n}` }));
      });
    }
    const tokens = { [a]: TOKENS.alice, [b]: TOKENS.bob, [c]: TOKENS.admin };
    const authors = { [a]: "agent:a", [b]: "agent:b", [c]: "agent:c" };
    const reports = [];
    for (const dir of [a, b, c, a, b])
      reports.push(
        must(
          await syncWorkspace(dir, {
            url: server.url,
            token: tokens[dir],
            author: authors[dir],
            timeoutMs: 20_000,
          }),
        ),
      );
    const views = await Promise.all([viewOf(a), viewOf(b), viewOf(c)]);
    expect(views[1]).toBe(views[0]);
    expect(views[2]).toBe(views[0]);
    const parsed = JSON.parse(views[0]!) as { texts: string[]; conflicts: { kind: string }[] };
    expect(parsed.texts.filter((t) => t.includes("only")).length).toBe(3);
    expect(parsed.conflicts.length).toBe(2);
    // Two of the three same-name adds lost: their authors were told (rolled back, exit 1 in the CLI).
    const losers = reports.flatMap((r) => r.rolledBack.map((x) => x.opId));
    expect(new Set(losers).size).toBe(2);
  });
});

describe("one syncer for several agents, and a server that never answers", () => {
  it("reports every author's rolled-back writes, each with its author, not only the syncer's", async () => {
    const { root, a, graph, server } = await graphOnServer("authors");
    const b = path.join(root, "b");
    must(
      await syncWorkspace(a, {
        url: server.url,
        token: TOKENS.alice,
        author: "user:syncer",
        timeoutMs: 20_000,
      }),
    );
    must(await cloneWorkspace(`${server.url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 20_000 }));
    // Two agents write in workspace a; a peer adds the same names later in b (greatest op-id wins).
    await withStore(a, "agent:x", async (s) => {
      must(await s.add({ layer: "slot", name: "s", body: "Int = 1" }));
    });
    await withStore(a, "agent:y", async (s) => {
      must(await s.add({ layer: "slot", name: "t", body: "Int = 1" }));
    });
    await withStore(b, "agent:z", async (s) => {
      must(await s.add({ layer: "slot", name: "s", body: "Int = 2" }));
      must(await s.add({ layer: "slot", name: "t", body: "Int = 2" }));
    });
    must(
      await syncWorkspace(b, { url: server.url, token: TOKENS.bob, author: "agent:z", timeoutMs: 20_000 }),
    );
    const r = must(
      await syncWorkspace(a, {
        url: server.url,
        token: TOKENS.alice,
        author: "user:syncer",
        timeoutMs: 20_000,
      }),
    );
    expect(r.rolledBack.map((x) => [x.author, x.local]).sort()).toEqual([
      ["agent:x", true],
      ["agent:y", true],
    ]);
  });

  it("a server that takes the flush request and never answers: the sync ends at its timeout", async () => {
    const root = temp("mute");
    const a = path.join(root, "a");
    await newWorkspace(a);
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "n", body: "Int = 0" }));
    });
    // It answers the handshake, then says nothing more.
    const mute = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    mute.on("connection", (socket) => {
      socket.on("message", (data: Buffer) => {
        const m = cbor.decode(new Uint8Array(data)) as { type?: string; senderId?: string };
        if (m.type === "join")
          socket.send(
            cbor.encode({
              type: "peer",
              senderId: "mute-server",
              targetId: m.senderId,
              peerMetadata: {},
              selectedProtocolVersion: "1",
            }),
          );
      });
    });
    await new Promise<void>((resolve) => mute.once("listening", () => resolve()));
    const port = (mute.address() as { port: number }).port;
    try {
      const started = Date.now();
      // Bounded here too: without the deadline on the flush, the sync never answers.
      const r = await Promise.race([
        syncWorkspace(a, { url: `ws://127.0.0.1:${port}`, author: "agent:a", timeoutMs: 1_500 }),
        new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 15_000)),
      ]);
      expect(r === "hung" ? "hung" : r.ok ? "ok" : r.error.code).toBe("timeout");
      if (r !== "hung" && !r.ok) expect(r.error.message).toMatch(/did not finish within 2 s/);
      console.info(`sync --timeout 1.5 s against a mute server answered after ${Date.now() - started} ms`);
    } finally {
      for (const c of mute.clients) c.terminate();
      await new Promise<void>((resolve) => mute.close(() => resolve()));
    }
  });
});

describe("a damaged chunk in the server's data folder", () => {
  it("is held back and named on /health, and the clients' next sync gives the server back what it held", async () => {
    const root = temp("server-damage");
    const a = path.join(root, "a");
    const data = path.join(root, "server");
    const graph = await newWorkspace(a);
    let server = await serve(data);
    const sync = (dir: string) =>
      syncWorkspace(dir, { url: server.url, author: "agent:a", timeoutMs: 20_000 });
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "one", body: "Int = 1" }));
    });
    must(await sync(a));
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "two", body: "Int = 2" }));
    });
    must(await sync(a));
    await server.close();
    // Every chunk file of the graph cut short by 7 bytes: what the server held is unreadable.
    const files = chunkFiles(data);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) fs.truncateSync(f, Math.max(0, fs.statSync(f).size - 7));

    server = await serve(data);
    servers.push(server);
    expect(server.health().damage).toBeUndefined(); // nothing loaded yet
    const r = must(await sync(a));
    expect(r.sent).toBeGreaterThan(0);
    const health = (await (await fetch(`${server.url.replace("ws:", "http:")}/health`)).json()) as {
      ok: boolean;
      damage?: { count: number; files: { graph: string; name: string; reason: string }[] };
    };
    expect(health.ok).toBe(true);
    expect(health.damage?.count).toBe(files.length);
    expect(health.damage?.files[0]).toMatchObject({ graph, reason: expect.stringMatching(/truncated/) });
    // The damaged files stay where they were, untouched; what A pushed again is served to a clone.
    for (const f of files) expect(fs.existsSync(f)).toBe(true);
    const c = path.join(root, "c");
    must(await cloneWorkspace(`${server.url}/${graph}`, c, { timeoutMs: 20_000 }));
    expect(await viewOf(c)).toBe(await viewOf(a));
    expect(await viewOf(c)).toContain("slot two : Int = 2");
  });
});
