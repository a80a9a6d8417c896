/**
 * The idempotency keys of a graph served by several servers on one PostgreSQL: one row per key in
 * `kumiki_idempotency` (graph, key, record), so that a write retried with its key through another
 * server of the database (its first server died, or was restarted) is answered with the first
 * write's receipt instead of being written twice. A record is committed before the write's ops
 * are appended, as core's ledger contract asks; a key recorded twice (two servers racing on one
 * key) keeps the first record.
 */
import type { IdempotencyLedger, IdempotencyRecord } from "@kumiki-graph/core";
import type pg from "pg";

/** The table of idempotency records beside the chunks table. */
export const IDEMPOTENCY_TABLE = "kumiki_idempotency";

/** Makes the table if absent (in the connection's search path, as the chunks table). */
export async function ensureIdempotencyTable(client: pg.ClientBase): Promise<void> {
  await client.query(
    `CREATE TABLE IF NOT EXISTS "${IDEMPOTENCY_TABLE}" (graph text NOT NULL, key text NOT NULL, record jsonb NOT NULL, PRIMARY KEY (graph, key))`,
  );
}

/** The keys of one graph, in the database. */
export class PostgresIdempotencyLedger implements IdempotencyLedger {
  constructor(
    private readonly pool: pg.Pool,
    private readonly graph: string,
  ) {}

  async lookup(key: string): Promise<IdempotencyRecord | undefined> {
    const r = await this.pool.query(
      `SELECT record FROM "${IDEMPOTENCY_TABLE}" WHERE graph = $1 AND key = $2`,
      [this.graph, key],
    );
    return r.rows[0]?.record as IdempotencyRecord | undefined;
  }

  async record(record: IdempotencyRecord): Promise<void> {
    // A later record of a key (a several-write request's answer, after its first write's) replaces
    // the earlier one of the same request; another request's is refused by the store before this.
    await this.pool.query(
      `INSERT INTO "${IDEMPOTENCY_TABLE}" (graph, key, record) VALUES ($1, $2, $3) ON CONFLICT (graph, key) DO UPDATE SET record = EXCLUDED.record`,
      [this.graph, record.key, JSON.stringify(record)],
    );
  }
}
