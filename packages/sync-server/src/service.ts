/**
 * The sync server as a service (`kumiki serve`): a folder or a PostgreSQL URL, a token file or
 * the database's tokens, opened and checked before anything listens, and the token file read
 * again on request (SIGHUP). What a command line or a container needs, given as options only.
 */
import fs from "node:fs";
import { PostgresStorageAdapter, redactedUrl } from "./postgres-storage.js";
import { PostgresTokenTable } from "./postgres-tokens.js";
import { fail, ok, type SyncResult } from "./result.js";
import { type SyncServer, type SyncServerOptions, startSyncServer } from "./server.js";
import { TokenFileTable, type TokenTable } from "./tokens.js";

/** How {@link startSyncService} runs: the server's options, with where it keeps graphs and tokens. */
export interface SyncServiceOptions
  extends Omit<SyncServerOptions, "dataDir" | "storage" | "tokens" | "openUntilTokens"> {
  /** A folder for the graphs (made if absent). Give this or `storageUrl`. */
  readonly dataDir?: string;
  /** A PostgreSQL URL (`postgres://user@host:5432/db`): graphs and tokens in the database. */
  readonly storageUrl?: string;
  /**
   * A token file (JSON, docs/sync.md). With `storageUrl`, its tokens are stored in the database
   * for every server of the service; without it, a folder server takes anyone, and a database
   * server the tokens stored there (anyone while there are none).
   */
  readonly tokenFile?: string;
}

/** A running service: the server, where it keeps graphs, and its token file read again on request. */
export interface SyncService {
  readonly server: SyncServer;
  /** Where graphs are kept, for people: the folder, or the URL without its password and the table. */
  readonly where: string;
  /** The tokens in force (to follow their changes: `tokens?.onChange`). */
  readonly tokens: TokenTable | undefined;
  /**
   * Reads the token file again (SIGHUP): in use at once on a folder server, stored in the database
   * (for every server) on PostgreSQL. How many tokens now, or why nothing changed.
   */
  reloadTokens(): Promise<SyncResult<{ readonly tokens: number; readonly stored: boolean }>>;
  /** Drains, flushes and closes the server, then the database connections. */
  close(): Promise<void>;
}

/**
 * Opens the storage and the tokens `options` name (a bad token file or an unreachable database
 * refuses before anything is stored or listens) and starts the server over them.
 */
export async function startSyncService(options: SyncServiceOptions): Promise<SyncResult<SyncService>> {
  const { dataDir, storageUrl, tokenFile, ...server } = options;
  if ((dataDir === undefined) === (storageUrl === undefined))
    return fail(
      "invalid-options",
      "give the service dataDir (a folder) or storageUrl (postgres://…), one of them",
    );
  // Checked before anything is stored or opened: a bad file changes nothing. On PostgreSQL the
  // file's tokens are stored in the database and those are the ones in force.
  let fileTokens: TokenFileTable | undefined;
  if (tokenFile !== undefined) {
    const t = TokenFileTable.load(tokenFile);
    if (!t.ok) return t;
    if (storageUrl === undefined) fileTokens = t.value;
  }
  const storeTokens = async (): Promise<SyncResult<{ readonly tokens: number }>> => {
    let text: string;
    try {
      text = fs.readFileSync(tokenFile!, "utf8");
    } catch (e) {
      return fail(
        "token-file-invalid",
        `cannot read ${tokenFile}: ${(e as NodeJS.ErrnoException).code ?? e}`,
        {
          path: tokenFile,
        },
      );
    }
    return PostgresTokenTable.store(storageUrl!, text, tokenFile!);
  };
  let storage: PostgresStorageAdapter | undefined;
  let dbTokens: PostgresTokenTable | undefined;
  if (storageUrl !== undefined) {
    try {
      storage = await PostgresStorageAdapter.open(storageUrl);
      if (tokenFile !== undefined) {
        const stored = await storeTokens();
        if (!stored.ok) {
          await storage.close();
          return stored;
        }
      }
      dbTokens = await PostgresTokenTable.open(storageUrl);
    } catch (e) {
      await storage?.close();
      return fail("storage-failed", (e as Error).message);
    }
  }
  // The database's tokens, live, every server alike; while it holds none (and no file was given)
  // the server is open, until tokens are stored from any server.
  const tokens: TokenTable | undefined = dbTokens ?? fileTokens;
  const started = await startSyncServer({
    ...server,
    ...(storage === undefined ? { dataDir: dataDir! } : { storage }),
    ...(tokens === undefined ? {} : { tokens }),
    ...(dbTokens !== undefined && tokenFile === undefined ? { openUntilTokens: true } : {}),
  });
  if (!started.ok) {
    await dbTokens?.close();
    await storage?.close();
    return started;
  }
  const where = storage === undefined ? dataDir! : `${redactedUrl(storageUrl!)} (table ${storage.table})`;
  return ok({
    server: started.value,
    where,
    tokens,
    async reloadTokens() {
      if (tokenFile === undefined) return fail("no-token-file", "no token file to read again");
      if (fileTokens !== undefined) {
        const r = fileTokens.reload();
        return r.ok ? ok({ tokens: r.value.tokens, stored: false }) : r;
      }
      const r = await storeTokens().catch((e: unknown) =>
        fail("storage-failed", (e as Error).message ?? String(e)),
      );
      return r.ok ? ok({ tokens: r.value.tokens, stored: true }) : r;
    },
    async close() {
      await started.value.close();
      await dbTokens?.close();
      await storage?.close();
    },
  });
}
