/**
 * The PostgreSQL adapter's notices, what servers sharing one database merge each other's changes
 * by: a committed chunk of a graph is announced to every other adapter on the table, once; the
 * same chunk stored again with the same bytes (a server re-saving what it merged from another)
 * writes nothing and announces nothing; sync states are never announced. On the machine's real
 * PostgreSQL (test-support/postgres.ts says when it is skipped or fails).
 */

import {
  dropTable,
  freshTable,
  POSTGRES_URL,
  skipWithoutPostgres,
} from "@kumiki-graph/test-support/postgres";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStorageAdapter } from "../src/postgres-storage.js";

const skip = await skipWithoutPostgres();

const opened: PostgresStorageAdapter[] = [];
const tables: string[] = [];
afterEach(async () => {
  for (const a of opened.splice(0)) await a.close();
  for (const t of tables.splice(0)) await dropTable(t);
});

async function pair(): Promise<{
  writer: PostgresStorageAdapter;
  reader: PostgresStorageAdapter;
  table: string;
}> {
  const table = freshTable();
  tables.push(table);
  const writer = await PostgresStorageAdapter.open(POSTGRES_URL, { table, maxConnections: 2 });
  opened.push(writer);
  const reader = await PostgresStorageAdapter.open(POSTGRES_URL, { table, maxConnections: 2 });
  opened.push(reader);
  return { writer, reader, table };
}

/** Resolves once `seen` holds `n` keys, or rejects after 10 s saying what arrived. */
async function untilSeen(seen: string[][], n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (seen.length >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`expected ${n} notices in 10 s, got ${JSON.stringify(seen)}`);
}

/** The graph chunks stored, with the transaction that wrote each row version (xmin). */
async function rowUpdates(table: string): Promise<{ data: string; version: string }[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const r = await client.query(
      `SELECT encode(data, 'hex') AS data, xmin::text AS version FROM "${table}" WHERE key[2] = 'incremental' ORDER BY seq`,
    );
    return r.rows as { data: string; version: string }[];
  } finally {
    await client.end();
  }
}

describe.skipIf(skip)("PostgresStorageAdapter notices", () => {
  it("announces a new or changed chunk once to other adapters; the same bytes again are neither written nor announced", async () => {
    const { writer, reader, table } = await pair();
    const seen: string[][] = [];
    const ownSeen: string[][] = [];
    reader.watch((key) => seen.push([...key]));
    writer.watch((key) => ownSeen.push([...key]));
    // LISTEN is issued on a connection of its own: let it be in place before the first save.
    await new Promise((r) => setTimeout(r, 300));
    const chunk = ["doc1", "incremental", "h1"];
    const bytes = new Uint8Array([1, 2, 3]);
    await writer.save(chunk, bytes);
    await untilSeen(seen, 1);
    const stored = await rowUpdates(table);

    // Stored again, byte for byte: nothing written. The next chunk's notice is the fence: notices
    // arrive in commit order, so a notice of the repeat would come before it.
    await writer.save(chunk, new Uint8Array([1, 2, 3]));
    await writer.save(["doc1", "sync-state", "peer"], new Uint8Array([9]));
    await writer.save(["doc1", "incremental", "h2"], new Uint8Array([4]));
    await untilSeen(seen, 2);
    expect(await rowUpdates(table)).toEqual([...stored, expect.objectContaining({ data: "04" })]);

    // Other bytes under the same key: written and announced.
    await writer.save(chunk, new Uint8Array([5, 6]));
    await untilSeen(seen, 3);
    expect(seen).toEqual([chunk, ["doc1", "incremental", "h2"], chunk]);
    expect(await writer.load(chunk)).toEqual(new Uint8Array([5, 6]));
    // An adapter is not told of its own saves.
    expect(ownSeen).toEqual([]);
  });

  it("does not open its listening connection again once closed, though it was lost just before", async () => {
    const table = freshTable();
    tables.push(table);
    const adapter = await PostgresStorageAdapter.open(POSTGRES_URL, { table, maxConnections: 2 });
    adapter.watch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(await listeningOn(table)).toBe(1);
    // The connection lost (as a database restart or an administrator ends it): reopened a second
    // later while the adapter is open — but it closes first.
    expect(await dropListening(table)).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    await adapter.close();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await listeningOn(table)).toBe(0);
  });
});

/** The connections that LISTEN on `table`'s channel (their last statement), by pg_stat_activity. */
async function listeningOn(table: string): Promise<number> {
  return (await listenersOf(table, "SELECT count(*)::int AS n")) as number;
}

/** Ends the connections that LISTEN on `table`'s channel; how many there were. */
async function dropListening(table: string): Promise<number> {
  return (await listenersOf(table, "SELECT count(pg_terminate_backend(pid))::int AS n")) as number;
}

async function listenersOf(table: string, select: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const r = await client.query(
      `${select} FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()`,
      [`LISTEN "${table}"`],
    );
    return r.rows[0].n;
  } finally {
    await client.end();
  }
}
