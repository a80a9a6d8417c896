/**
 * The one read fast path: a workspace's ops read from its `.kumiki/op-log.jsonl` instead of its
 * Automerge document, when the file's sidecar says it was derived from exactly the chunk files now
 * in storage (checked under the storage lock, as a writer holds it). Loads no Automerge: the CLI's
 * read verbs answer from here, and `openWorkspaceReader` falls back to the full open when it does
 * not serve. Every writer (CLI, MCP server, sync) brings the file up to date with each append and
 * on close, so the first read after a write is served from here too.
 */
import path from "node:path";
import type { SnapshotSeed, StoredOp } from "@kumiki-graph/core/read";
import { chunkStampsIn } from "./chunk-files.js";
import { FileLock } from "./file-lock.js";
import { FoldSnapshotFile, heldBySnapshot } from "./fold-snapshot-file.js";
import { HeldOps } from "./held-ops.js";
import { OpLogFile } from "./op-log-file.js";
import { type PendingBundle, PendingBundles } from "./pending-bundles.js";
import {
  locate,
  type WorkspaceConfig,
  type WorkspacePaths,
  type WorkspaceResult,
  writable,
} from "./workspace-layout.js";

/** A workspace found and its config read, with its ops when op-log.jsonl is provably current. */
export interface WorkspaceOps<T extends StoredOp = StoredOp> {
  readonly paths: WorkspacePaths;
  readonly config: WorkspaceConfig;
  /**
   * The stored ops, from op-log.jsonl and then the pending bundles beside the document
   * (pending-bundles.ts, read under the lock); op-log.jsonl is read and parsed on first access, so
   * a reader that needs no op reads none of it. Undefined when the file cannot be shown to hold
   * exactly what the storage holds (another process wrote since and has not brought it up to date,
   * a peer's changes are not in it yet, it was edited by hand, nothing was stored yet, or it
   * changed between the read under the lock and the first access): open the workspace.
   */
  readonly ops: readonly T[] | undefined;
  /**
   * How many of {@link ops}' first ops (op-log.jsonl's) passed the wire schema when they were
   * written, under this code's version (its sidecar says so): a fold need not check them again
   * (`ReadableOpLog.wireChecked`). 0 when it does not say so; read after {@link ops}.
   */
  readonly wireChecked: number;
  /**
   * When the file's bytes were shown to be the storage's: what its ops are, as one string — the
   * Automerge document, the heads the file was derived from and the pending files' names (equal
   * states, equal ops) — what a
   * {@link CheckCacheFile} is bound to. (`ops` can still be undefined then, if a line does not parse.)
   */
  readonly state?: string;
  /**
   * op-log.jsonl's fold kept by the build `stamp` (fold-snapshot-file.ts) for the state the file
   * is in, with the pending bundles' ops after it: what a store takes its graph up from without
   * reading op-log.jsonl (core's `SnapshotSeed`). Undefined when none is kept for it; absent when
   * the file is not current.
   */
  fold?(stamp: string): SnapshotSeed<T> | undefined;
}

/**
 * The state a workspace's ops are in, as {@link WorkspaceOps.state} names it and a
 * {@link CheckCacheFile} is bound to: the graph document, its heads and the names of the pending
 * bundles stored beside it (equal states, equal ops).
 * One spelling for the read path and for a store opened in full, so that a check one kept is the
 * other's hit.
 */
export function opsState(
  documentId: string,
  heads: readonly string[],
  pending: readonly string[] = [],
): string {
  const at = `${documentId}@${[...heads].sort().join(",")}`;
  return pending.length === 0 ? at : `${at}+${pending.join(",")}`;
}

/**
 * Finds the workspace at `dir` (with `walkUp`, the nearest at or above it), reads its config, and
 * its ops from op-log.jsonl when that is current (see {@link WorkspaceOps.ops}). A missing or
 * broken workspace is the same refusal {@link openWorkspace} gives.
 */
export async function readWorkspaceOps<T extends StoredOp = StoredOp>(
  dir: string,
  options: { readonly walkUp?: boolean } = {},
): Promise<WorkspaceResult<WorkspaceOps<T>>> {
  const located = locate(dir, options.walkUp ?? false);
  if (!located.ok) return located;
  const { paths, config } = located.value;
  const documentId = config.graph.slice("automerge:".length);
  // Without write access no writer is ours to wait for (a read-only mount, another user's folder):
  // read without the lock, as a read-only open does; the sidecar's checks still hold.
  const lock = writable(paths.storage) ? new FileLock(path.join(paths.storage, ".lock")) : undefined;
  const read = () => readStoredFiles<T>(paths, documentId);
  try {
    const got = lock === undefined ? read() : await lock.run(read);
    if (got === undefined) return { ok: true, value: { paths, config, ops: undefined, wireChecked: 0 } };
    let ops: readonly T[] | undefined | null = null;
    let checked = 0;
    const { ops: fileOps, state, pending, wire, heads } = got;
    return {
      ok: true,
      value: {
        paths,
        config,
        state,
        fold: (stamp) => seedOf<T>(new FoldSnapshotFile(paths, opsState(documentId, heads), stamp), pending),
        get ops() {
          if (ops === null) {
            // Read now, not under the lock: the vouched file's ops or none (then the
            // caller opens the workspace, as for a file that does not parse).
            const mirrored = fileOps() as T[] | undefined;
            if (mirrored === undefined) ops = undefined;
            else {
              // Then the pending bundles' ops the file does not hold, as a quick write takes them.
              const held = new HeldOps<T>();
              held.take(mirrored);
              checked = wire ? held.ops.length : 0;
              for (const bundle of pending) held.take(bundle.ops);
              ops = held.ops;
            }
          }
          return ops;
        },
        get wireChecked() {
          return checked;
        },
      },
    };
  } catch {
    // The fast path is an optimisation: whatever stops it (a lock held past its timeout, an
    // unreadable folder) is left to the full open, which reports it properly.
    return { ok: true, value: { paths, config, ops: undefined, wireChecked: 0 } };
  }
}

/**
 * What a workspace's files hold, read once its op-log.jsonl's sidecar vouches for exactly the chunk
 * files now stored (call it holding the storage lock, as a writer holds it): the file's ops (read
 * when asked, undefined if the file changed since or a line is not an op: see
 * `OpLogFile.verified`), the heads it was written at, the pending bundles beside the document, how many
 * pending files do not parse, and the state all that is in ({@link opsState}). Undefined when the
 * sidecar does not vouch (or nothing was stored yet). The read path and a quick write
 * (quick-write.ts) both read through it.
 */
export function readStoredFiles<T extends StoredOp = StoredOp>(
  paths: WorkspacePaths,
  documentId: string,
):
  | {
      ops(): StoredOp[] | undefined;
      readonly heads: readonly string[];
      /** Every line of the file passed the wire schema of this code's version when written. */
      readonly wire: boolean;
      readonly pending: readonly PendingBundle<T>[];
      readonly unreadable: number;
      readonly state: string;
    }
  | undefined {
  const mirror = new OpLogFile(paths.opLog);
  try {
    const chunks = chunkStampsIn(paths.storage, documentId);
    const read = chunks.length === 0 ? undefined : mirror.verified(chunks);
    if (read === undefined) return undefined;
    // Writes that did not load the document (pending-bundles.ts): their ops come after the file's.
    const files = new PendingBundles<T>(paths.storage);
    const pending = files.read();
    // The heads of the sidecar that vouched for the bytes, and the pending files: the state is theirs.
    const state = opsState(
      documentId,
      read.heads,
      pending.map((b) => b.name),
    );
    return {
      ops: read.ops,
      heads: read.heads,
      wire: read.wire,
      pending,
      unreadable: files.unreadable.length,
      state,
    };
  } finally {
    mirror.dispose();
  }
}

/**
 * The seed of a store over op-log.jsonl's kept fold (`file`) and the pending bundles beside the
 * document: their ops the file does not hold, each once, in the order a quick write takes them.
 */
function seedOf<T extends StoredOp>(
  file: FoldSnapshotFile,
  pending: readonly PendingBundle<T>[],
): SnapshotSeed<T> | undefined {
  const kept = file.read();
  if (kept === undefined) return undefined;
  const held = heldBySnapshot(kept.snapshot);
  const tail = new HeldOps<T>((id) => held.holds(id));
  for (const bundle of pending) tail.take(bundle.ops);
  return { snapshot: kept.snapshot, count: held.count, tail: tail.ops, close: kept.close };
}
