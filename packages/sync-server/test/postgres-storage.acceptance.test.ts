/**
 * automerge-repo's own storage-adapter acceptance suite against the PostgreSQL adapter, on the
 * machine's real PostgreSQL (test-support/postgres.ts says when it is skipped or fails), each test
 * in a table of its own, dropped after.
 */
import { runStorageAdapterTests } from "@automerge/automerge-repo/helpers/tests/storage-adapter-tests.js";
import {
  dropTable,
  freshTable,
  POSTGRES_URL,
  skipWithoutPostgres,
} from "@kumiki-graph/test-support/postgres";
import { describe } from "vitest";
import { PostgresStorageAdapter } from "../src/postgres-storage.js";

const skip = await skipWithoutPostgres();

describe.skipIf(skip)("PostgresStorageAdapter", () => {
  runStorageAdapterTests(async () => {
    const table = freshTable();
    const adapter = await PostgresStorageAdapter.open(POSTGRES_URL, { table, maxConnections: 2 });
    return {
      adapter,
      teardown: async () => {
        await adapter.close();
        await dropTable(table);
      },
    };
  }, "PostgresStorageAdapter");
});
