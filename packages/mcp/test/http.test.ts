/**
 * `kumiki mcp serve --http`: the real bin serving a workspace over Streamable HTTP, reached with the
 * SDK's StreamableHTTPClientTransport. The same tools and the same answers as over stdio (one
 * scenario through both, compared); several sessions on one store, each told only of its own
 * losses; DNS-rebinding protection (Host, Origin), the session limit, an unknown session.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync } from "node:fs";
import http from "node:http";
import { createInterface } from "node:readline";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Called,
  connectHttp,
  dispose,
  errorOf,
  kumikiBin,
  ok,
  type Session,
  serve,
  tempDir,
  workspaceFrom,
} from "./support/session.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs) await dispose(d);
});

/** Starts `kumiki mcp serve --http 0` on `dir`; resolves with the endpoint's URL. */
async function serveHttp(
  dir: string,
  extra: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess; log: () => string }> {
  const child = spawn(
    process.execPath,
    [kumikiBin, "mcp", "serve", "--http", "0", "--store", dir, ...extra],
    {
      env: { ...process.env, KUMIKI_AUTHOR: "agent:test" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let err = "";
  child.stderr!.on("data", (b: Buffer) => {
    err += b.toString("utf8");
  });
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`exited ${code} before listening: ${err}`)));
  });
  const url = /serving MCP on (\S+)/.exec(first)?.[1];
  if (url === undefined) throw new Error(`unexpected first line: ${first}`);
  return { url, child, log: () => err };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  return exited;
}

/** An answer with the identities (op-ids, def ids, timestamps) masked: what two workspaces share. */
function masked(c: Called): unknown {
  return JSON.parse(
    JSON.stringify(c)
      .replace(/op_[0-9A-Z]{26}/g, "op_*")
      .replace(/def_[0-9A-Z]{26}/g, "def_*")
      .replace(/"ts":\d+/g, '"ts":0'),
  );
}

const PROGRAM = "slot count : Int = 0\n\ntype Point = { x: Int, y: Int }\n";

/** One scenario of reads and writes, as an agent would run it; the answers, in order. */
async function scenario(s: Session): Promise<unknown[]> {
  const steps: [string, Record<string, unknown>][] = [
    ["kumiki_list", {}],
    ["kumiki_view", { selector: "slot.count" }],
    ["kumiki_add", { layer: "fn", name: "px", body: "(p: Point) -> Int = p.x" }],
    ["kumiki_add", { layer: "fn", name: "px", body: "(p: Point) -> Int = p.y" }],
    ["kumiki_edit", { qname: "fn.px", patch: [{ find: "p.x", replace: "p.y" }] }],
    // One anchor alone, as kumiki edit and a bundle's edit item take it.
    ["kumiki_edit", { qname: "fn.px", patch: { find: "p.y", replace: "p.x" } }],
    ["kumiki_view", { selector: "fn.*", with_deps: true }],
    ["kumiki_refs", { qname: "type.Point" }],
    ["kumiki_check", {}],
    ["kumiki_rename", { qname: "slot.count", new_name: "total" }],
    ["kumiki_view", { selector: "slot.nope" }],
    ["kumiki_remove", { qname: "fn.px" }],
    ["kumiki_list", { layer: "fn" }],
  ];
  const out: unknown[] = [];
  for (const [name, args] of steps) out.push([name, masked(await s.call(name, args))]);
  return out;
}

describe("kumiki mcp serve --http", () => {
  it("answers one scenario exactly as stdio does, and lists the same tools", async () => {
    const a = await tempDir("http-a");
    const b = await tempDir("http-b");
    dirs.push(a, b);
    await workspaceFrom(a, PROGRAM);
    await workspaceFrom(b, PROGRAM);
    const server = await serveHttp(a);
    const overHttp = await connectHttp(server.url, { hostPath: a, serverLog: server.log });
    const overStdio = await serve(b);
    try {
      const [httpTools, stdioTools] = [await overHttp.client.listTools(), await overStdio.client.listTools()];
      expect(httpTools).toEqual(stdioTools);
      const viaHttp = await scenario(overHttp);
      const viaStdio = await scenario(overStdio);
      expect(viaHttp).toEqual(viaStdio);
      // And the scenario did what it says: the second add was refused, the rename stands.
      expect(JSON.stringify(viaHttp[3])).toContain("duplicate-name");
      expect(JSON.stringify(viaHttp[5])).not.toContain('"isError":true');
      expect(JSON.stringify(viaHttp[6])).toContain("p.x");
      expect(ok(await overHttp.call("kumiki_list", { layer: "slot" })).definitions).toEqual([
        { qname: "slot.total", def: expect.stringMatching(/^def_/) },
      ]);
    } finally {
      await overHttp.close();
      await overStdio.close();
      expect(await stop(server.child)).toBe(0);
    }
  }, 120_000);

  it("serves several sessions on one store: each sees the others' writes and is told only its own losses", async () => {
    const dir = await tempDir("http-sessions");
    const peerDir = await tempDir("http-sessions-peer");
    dirs.push(dir, peerDir);
    await workspaceFrom(dir, "slot x : Int = 0\n\nslot y : Int = 0\n");
    cpSync(dir, peerDir, { recursive: true });
    const server = await serveHttp(dir);
    const s1 = await connectHttp(server.url, { serverLog: server.log });
    const s2 = await connectHttp(server.url, { serverLog: server.log });
    const heard: { one: unknown[]; two: unknown[] } = { one: [], two: [] };
    s1.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void heard.one.push(n.params.data),
    );
    s2.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void heard.two.push(n.params.data),
    );
    const peer = await openWorkspaceStore(peerDir, { author: "agent:peer" });
    const sync = await openWorkspaceStore(dir, { author: "agent:sync" });
    if (!peer.ok || !sync.ok) throw new Error("cannot open the peer or the sync store");
    try {
      const mine = ok(await s1.call("kumiki_replace", { qname: "slot.x", body: ": Int = 1" }));
      ok(await s2.call("kumiki_replace", { qname: "slot.y", body: ": Int = 2" }));
      // Read your writes, and the other session's, at once.
      expect(ok(await s2.call("kumiki_view", { selector: "slot.x" })).text).toContain("Int = 1");
      expect(ok(await s1.call("kumiki_view", { selector: "slot.y" })).text).toContain("Int = 2");
      // A peer's later replace of x, not having seen session 1's, wins the merge when it arrives.
      const theirs = await peer.value.store.replace({ qname: "slot.x", body: ": Int = 3" });
      if (!theirs.ok) throw new Error(theirs.error.message);
      const took = await sync.value.store.ingest(theirs.value.ops);
      if (!took.ok) throw new Error(took.error.message);
      for (let i = 0; i < 300 && heard.one.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(heard.one).toHaveLength(1);
      expect(heard.one[0]).toMatchObject({
        kind: "write-lost",
        lost: [{ opId: (mine.opIds as string[])[0] }],
      });
      await new Promise((r) => setTimeout(r, 400));
      expect(heard.two).toEqual([]);
    } finally {
      await s1.close();
      await s2.close();
      await peer.value.close();
      await sync.value.close();
      expect(await stop(server.child)).toBe(0);
    }
  }, 120_000);

  it("refuses another Host or a browser Origin, a session past the limit and an unknown session", async () => {
    const dir = await tempDir("http-refusals");
    dirs.push(dir);
    await workspaceFrom(dir, PROGRAM);
    const server = await serveHttp(dir, ["--limit", "httpSessions=2", "--origin", "http://127.0.0.1:9"]);
    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: init,
      });
    const sessions: Session[] = [];
    try {
      // DNS rebinding: a page on another name that resolves here, or on another origin.
      // (fetch will not send another Host: node:http will.)
      const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          server.url,
          {
            method: "POST",
            headers: {
              host: "evil.example",
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
          },
          (res) => {
            let body = "";
            res.on("data", (b: Buffer) => {
              body += b.toString("utf8");
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on("error", reject);
        req.end(init);
      });
      expect(rebound.status).toBe(403);
      expect((JSON.parse(rebound.body) as { error: { message: string } }).error.message).toMatch(/Host/);
      const foreign = await post({ origin: "http://evil.example" });
      expect(foreign.status).toBe(403);
      expect(((await foreign.json()) as { error: { message: string } }).error.message).toMatch(/origin/);
      // An allowed origin is served.
      const allowed = await post({ origin: "http://127.0.0.1:9" });
      expect(allowed.status).toBe(200);
      const allowedId = allowed.headers.get("mcp-session-id");
      expect(allowedId).toMatch(/^[0-9a-f-]{36}$/);
      await allowed.body?.cancel();
      // The limit: this server holds 2 sessions; a third is refused with 503 until one ends.
      sessions.push(await connectHttp(server.url, { serverLog: server.log }));
      const third = await post({});
      expect(third.status).toBe(503);
      expect(((await third.json()) as { error: { message: string } }).error.message).toMatch(/httpSessions/);
      const ended = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": allowedId! } });
      expect(ended.status).toBe(200);
      sessions.push(await connectHttp(server.url, { serverLog: server.log }));
      // An unknown (or ended) session: 404, so the client begins a new one.
      const unknown = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": allowedId!,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(unknown.status).toBe(404);
      // The sessions served meanwhile are whole.
      for (const s of sessions)
        expect(errorOf(await s.call("kumiki_view", { selector: "slot.none" })).kind).toBe("not-found");
    } finally {
      for (const s of sessions) await s.close();
      expect(await stop(server.child)).toBe(0);
    }
  }, 120_000);

  it("ends a session idle past idleSeconds, but not one whose notification stream is open", async () => {
    const dir = await tempDir("http-idle");
    dirs.push(dir);
    await workspaceFrom(dir, PROGRAM);
    const server = await serveHttp(dir, ["--limit", "idleSeconds=1"]);
    // The SDK's client opens the GET stream of notifications once initialized, and holds it.
    const listening = await connectHttp(server.url, { serverLog: server.log });
    try {
      const raw = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "0" },
          },
        }),
      });
      expect(raw.status).toBe(200);
      const silent = raw.headers.get("mcp-session-id")!;
      await raw.body?.cancel();
      // Bounded: the sweep runs every 250 ms at idleSeconds=1; give it 3 s past the second.
      await new Promise((r) => setTimeout(r, 1_000));
      let status = 200;
      for (let i = 0; i < 30 && status !== 404; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const again = await fetch(server.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": silent,
          },
          body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        });
        status = again.status;
        await again.body?.cancel();
        // Each probe is a request, which resets the clock: probe only after it could have run out.
        if (status !== 404) await new Promise((r) => setTimeout(r, 1_300));
      }
      expect(status).toBe(404);
      expect(server.log()).toMatch(new RegExp(`session ${silent} ended: idle for 1 s`));
      // The listening session made no request for as long, yet its stream kept it.
      ok(await listening.call("kumiki_view", { selector: "slot.count" }));
    } finally {
      await listening.close();
      expect(await stop(server.child)).toBe(0);
    }
  }, 120_000);

  it("offers each definition as a resource of the kumiki://definition/{qname} template, and completes its qname", async () => {
    const dir = await tempDir("http-resources");
    dirs.push(dir);
    await workspaceFrom(dir, PROGRAM);
    const server = await serveHttp(dir);
    const s = await connectHttp(server.url, { serverLog: server.log });
    try {
      const templates = await s.client.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["kumiki://definition/{qname}"]);
      const read = await s.client.readResource({ uri: "kumiki://definition/slot.count" });
      expect(read.contents).toEqual([
        { uri: "kumiki://definition/slot.count", mimeType: "text/plain", text: "slot count : Int = 0\n" },
      ]);
      await expect(s.client.readResource({ uri: "kumiki://definition/slot.nope" })).rejects.toThrow(
        /-32002.*no definition slot\.nope/,
      );
      const ref = { type: "ref/resource" as const, uri: "kumiki://definition/{qname}" };
      const all = await s.client.complete({ ref, argument: { name: "qname", value: "" } });
      // In listing order (by layer), as kumiki_list gives them.
      expect(all.completion.values).toEqual(["type.Point", "slot.count"]);
      const slots = await s.client.complete({ ref, argument: { name: "qname", value: "ty" } });
      expect(slots.completion).toMatchObject({ values: ["type.Point"], total: 1, hasMore: false });
      await expect(
        s.client.complete({ ref: { type: "ref/prompt", name: "any" }, argument: { name: "x", value: "" } }),
      ).rejects.toThrow(/no prompts/);
    } finally {
      await s.close();
      expect(await stop(server.child)).toBe(0);
    }
  }, 120_000);
});
