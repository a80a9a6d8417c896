/**
 * A sync server's graphs in PostgreSQL: an automerge-repo 2.x storage adapter over one table
 * (`kumiki serve --storage postgres://…`). automerge-repo's keys (`[documentId, "incremental", hash]`,
 * `[documentId, "snapshot", hash]`, `["storage-adapter-id"]`) are stored as they are, as a `text[]`
 * primary key, with the bytes in `bytea` and an insertion sequence (automerge-repo's acceptance
 * suite expects a range back in the order it was saved). A save is an upsert committed before it
 * resolves, so what a server confirmed is on the database's disk (`synchronous_commit`, on by
 * default). Several servers may share one database: every statement is one atomic upsert or read,
 * and the table is made once under an advisory lock.
 *
 * Why by hand: no maintained automerge-repo 2.x adapter for a database is on the registry
 * (`automerge-repo-storage-postgres` is a 0.0.1 for automerge-repo 1.x).
 */
import { randomUUID } from "node:crypto";
import type { Chunk, StorageAdapterInterface, StorageKey } from "@automerge/automerge-repo";
import type { IdempotencyLedger } from "@kumiki-graph/core";
import pg from "pg";
import { ensureIdempotencyTable, PostgresIdempotencyLedger } from "./postgres-idempotency.js";

/** How {@link PostgresStorageAdapter.open} connects. */
export interface PostgresStorageOptions {
  /** The table the chunks go in (made if absent): a lower-case SQL identifier. Default `kumiki_chunks`. */
  readonly table?: string;
  /** Connections in the pool (default 10). */
  readonly maxConnections?: number;
}

/** A failed statement: what `/health` reports while the database cannot store. */
export interface PostgresFault {
  readonly code: string;
  readonly message: string;
}

/** An error the adapter's statements threw: a database fault, not a bug (see {@link PostgresStorageAdapter.threw}). */
class PostgresStorageError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const TABLE = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

/** See the module comment. */
export class PostgresStorageAdapter implements StorageAdapterInterface {
  private lastFault: PostgresFault | undefined;
  /** This adapter's own id in notices: what it stored itself is not reported back to it. */
  private readonly origin = randomUUID();
  private readonly listeners = new Set<(key: StorageKey) => void>();
  private listening: Promise<void> | undefined;
  private listener: pg.Client | undefined;
  /** How many listening connections were opened: one more means notices may have been missed. */
  private listenings = 0;
  /** Fences sent and not yet heard back, by id. */
  private readonly fences = new Map<string, () => void>();
  /** The fence not yet sent, which callers arriving meanwhile share. */
  private nextFence: Promise<number | undefined> | undefined;
  private closed = false;
  private readonly sql: {
    readonly [k in "load" | "save" | "remove" | "range" | "removeRange" | "all"]: string;
  };

  private constructor(
    private readonly pool: pg.Pool,
    readonly table: string,
    private readonly url: string,
  ) {
    const t = `"${table}"`;
    this.sql = {
      load: `SELECT data FROM ${t} WHERE key = $1::text[]`,
      // One statement: the upsert and, for a graph's chunk, the notice other servers listen for,
      // sent by PostgreSQL when (and only if) the upsert commits. A chunk stored again with the
      // same bytes (a server re-saving what it merged from another: automerge-repo keys a chunk by
      // its content) writes nothing and announces nothing.
      save: `WITH saved AS (INSERT INTO ${t} AS c (key, data) VALUES ($1::text[], $2) ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data WHERE c.data IS DISTINCT FROM EXCLUDED.data RETURNING 1) SELECT pg_notify($3, $4) FROM saved WHERE $4 <> ''`,
      remove: `DELETE FROM ${t} WHERE key = $1::text[]`,
      // key[1] first: the index on it finds a graph's rows; then the whole prefix.
      range: `SELECT key, data FROM ${t} WHERE key[1] = $1 AND key[1:$2] = $3::text[] ORDER BY seq`,
      removeRange: `DELETE FROM ${t} WHERE key[1] = $1 AND key[1:$2] = $3::text[]`,
      all: `SELECT key, data FROM ${t} ORDER BY seq`,
    };
  }

  /**
   * Connects to `url` (`postgres://user:pass@host:port/db`), makes the table if absent and gives
   * the storage an id (automerge-repo's `storage-adapter-id`) if it has none. Rejects with a
   * message naming the database (without its password) when it cannot.
   */
  static async open(url: string, options: PostgresStorageOptions = {}): Promise<PostgresStorageAdapter> {
    const table = options.table ?? "kumiki_chunks";
    if (!TABLE.test(table))
      throw new Error(
        `table ${JSON.stringify(table)}: give a lower-case SQL identifier (letters, digits, _)`,
      );
    const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
    // An idle connection the server drops (a restart) must not end the process: the next
    // statement takes a new one, and a failed statement is a fault /health reports.
    pool.on("error", () => undefined);
    const adapter = new PostgresStorageAdapter(pool, table, url);
    try {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        // Two servers starting at once on an empty database: one makes the table.
        await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`kumiki:${table}`]);
        await client.query(
          `CREATE TABLE IF NOT EXISTS "${table}" (key text[] PRIMARY KEY, data bytea NOT NULL, seq bigserial NOT NULL)`,
        );
        await client.query(`CREATE INDEX IF NOT EXISTS "${table}_graph" ON "${table}" ((key[1]), seq)`);
        await ensureIdempotencyTable(client);
        await client.query(
          `INSERT INTO "${table}" (key, data) VALUES (ARRAY['storage-adapter-id'], $1) ON CONFLICT (key) DO NOTHING`,
          [Buffer.from(randomUUID())],
        );
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new Error(`cannot use PostgreSQL at ${redactedUrl(url)}: ${(e as Error).message}`);
    }
    return adapter;
  }

  private async query(sql: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      const r = await this.pool.query(sql, params as unknown[]);
      this.lastFault = undefined;
      return r;
    } catch (e) {
      const err = e as { code?: unknown; message?: unknown };
      const fault = {
        code: typeof err.code === "string" ? err.code : "postgres-failed",
        message: `PostgreSQL: ${String(err.message ?? e)}`,
      };
      this.lastFault = fault;
      throw new PostgresStorageError(fault.code, fault.message);
    }
  }

  async load(key: StorageKey): Promise<Uint8Array | undefined> {
    const r = await this.query(this.sql.load, [key]);
    const data = r.rows[0]?.data as Buffer | undefined;
    return data === undefined ? undefined : bytes(data);
  }

  async save(key: StorageKey, data: Uint8Array): Promise<void> {
    // A graph's change chunks are announced (see watch); sync states and the storage id are not.
    const chunk = key.length === 3 && (key[1] === "incremental" || key[1] === "snapshot");
    await this.query(this.sql.save, [
      key,
      Buffer.from(data.buffer, data.byteOffset, data.byteLength),
      this.table,
      chunk ? JSON.stringify([this.origin, key]) : "",
    ]);
  }

  /**
   * Calls `listener` with the key of every change chunk another process stores in this table (any
   * server on the same database), once it is committed: PostgreSQL's LISTEN/NOTIFY on a channel
   * named as the table. Chunks this adapter stores itself are not reported. Returns the unsubscribe.
   * A lost listening connection is reopened; notices sent meanwhile are missed, so a listener
   * should also read a graph's chunks when it next loads it (automerge-repo does).
   */
  watch(listener: (key: StorageKey) => void): () => void {
    this.listeners.add(listener);
    void this.listen();
    return () => {
      this.listeners.delete(listener);
    };
  }

  private listen(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.listening ??= (async () => {
      const client = new pg.Client({ connectionString: this.url });
      client.on("error", () => undefined);
      client.on("notification", (n) => {
        if (n.channel !== this.table || n.payload === undefined) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(n.payload);
        } catch {
          return;
        }
        if (Array.isArray(parsed) && parsed[0] === "fence") {
          this.fences.get(String(parsed[1]))?.();
          return;
        }
        if (!Array.isArray(parsed) || parsed[0] === this.origin || !Array.isArray(parsed[1])) return;
        const key = (parsed[1] as unknown[]).map(String);
        for (const l of this.listeners) l(key);
      });
      client.on("end", () => {
        this.listener = undefined;
        this.listening = undefined;
        // Reopened while someone listens and the adapter is open (bounded: once a second).
        if (!this.closed && this.listeners.size > 0)
          setTimeout(() => {
            // Not after a close meanwhile: a connection opened then would outlive the adapter.
            if (!this.closed) void this.listen();
          }, 1000).unref();
      });
      try {
        await client.connect();
        await client.query(`LISTEN "${this.table}"`);
        this.listener = client;
        this.listenings++;
      } catch {
        await client.end().catch(() => undefined);
      }
    })();
    return this.listening;
  }

  /**
   * Resolves once every notice of a chunk committed before the call has been given to the
   * watchers: a notice of its own sent now comes back after them, as PostgreSQL delivers the
   * notices of transactions in the order they committed. Resolves with the number of the
   * listening connection (a new number: notices may have been missed while it was reopened, so
   * the caller reads the chunks themselves once), or `undefined` when nothing listens or the
   * fence did not come back within `timeoutMs` (the caller reads the chunks). Callers within one
   * turn of the event loop share one fence.
   */
  fence(timeoutMs = 5_000): Promise<number | undefined> {
    this.nextFence ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      this.nextFence = undefined;
      if (this.listener === undefined) await this.listen();
      if (this.listener === undefined || this.closed) return undefined;
      const listening = this.listenings;
      const id = randomUUID();
      const heard = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        timer.unref();
        this.fences.set(id, () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      try {
        await this.query("SELECT pg_notify($1, $2)", [this.table, JSON.stringify(["fence", id])]);
        return (await heard) && this.listenings === listening ? listening : undefined;
      } catch {
        return undefined;
      } finally {
        this.fences.delete(id);
      }
    });
    return this.nextFence;
  }

  async remove(key: StorageKey): Promise<void> {
    await this.query(this.sql.remove, [key]);
  }

  async loadRange(keyPrefix: StorageKey): Promise<Chunk[]> {
    const r =
      keyPrefix.length === 0
        ? await this.query(this.sql.all, [])
        : await this.query(this.sql.range, [keyPrefix[0], keyPrefix.length, keyPrefix]);
    return r.rows.map((row: { key: string[]; data: Buffer }) => ({ key: row.key, data: bytes(row.data) }));
  }

  async removeRange(keyPrefix: StorageKey): Promise<void> {
    if (keyPrefix.length === 0) {
      await this.query(`DELETE FROM "${this.table}"`, []);
      return;
    }
    await this.query(this.sql.removeRange, [keyPrefix[0], keyPrefix.length, keyPrefix]);
  }

  /** True when `e` is an error one of this adapter's statements threw (a database fault, not a bug). */
  threw(e: unknown): boolean {
    return e instanceof PostgresStorageError;
  }

  /** The fault of the last statement, until one succeeds. */
  get fault(): PostgresFault | undefined {
    return this.lastFault;
  }

  /** What `/health` reports: the standing fault, if any (the next statement tries again). */
  probe(): PostgresFault | undefined {
    return this.lastFault;
  }

  /** Chunks held back as damaged: none here (PostgreSQL checksums its own pages). */
  get damaged(): readonly never[] {
    return [];
  }

  /** Where a graph's idempotency keys are kept: the database, shared by every server on it. */
  idempotencyLedger(documentId: string): IdempotencyLedger {
    return new PostgresIdempotencyLedger(this.pool, documentId);
  }

  /** Stops listening and closes the pool, after the statements in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.listening;
    await this.listener?.end().catch(() => undefined);
    await this.pool.end();
  }
}

/** A Buffer as a plain Uint8Array (what automerge-repo compares against). */
function bytes(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}
