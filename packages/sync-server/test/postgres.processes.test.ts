/**
 * The sync server on PostgreSQL (`kumiki serve --storage postgres://…`), as real processes on the
 * machine's real PostgreSQL, each test in a schema of its own (dropped after): a server SIGKILLed
 * while a client pushes loses nothing it confirmed, and two servers on one database serve one set
 * of graphs.
 */
import path from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cloneWorkspace, syncWorkspace } from "../src/index.js";
import { must, TOKENS } from "./helpers.js";
import { freshTable, POSTGRES_URL, skipWithoutPostgres } from "./support/postgres.js";
import { addMany, cleanUp, setup, startServer } from "./support/processes.js";

const skip = await skipWithoutPostgres();

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(skip)("the sync server on PostgreSQL, real processes", () => {
  let schema = "";
  let url = "";
  beforeEach(async () => {
    schema = freshTable("kumiki_test_schema");
    await sql(`CREATE SCHEMA "${schema}"`);
    // The server's table goes in the test's own schema (first on its search path).
    url = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  });
  afterEach(async () => {
    cleanUp();
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it("a server killed (SIGKILL) mid-push loses no op it confirmed: a restart on the same database serves them all", async () => {
    const { root, a, graph } = await setup("pg-kill");
    await addMany(a, "agent:a", "s", 400);
    let server = await startServer(root, 0, url);
    const sync = syncWorkspace(a, {
      url: server.url,
      token: TOKENS.alice,
      author: "agent:a",
      timeoutMs: 60_000,
    });
    await server.child.waitFor(/connected: /);
    server.child.proc.kill("SIGKILL");
    await server.child.exited();
    server = await startServer(root, server.port, url);
    expect(must(await sync).ops).toBe(400);
    server.child.proc.kill("SIGKILL");
    await server.child.exited();
    // Nothing on the local disk: a new server process on the database alone, and a fresh clone.
    server = await startServer(root, 0, url);
    const c = must(
      await cloneWorkspace(`${server.url}/${graph}`, path.join(root, "c"), {
        token: TOKENS.bob,
        timeoutMs: 30_000,
      }),
    );
    expect(c.ops).toBe(400);
    server.child.proc.kill("SIGTERM");
    expect(await server.child.exited()).toBe(0);
  });

  it("two servers on one database: what one confirmed, a clone through the other holds", async () => {
    const { root, a, graph } = await setup("pg-two");
    await addMany(a, "agent:a", "t", 50);
    const one = await startServer(root, 0, url);
    const two = await startServer(root, 0, url);
    expect(
      must(
        await syncWorkspace(a, { url: one.url, token: TOKENS.alice, author: "agent:a", timeoutMs: 30_000 }),
      ).ops,
    ).toBe(50);
    const c = must(
      await cloneWorkspace(`${two.url}/${graph}`, path.join(root, "c"), {
        token: TOKENS.bob,
        timeoutMs: 30_000,
      }),
    );
    expect(c.ops).toBe(50);
    for (const s of [one, two]) s.child.proc.kill("SIGTERM");
    expect(await one.child.exited()).toBe(0);
    expect(await two.child.exited()).toBe(0);
  });
});
