/**
 * The PostgreSQL the tests use: the machine's own (127.0.0.1:5432, database `test`, trust auth),
 * or `KUMIKI_TEST_POSTGRES`. Tests that need it use the real server, never a mock. When it cannot
 * be reached: under CI (`CI=true`) they fail with the command that starts it; elsewhere (a laptop
 * without PostgreSQL) they are skipped with the same message.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import pg from "pg";

export const POSTGRES_URL = process.env.KUMIKI_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";

export const START_COMMAND = "pg_ctlcluster --skip-systemctl-redirect 15 main start";

/** Undefined when PostgreSQL answers; else why not, with the command that starts it. */
export async function postgresDown(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (e) {
    return `PostgreSQL at ${POSTGRES_URL} is not reachable (${(e as Error).message}): start it with \`${START_COMMAND}\``;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Whether to skip the PostgreSQL tests: never under CI (a test there fails with the start
 * command instead), and elsewhere when PostgreSQL does not answer.
 */
export async function skipWithoutPostgres(): Promise<boolean> {
  const down = await postgresDown();
  if (down === undefined) return false;
  if (process.env.CI === "true") throw new Error(down);
  process.stderr.write(`skipped: ${down}\n`);
  return true;
}

/** A table name no other test uses. */
export function freshTable(prefix = "kumiki_test"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** Drops `table` (a test's own). */
export async function dropTable(table: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS "${table}"`);
  } finally {
    await client.end();
  }
}

/** Runs `text` on the test database (a schema made or dropped for a test). */
export async function sql(text: string, params: readonly unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query(text, params as unknown[])).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/**
 * Ends the database connections of process `pid` that wait on LISTEN (a server's notice
 * listener), as a dropped connection would: found by the local TCP ports of the process's
 * sockets (/proc), so that other tests' servers on the same database are left alone. How many.
 */
export async function dropListenersOf(pid: number): Promise<number> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"])
    for (const line of fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.push(Number.parseInt(cols[1]!.split(":")[1]!, 16));
    }
  const rows = await sql(
    "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE client_port = ANY($1::int[]) AND query LIKE 'LISTEN%'",
    [ports],
  );
  return rows.length;
}
