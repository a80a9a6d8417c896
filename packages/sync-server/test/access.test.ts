import fs from "node:fs";
import path from "node:path";
import * as A from "@automerge/automerge";
import { type AutomergeUrl, type PeerId, Repo } from "@automerge/automerge-repo";
import { WebSocketClientAdapter } from "@automerge/automerge-repo-network-websocket";
import type { OpLogDocument } from "@kumiki-graph/storage-automerge";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { cloneWorkspace, parseTokenFile, type SyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, serve, TOKENS, tempDir, tokensFor, withStore } from "./helpers.js";

const dirs: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A server holding a graph of one op (pushed by alice), and the admin's view of its op count. */
async function setup(prefix: string) {
  const root = tempDir(prefix);
  dirs.push(root);
  const a = path.join(root, "a");
  const graph = await newWorkspace(a);
  const server = await serve(path.join(root, "server"), tokensFor(graph));
  servers.push(server);
  await withStore(a, "agent:a", async (s) => {
    must(await s.add({ layer: "slot", name: "todos", body: "Int = 1" }));
  });
  must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 }));
  let n = 0;
  /** How many ops a fresh clone (admin token) gets from the server. */
  const opsOnServer = async () => {
    const d = path.join(root, `check-${n++}`);
    const c = must(
      await cloneWorkspace(`${server.url}/${graph}`, d, { token: TOKENS.admin, timeoutMs: 20_000 }),
    );
    return c.ops;
  };
  return { root, a, graph, server, opsOnServer };
}

/**
 * A raw automerge-repo peer pushes a rewrite of the graph's first op (`slot todos : Int = 1`)
 * under its op-id; resolves once `server` refused it and a fresh clone through it holds the
 * original, not the forgery.
 */
async function forgeAndCheck(root: string, graph: string, server: SyncServer, peerId: string): Promise<void> {
  const raw = new Repo({
    network: [new WebSocketClientAdapter(`${server.url}/?token=${TOKENS.alice}`, 60_000)],
    peerId: peerId as PeerId,
  });
  try {
    await until("the raw peer's handshake", () => raw.peers.length > 0);
    const handle = await raw.find<OpLogDocument>(graph as AutomergeUrl);
    const [original] = JSON.parse(String(handle.doc().chunks[0]![0]!)) as Record<string, unknown>[];
    expect(original?.body).toContain("Int = 1");
    handle.change((d) => {
      d.chunks[0]!.push(new A.ImmutableString(JSON.stringify([{ ...original, body: " : Int = 99999" }])));
    });
    await until("the server's refusal", () =>
      server.refusals().some((e) => /already held with other content/.test(e.reason)),
    );
  } finally {
    await raw.shutdown();
  }
  const d = path.join(root, `after-${peerId}`);
  must(await cloneWorkspace(`${server.url}/${graph}`, d, { token: TOKENS.admin, timeoutMs: 20_000 }));
  await withStore(d, "agent:check", async (s) => {
    const v = s.view("slot.todos");
    expect(v.ok && v.value.definitions[0]?.text).toBe("slot todos : Int = 1");
  });
}

async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("access control", () => {
  it("refuses a missing token (401) and an unknown token (403) at the upgrade, with the reason", async () => {
    const { a, server, opsOnServer } = await setup("tokens");
    const none = await syncWorkspace(a, { url: server.url, timeoutMs: 10_000 });
    expect(none.ok).toBe(false);
    if (!none.ok) {
      expect(none.error.code).toBe("unauthorized");
      expect(none.error.message).toMatch(/HTTP 401.*token is required/);
    }
    const wrong = await syncWorkspace(a, {
      url: server.url,
      token: "not-a-known-token-at-all",
      timeoutMs: 10_000,
    });
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) {
      expect(wrong.error.code).toBe("forbidden");
      expect(wrong.error.message).toMatch(/HTTP 403.*not accepted/);
    }
    // A valid token without access to this graph: told the graph is unavailable, as if absent.
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "secret", body: "Int = 2" }));
    });
    const stranger = await syncWorkspace(a, { url: server.url, token: TOKENS.stranger, timeoutMs: 10_000 });
    expect(stranger.ok).toBe(false);
    if (!stranger.ok) expect(stranger.error.code).toBe("graph-unavailable");
    expect(await opsOnServer()).toBe(1);
    expect(server.health().refused).toBeGreaterThanOrEqual(2);
  });

  it("holds back a client refused again and again (429, Retry-After, doubling), never a client with a good token", async () => {
    const { server, graph } = await setup("throttle");
    const upgrade = (token: string) =>
      new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
        const ws = new WebSocket(`${server.url}/g/${graph}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        ws.once("unexpected-response", (_req, res) => {
          resolve({
            status: res.statusCode ?? 0,
            ...(res.headers["retry-after"] ? { retryAfter: String(res.headers["retry-after"]) } : {}),
          });
          ws.terminate();
        });
        ws.once("open", () => {
          resolve({ status: 101 });
          ws.close();
        });
        ws.once("error", (e) => {
          if (!String(e).includes("Unexpected server response")) reject(e);
        });
      });
    const seen: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await upgrade("not-a-known-token-at-all");
      seen.push(`${r.status}${r.retryAfter === undefined ? "" : `/${r.retryAfter}`}`);
    }
    // Five answered in full; the sixth is answered and says when to come back; then held back.
    expect(seen).toEqual(["403", "403", "403", "403", "403", "403/1", "429/1"]);
    // Another client at the same address, with a good token, is let in meanwhile.
    expect((await upgrade(TOKENS.alice)).status).toBe(101);
    // After the wait the bad token is looked up again, and held back twice as long.
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await upgrade("not-a-known-token-at-all")).toEqual({ status: 403, retryAfter: "2" });
  });

  it("a token bound to its authors: a pushed op by anyone else is refused with the whole reason, nothing of the push stored", async () => {
    const root = tempDir("authors");
    dirs.push(root);
    const a = path.join(root, "a");
    const graph = await newWorkspace(a);
    const tokens = must(
      parseTokenFile(
        JSON.stringify({
          format: 1,
          tokens: [
            {
              name: "ci",
              token: TOKENS.alice,
              graphs: { [graph]: "write" },
              authors: ["agent:ci", "agent:build-*"],
            },
            { name: "admin", token: TOKENS.admin, graphs: { "*": "write" } },
          ],
        }),
      ),
    );
    const server = await serve(path.join(root, "server"), tokens);
    servers.push(server);
    const sync = () => syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 });
    await withStore(a, "agent:ci", async (s) =>
      must(await s.add({ layer: "slot", name: "one", body: "Int = 1" })),
    );
    await withStore(a, "agent:build-7", async (s) =>
      must(await s.add({ layer: "slot", name: "two", body: "Int = 2" })),
    );
    expect(must(await sync()).unpushed).toBe(0);
    // An op written as another agent: the push is refused, the reason whole (not cut to a close frame's 123 bytes).
    await withStore(a, "agent:mallory", async (s) =>
      must(await s.add({ layer: "slot", name: "three", body: "Int = 3" })),
    );
    const refused = await sync();
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error.message).toMatch(
      /authored "agent:mallory", but the token "ci" may push ops only by agent:ci, agent:build-\* \(its "authors" in the token file\)/,
    );
    expect(server.refusals().at(-1)?.token).toBe("ci");
    const d = path.join(root, "check");
    const c = must(
      await cloneWorkspace(`${server.url}/${graph}`, d, { token: TOKENS.admin, timeoutMs: 20_000 }),
    );
    expect(c.ops).toBe(2);
    // An unbound token (admin) carries it: authors bind only the tokens that name them.
    const carried = must(await syncWorkspace(a, { url: server.url, token: TOKENS.admin, timeoutMs: 20_000 }));
    expect(carried.unpushed).toBe(0);
  });

  it("a read-only token pulls but its ops are neither stored nor relayed", async () => {
    const { root, graph, server, opsOnServer } = await setup("readonly");
    const r = path.join(root, "reader");
    must(await cloneWorkspace(`${server.url}/${graph}`, r, { token: TOKENS.reader, timeoutMs: 20_000 }));
    await withStore(r, "agent:reader", async (s) => {
      must(await s.add({ layer: "slot", name: "sneaky", body: "Int = 3" }));
    });
    const report = must(await syncWorkspace(r, { url: server.url, token: TOKENS.reader, timeoutMs: 20_000 }));
    expect(report.access).toBe("read");
    expect(report.unpushed).toBe(1);
    expect(await opsOnServer()).toBe(1);
    // The reader's op stays local, nothing lost there.
    expect(await withStore(r, "agent:reader", async (s) => s.status().ops)).toBe(2);
  });

  it("refuses a malformed op from a raw automerge-repo peer, stores nothing and keeps serving", async () => {
    const { a, graph, server, opsOnServer } = await setup("malformed");
    const raw = new Repo({
      network: [new WebSocketClientAdapter(`${server.url}/?token=${TOKENS.alice}`, 60_000)],
      peerId: "raw-peer" as PeerId,
    });
    try {
      await until("the raw peer's handshake", () => raw.peers.length > 0);
      const handle = await raw.find<OpLogDocument>(graph as AutomergeUrl);
      handle.change((d) => {
        d.chunks[0]!.push(
          new A.ImmutableString(
            JSON.stringify([{ "op-id": "op_01J00000000000000000000000", op: "explode" }]),
          ),
        );
      });
      await until("the server's refusal", () =>
        server.refusals().some((e) => /fails the op schema/.test(e.reason)),
      );
      const refusal = server.refusals().find((e) => /fails the op schema/.test(e.reason))!;
      expect(refusal.token).toBe("alice");
      expect(refusal.documentId).toBe(graph.slice("automerge:".length));
    } finally {
      await raw.shutdown();
    }
    // Nothing stored, and the server still serves: health answers, a sync and a clone work.
    const health = (await (await fetch(`${server.url.replace("ws:", "http:")}/health`)).json()) as {
      ok: boolean;
    };
    expect(health.ok).toBe(true);
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "after", body: "Int = 4" }));
    });
    must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 }));
    expect(await opsOnServer()).toBe(2);
  });

  it("refuses an op that reuses a held op-id with other content (a forged rewrite), and keeps the original", async () => {
    const { root, graph, server } = await setup("forge");
    await forgeAndCheck(root, graph, server, "forger");
  });

  it("refuses a forged rewrite of an op it loaded from disk after a restart (held ops' hashes worked out on demand)", async () => {
    const { root, graph, server } = await setup("forge-restart");
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const again = await serve(path.join(root, "server"), tokensFor(graph));
    servers.push(again);
    await forgeAndCheck(root, graph, again, "forger-2");
  });

  it("answers a plain automerge-repo peer that joins the moment the server has started", async () => {
    const root = tempDir("early-join");
    dirs.push(root);
    const graph = await newWorkspace(path.join(root, "a"));
    const server = await serve(path.join(root, "server"), tokensFor(graph));
    servers.push(server);
    // No pause: before, the server listened before automerge-repo had attached its message
    // listener, and a join that came first was never answered.
    const raw = new Repo({
      network: [new WebSocketClientAdapter(`${server.url}/?token=${TOKENS.alice}`, 60_000)],
      peerId: "early" as PeerId,
    });
    try {
      await until("the raw peer's handshake", () => raw.peers.length > 0, 5_000);
    } finally {
      await raw.shutdown();
    }
  });

  it("refuses changes outside the op log's layout (a root overwrite)", async () => {
    const { graph, server, opsOnServer } = await setup("layout");
    const raw = new Repo({
      network: [new WebSocketClientAdapter(`${server.url}/?token=${TOKENS.alice}`, 60_000)],
      peerId: "raw-2" as PeerId,
    });
    try {
      await until("the raw peer's handshake", () => raw.peers.length > 0);
      const handle = await raw.find<OpLogDocument>(graph as AutomergeUrl);
      handle.change((d) => {
        d.chunks = [];
      });
      await until("the server's refusal", () => server.refusals().some((e) => /root/.test(e.reason)));
    } finally {
      await raw.shutdown();
    }
    expect(await opsOnServer()).toBe(1);
  });
});

describe("token file", () => {
  it("refuses bad files with a precise message", () => {
    const bad = [
      ["{", /not valid JSON/],
      [JSON.stringify({ format: 2, tokens: [] }), /"format" must be 1/],
      [JSON.stringify({ format: 1, tokens: [{ name: "x", token: "short", graphs: {} }] }), /at least 16/],
      [
        JSON.stringify({
          format: 1,
          tokens: [{ name: "x", token: "a".repeat(20), graphs: { nope: "write" } }],
        }),
        /not an Automerge URL/,
      ],
      [
        JSON.stringify({
          format: 1,
          tokens: [{ name: "x", token: "a".repeat(20), graphs: { "*": "admin" } }],
        }),
        /"read" or "write"/,
      ],
      [
        JSON.stringify({
          format: 1,
          tokens: [
            { name: "x", token: "a".repeat(20), graphs: {} },
            { name: "y", token: "a".repeat(20), graphs: {} },
          ],
        }),
        /same as another/,
      ],
      [
        JSON.stringify({
          format: 1,
          tokens: [{ name: "x", token: "a".repeat(20), graphs: {}, authors: ["not an author"] }],
        }),
        /authors must be a non-empty list of author ids or prefixes ending in \*/,
      ],
      [
        JSON.stringify({
          format: 1,
          tokens: [{ name: "x", token: "a".repeat(20), graphs: {}, authors: [] }],
        }),
        /authors must be a non-empty list/,
      ],
    ] as const;
    for (const [text, why] of bad) {
      const r = parseTokenFile(text, "t.json");
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("token-file-invalid");
        expect(r.error.message).toMatch(why);
      }
    }
    const t = must(parseTokenFile(tokenFileText()));
    expect(t.lookup("b".repeat(20))?.access("abc")).toBe("read");
    expect(t.lookup("b".repeat(20))?.access("2j9knpCseyhnK8izDmLpGP5WMdZQ")).toBe("write");
    expect(t.lookup("c".repeat(20))).toBeUndefined();
  });
});

function tokenFileText(): string {
  return JSON.stringify({
    format: 1,
    tokens: [
      {
        name: "b",
        token: "b".repeat(20),
        graphs: { "*": "read", "automerge:2j9knpCseyhnK8izDmLpGP5WMdZQ": "write" },
      },
    ],
  });
}
