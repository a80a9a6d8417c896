/**
 * Tokens kept in PostgreSQL, shared live by the servers of one service: two servers on one
 * database accept the same tokens; storing a token file without a token closes, on every server,
 * the connections that presented it and refuses new ones, while the others carry on; a file that
 * does not parse changes nothing. On the machine's real PostgreSQL (test-support/postgres.ts).
 */
import fs from "node:fs";
import path from "node:path";
import {
  dropTable,
  freshTable,
  POSTGRES_URL,
  skipWithoutPostgres,
} from "@kumiki-graph/test-support/postgres";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import {
  CLOSE_FORBIDDEN,
  PostgresStorageAdapter,
  PostgresTokenTable,
  type SyncServer,
  startSyncServer,
  syncWorkspace,
} from "../src/index.js";
import { must, newWorkspace, TOKENS, tempDir, tokenFileFor, withStore } from "./helpers.js";

const skip = await skipWithoutPostgres();

const servers: SyncServer[] = [];
const closers: (() => Promise<void>)[] = [];
const tables: string[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const c of closers.splice(0)) await c();
  for (const t of tables.splice(0)) await dropTable(t);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A WebSocket to `url` with `token`: resolves open (with a promise of its close code) or the HTTP status refusing it. */
function connect(url: string, token: string): Promise<{ closed: Promise<number> } | { status: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    ws.once("unexpected-response", (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once("error", (e) => reject(e));
    ws.once("open", () => {
      const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
      closers.push(async () => {
        ws.terminate();
      });
      resolve({ closed });
    });
  });
}

/** Resolves with `p`'s value, or rejects after `ms` saying what was awaited. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing in ${ms} ms`)), ms)),
  ]);
}

async function rows(table: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const r = await client.query(`SELECT name FROM "${table}" ORDER BY name`);
    return r.rows.map((x: { name: string }) => x.name);
  } finally {
    await client.end();
  }
}

/** A workspace with a new graph, and fresh tables for the chunks and the tokens (dropped after). */
async function setup(prefix: string) {
  const root = tempDir(prefix);
  dirs.push(root);
  const a = path.join(root, "a");
  const graph = await newWorkspace(a);
  const chunks = freshTable();
  const tokenTable = freshTable("kumiki_tokens_test");
  tables.push(chunks, tokenTable);
  return { a, graph, chunks, tokenTable };
}

/** "open" when the connection is still open 300 ms on, else its close code. */
function stillOpen(c: { closed: Promise<number> } | { status: number }): Promise<number | "open"> {
  return Promise.race([
    (c as { closed: Promise<number> }).closed,
    new Promise<"open">((r) => setTimeout(() => r("open"), 300)),
  ]);
}

describe.skipIf(skip)("tokens in PostgreSQL", () => {
  it("every server of the service takes a token withdrawn in the database at once: its connections closed, new ones refused", async () => {
    const { a, graph, chunks, tokenTable } = await setup("pg-tokens");
    const stored = await PostgresTokenTable.store(POSTGRES_URL, tokenFileFor(graph), "tokens.json", {
      table: tokenTable,
    });
    expect(must(stored).tokens).toBe(5);
    // Only digests are kept: no token appears in the table.
    const dump = JSON.stringify(await rows(tokenTable));
    for (const t of Object.values(TOKENS)) expect(dump).not.toContain(t);
    for (let i = 0; i < 2; i++) {
      const storage = await PostgresStorageAdapter.open(POSTGRES_URL, { table: chunks, maxConnections: 2 });
      const tokens = await PostgresTokenTable.open(POSTGRES_URL, { table: tokenTable });
      closers.push(() => tokens.close());
      servers.push(must(await startSyncServer({ storage, tokens })));
      closers.push(() => storage.close());
    }
    const [s1, s2] = servers as [SyncServer, SyncServer];
    const bobOn = await Promise.all([connect(s1.url, TOKENS.bob), connect(s2.url, TOKENS.bob)]);
    const aliceOn = await connect(s2.url, TOKENS.alice);
    for (const c of [...bobOn, aliceOn]) expect("closed" in c).toBe(true);

    // The file again without bob.
    const without = JSON.parse(tokenFileFor(graph)) as { tokens: { name: string }[] };
    without.tokens = without.tokens.filter((t) => t.name !== "bob");
    must(
      await PostgresTokenTable.store(POSTGRES_URL, JSON.stringify(without), "tokens.json", {
        table: tokenTable,
      }),
    );
    for (const c of bobOn)
      expect(await within((c as { closed: Promise<number> }).closed, 10_000, "bob's connection closed")).toBe(
        CLOSE_FORBIDDEN,
      );
    expect(await connect(s1.url, TOKENS.bob)).toEqual({ status: 403 });
    expect(await connect(s2.url, TOKENS.bob)).toEqual({ status: 403 });
    // Alice's connection stays, and she syncs through either server.
    expect(await stillOpen(aliceOn)).toBe("open");
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "count", body: "Int = 0" }));
    });
    const pushed = must(await syncWorkspace(a, { url: s2.url, token: TOKENS.alice, timeoutMs: 20_000 }));
    expect(pushed.sent).toBe(1);

    // A file that does not parse changes nothing.
    const before = await rows(tokenTable);
    const bad = await PostgresTokenTable.store(POSTGRES_URL, '{"format": 1, "tokens": [{}]}', "bad.json", {
      table: tokenTable,
    });
    expect(!bad.ok && bad.error.code).toBe("token-file-invalid");
    expect(await rows(tokenTable)).toEqual(before);
    expect(before).not.toContain("bob");
  });

  it("a server started open on a database without tokens requires them once any server stores some", async () => {
    const { a, graph, chunks, tokenTable } = await setup("pg-open-until");
    const storage = await PostgresStorageAdapter.open(POSTGRES_URL, { table: chunks, maxConnections: 2 });
    closers.push(() => storage.close());
    const tokens = await PostgresTokenTable.open(POSTGRES_URL, { table: tokenTable });
    closers.push(() => tokens.close());
    const server = must(await startSyncServer({ storage, tokens, openUntilTokens: true }));
    servers.push(server);
    expect(server.health().auth).toBe("none");
    // Open: a client without a token syncs.
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "count", body: "Int = 0" }));
    });
    expect(must(await syncWorkspace(a, { url: server.url, timeoutMs: 20_000 })).sent).toBe(1);
    const anonymous = await connect(server.url, "not-a-token");
    expect("closed" in anonymous).toBe(true);
    const early = await connect(server.url, TOKENS.alice);
    // Another server of the service stores tokens.
    must(
      await PostgresTokenTable.store(POSTGRES_URL, tokenFileFor(graph), "tokens.json", { table: tokenTable }),
    );
    expect(
      await within(
        (anonymous as { closed: Promise<number> }).closed,
        10_000,
        "the connection whose token is not stored closed",
      ),
    ).toBe(CLOSE_FORBIDDEN);
    expect(server.health().auth).toBe("tokens");
    expect(await connect(server.url, "not-a-token")).toEqual({ status: 403 });
    const refused = await syncWorkspace(a, { url: server.url, timeoutMs: 5_000 });
    expect(!refused.ok && refused.error.code).toBe("unauthorized");
    // A connection that presented a token the table now holds stays, with that token's grant.
    expect(await stillOpen(early)).toBe("open");
    must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 }));
    // Withdrawing every token does not open the server again.
    must(
      await PostgresTokenTable.store(POSTGRES_URL, JSON.stringify({ format: 1, tokens: [] }), "empty.json", {
        table: tokenTable,
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(server.health().auth).toBe("tokens");
    expect(await connect(server.url, TOKENS.alice)).toEqual({ status: 403 });
  });
});

describe.skipIf(skip)("tokens in PostgreSQL: bound authors", () => {
  it("keeps a token's authors, and a table made before them gains the column (null: any author)", async () => {
    const { graph, tokenTable } = await setup("pg-authors");
    // A table as the first release made it, holding one token.
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(
        `CREATE TABLE "${tokenTable}" (name text PRIMARY KEY, digest text NOT NULL UNIQUE, graphs jsonb NOT NULL)`,
      );
      await client.query(`INSERT INTO "${tokenTable}" (name, digest, graphs) VALUES ('old', 'd', '{}')`);
    } finally {
      await client.end();
    }
    const table = await PostgresTokenTable.open(POSTGRES_URL, { table: tokenTable });
    closers.push(() => table.close());
    expect(table.size).toBe(1);
    const file = JSON.stringify({
      format: 1,
      tokens: [
        {
          name: "ci",
          token: TOKENS.alice,
          graphs: { [graph]: "write" },
          authors: ["agent:ci", "agent:build-*"],
        },
        { name: "bob", token: TOKENS.bob, graphs: { [graph]: "write" } },
      ],
    });
    must(await PostgresTokenTable.store(POSTGRES_URL, file, "t.json", { table: tokenTable }));
    for (let i = 0; i < 100 && table.lookup(TOKENS.alice) === undefined; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(table.lookup(TOKENS.alice)?.authors).toEqual(["agent:ci", "agent:build-*"]);
    expect(table.lookup(TOKENS.bob)?.authors).toBeUndefined();
  });
});
