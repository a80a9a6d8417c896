/**
 * The tokens of servers sharing one PostgreSQL, kept in the database so that every server of the
 * service accepts the same ones and a change reaches all of them live: a table of entries (name,
 * the token's SHA-256 digest, access per graph; never a token itself), replaced whole from a token
 * file ({@link PostgresTokenTable.store}) with a notice in the same transaction, and read again by
 * every server listening (LISTEN/NOTIFY, as the chunk notices). A server reviews its connections
 * on each change: one whose token was withdrawn is closed.
 */
import pg from "pg";
import { fail, ok, type SyncResult } from "./result.js";
import {
  type Access,
  ChangingTokenTable,
  parseTokenEntries,
  type TokenEntry,
  tokenTableOf,
} from "./tokens.js";

const TABLE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Options of {@link PostgresTokenTable}. */
export interface PostgresTokenOptions {
  /** The table the tokens go in (made if absent): a lower-case SQL identifier. Default `kumiki_tokens`. */
  readonly table?: string;
}

function tableOf(options: PostgresTokenOptions): string {
  const table = options.table ?? "kumiki_tokens";
  if (!TABLE.test(table))
    throw new Error(`table ${JSON.stringify(table)}: give a lower-case SQL identifier (letters, digits, _)`);
  return table;
}

async function ensureTable(client: pg.ClientBase, table: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`kumiki:${table}`]);
  await client.query(
    `CREATE TABLE IF NOT EXISTS "${table}" (name text PRIMARY KEY, digest text NOT NULL UNIQUE, graphs jsonb NOT NULL)`,
  );
  // Added after the first release: a table made before it gains the column (null: any author).
  await client.query(`ALTER TABLE "${table}" ADD COLUMN IF NOT EXISTS authors jsonb`);
}

/** The tokens in the database, live: what `kumiki serve --storage postgres://…` serves with. */
export class PostgresTokenTable extends ChangingTokenTable {
  private listener: pg.Client | undefined;
  private closed = false;

  private constructor(
    private readonly url: string,
    /** The table the tokens are kept in. */
    readonly table: string,
  ) {
    super(tokenTableOf([]));
  }

  /**
   * Connects, makes the table if absent, reads the tokens and listens for changes. Rejects with
   * PostgreSQL's message when it cannot.
   */
  static async open(url: string, options: PostgresTokenOptions = {}): Promise<PostgresTokenTable> {
    const t = new PostgresTokenTable(url, tableOf(options));
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => undefined);
    await client.connect();
    try {
      await client.query("BEGIN");
      await ensureTable(client, t.table);
      await client.query("COMMIT");
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    await t.listen(client);
    return t;
  }

  /**
   * Replaces the tokens in the database with those of a token file's JSON text (checked first:
   * an invalid file changes nothing), in one transaction that also tells every listening server.
   * `source` names the file in messages. Resolves with how many tokens are now kept.
   */
  static async store(
    url: string,
    text: string,
    source: string,
    options: PostgresTokenOptions = {},
  ): Promise<SyncResult<{ readonly tokens: number; readonly table: string }>> {
    const entries = parseTokenEntries(text, source);
    if (!entries.ok) return entries;
    const table = tableOf(options);
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("BEGIN");
      await ensureTable(client, table);
      await client.query(`DELETE FROM "${table}"`);
      for (const e of entries.value)
        await client.query(`INSERT INTO "${table}" (name, digest, graphs, authors) VALUES ($1, $2, $3, $4)`, [
          e.name,
          e.digest,
          JSON.stringify(e.graphs),
          e.authors === undefined ? null : JSON.stringify(e.authors),
        ]);
      await client.query("SELECT pg_notify($1, '')", [table]);
      await client.query("COMMIT");
      return ok({ tokens: entries.value.length, table });
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      return fail("storage-failed", `cannot store the tokens in PostgreSQL: ${(e as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    const l = this.listener;
    this.listener = undefined;
    await l?.end().catch(() => undefined);
  }

  /** LISTENs on `client`, then reads the table (a change between the two is read, not missed). */
  private async listen(client: pg.Client): Promise<void> {
    client.on("notification", (n) => {
      if (n.channel === this.table) void this.reload(client);
    });
    client.on("end", () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      // Reconnected while open (bounded: once a second); the table is read again on reconnection.
      if (!this.closed) setTimeout(() => void this.reconnect(), 1000).unref();
    });
    await client.query(`LISTEN "${this.table}"`);
    this.listener = client;
    await this.reload(client);
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await this.listen(client);
    } catch {
      await client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.reconnect(), 1000).unref();
    }
  }

  private async reload(client: pg.Client): Promise<void> {
    const r = await client
      .query(`SELECT name, digest, graphs, authors FROM "${this.table}"`)
      .catch(() => undefined);
    if (r === undefined) return;
    const entries: TokenEntry[] = r.rows.map(
      (row: { name: string; digest: string; graphs: unknown; authors: unknown }) => ({
        name: row.name,
        digest: row.digest,
        graphs: row.graphs as Record<string, Access>,
        ...(Array.isArray(row.authors) ? { authors: row.authors as string[] } : {}),
      }),
    );
    this.replace(tokenTableOf(entries));
  }
}
