/**
 * Where a sync server keeps its graphs: the storage seam (a folder or PostgreSQL), the folder
 * storage it opens itself from `dataDir`, and where a graph's idempotency keys are kept.
 */
import path from "node:path";
import type { StorageAdapterInterface } from "@automerge/automerge-repo";
import {
  FileIdempotencyLedger,
  type IdempotencyLedger,
  MemoryIdempotencyLedger,
  makeDirs,
} from "@kumiki-graph/core";
import { DurableFSStorageAdapter } from "@kumiki-graph/storage-automerge";
// For the doc comment's link.
import type { PostgresStorageAdapter } from "./postgres-storage.js";
import { fail, ok, type SyncResult } from "./result.js";

/**
 * What a sync server stores its graphs in: an automerge-repo storage adapter, and what `/health`
 * reports of it. `DurableFSStorageAdapter` (the embedded default, `dataDir`) and
 * {@link PostgresStorageAdapter} are two.
 */
export interface ServerStorage extends StorageAdapterInterface {
  /** True when `e` is an error this storage's writes threw (a storage fault, not a bug). */
  threw(e: unknown): boolean;
  /** The fault standing now, if any: `/health` says 503 while there is one. */
  probe(): { readonly code: string; readonly message: string } | undefined;
  /** The fault of the last failed write, until one succeeds. */
  readonly fault: { readonly message: string } | undefined;
  /** Stored chunks held back as damaged when a graph was loaded. */
  readonly damaged: readonly {
    readonly documentId: string;
    readonly name: string;
    readonly reason: string;
  }[];
  /**
   * For a storage several servers share: calls the listener with the key of each change chunk
   * another server stored, so this one can bring the graph's connected peers up to date at once.
   * Returns the unsubscribe.
   */
  watch?(listener: (key: readonly string[]) => void): () => void;
  /**
   * With `watch`: resolves once every change chunk committed before the call has been given to the
   * watchers, with a number that changes when notices may have been missed since the last call
   * (the listening connection was reopened), or `undefined` when that is not known (then the
   * server reads the graph's chunks). What makes a read on one server see a write another
   * acknowledged before it.
   */
  fence?(): Promise<number | undefined>;
  /**
   * For a storage several servers share: where a graph's idempotency keys are kept, so that a
   * retry through another server is recognised. Without it, the server keeps them in a file beside
   * a folder storage (`dataDir/.kumiki-idempotency/`), or in memory.
   */
  idempotencyLedger?(documentId: string): IdempotencyLedger;
}

/**
 * The storage a server runs on: the caller's (`storage`), or a durable folder it opens itself
 * (`dataDir`: temporaries of a crashed run swept, its storage id made) — then `own`, which the
 * server disposes of on close. Exactly one of the two must be given.
 */
export function openServerStorage(options: {
  readonly dataDir?: string;
  readonly storage?: ServerStorage;
}): SyncResult<{ readonly storage: ServerStorage; readonly own?: DurableFSStorageAdapter }> {
  if ((options.dataDir === undefined) === (options.storage === undefined))
    return fail(
      "invalid-options",
      "give the server dataDir (a folder) or storage (e.g. PostgreSQL), one of them",
    );
  if (options.storage !== undefined) return ok({ storage: options.storage });
  const dataDir = options.dataDir!;
  try {
    const own = new DurableFSStorageAdapter(dataDir);
    own.sweepTemporaries();
    own.ensureStorageId();
    return ok({ storage: own, own });
  } catch (e) {
    return fail("storage-failed", `cannot use ${dataDir} for the server's graphs: ${(e as Error).message}`, {
      path: dataDir,
    });
  }
}

/**
 * Where a graph's idempotency keys are kept: the storage's own when several servers share it (a
 * retry through another server is recognised), else a file beside the folder storage
 * (`dataDir/.kumiki-idempotency/<graph>.jsonl`), else memory.
 */
export function idempotencyLedgerOf(
  storage: ServerStorage,
  dataDir: string | undefined,
  documentId: string,
): IdempotencyLedger {
  const shared = storage.idempotencyLedger?.(documentId);
  if (shared !== undefined) return shared;
  if (dataDir === undefined) return new MemoryIdempotencyLedger();
  const dir = path.join(dataDir, ".kumiki-idempotency");
  makeDirs(dir);
  return new FileIdempotencyLedger(path.join(dir, `${documentId}.jsonl`));
}
