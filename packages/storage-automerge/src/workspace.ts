/**
 * A workspace: a folder holding `.kumiki/`, opened where it is (or found by walking up from a
 * directory, as git finds `.git`, when asked). Inside:
 *
 * - `config.json`: `{ "format": 1, "graph": "automerge:…" }`, the graph document's URL, written
 *   atomically (temp file, fsync, rename, fsync of the directory);
 * - `automerge/`: automerge-repo's storage (NodeFS layout), with `.lock`, `.generation` and `.tmp/`
 *   for coordinating processes;
 * - `op-log.jsonl`: the readable op log, one op a line, sorted by op-id, complete after every
 *   append and on close (with `op-log.jsonl.state`, its sidecar);
 * - `.gitignore`: the machine-local files above.
 *
 * Expected failures are values ({@link WorkspaceResult}), never throws.
 */
import fs from "node:fs";
import path from "node:path";
import type { NetworkAdapterInterface, PeerId, SharePolicy } from "@automerge/automerge-repo";
import {
  makeDirs,
  type OpLog,
  type ReadableOpLog,
  SnapshotOpLog,
  type StoredOp,
  writeFileAtomic,
} from "@kumiki-graph/core";
import { AutomergeOpLog } from "./automerge-op-log.js";
import { FileLock, LockTimeoutError } from "./file-lock.js";
import { OpLogFile } from "./op-log-file.js";
import { OpLogOpenError } from "./repo-op-log.js";
import {
  fail,
  locate,
  replacedReason,
  WORKSPACE_FORMAT,
  type WorkspaceConfig,
  type WorkspacePaths,
  type WorkspaceResult,
  workspacePaths,
  writable,
} from "./workspace-layout.js";
import { readWorkspaceOps } from "./workspace-read.js";

/** An open workspace. */
export interface Workspace<T extends StoredOp = StoredOp> {
  readonly paths: WorkspacePaths;
  readonly config: WorkspaceConfig;
  /** The graph's op log (its `repo` and `handle` are what sync builds on). */
  readonly log: AutomergeOpLog<T>;
  /** Closes the op log (flushing what is pending): the same as `log.close()`. */
  close(): Promise<void>;
}

/** Options passed through to the graph's Repo (sync sets these). */
export interface WorkspaceOpenOptions {
  readonly network?: readonly NetworkAdapterInterface[];
  readonly peerId?: PeerId;
  readonly sharePolicy?: SharePolicy;
  /** Bundles per inner list of the document (tests only). */
  readonly chunkSize?: number;
  /**
   * Open read-only: no lock, nothing written, appends refused. Default: read-only exactly when
   * this process cannot write the workspace's storage folder.
   */
  readonly readOnly?: boolean;
  /**
   * Open the nearest workspace at or above the folder given, as git finds `.git` (what the CLI
   * does). Default false: the folder itself must be the workspace; when it is not and one above
   * it is, the `no-workspace` refusal names that one (`details.above`).
   */
  readonly walkUp?: boolean;
}

const GITIGNORE =
  "# Machine-local files of the store (kumiki writes them):\nop-log.jsonl.state\nautomerge/.lock\nautomerge/.generation\nautomerge/.tmp/\nidempotency.jsonl\ndamaged/\ncache/\n";

function openFailure<T>(e: unknown, paths: WorkspacePaths): WorkspaceResult<T> {
  if (e instanceof OpLogOpenError) {
    const hint =
      e.code === "store-missing" ? ` (${paths.storage} lacks the graph named in ${paths.config})` : "";
    return fail(e.code, `${e.message}${hint}`, { path: paths.storage });
  }
  if (e instanceof LockTimeoutError)
    return fail("storage-failed", e.message, { path: e.path, holder: e.holder });
  return fail("storage-failed", `cannot open the store in ${paths.dir}: ${(e as Error).message}`, {
    path: paths.dir,
  });
}

/** How {@link initWorkspace} makes the graph. */
export interface WorkspaceInitOptions extends WorkspaceOpenOptions {
  /**
   * Adopt this existing graph (its Automerge URL), fetched through `network`, instead of creating
   * an empty one: what a clone does. `config.json` is written only once the document has arrived.
   */
  readonly graph?: string;
}

/**
 * Makes `dir` a workspace: creates `.kumiki/`, an empty graph document (or adopts `options.graph`),
 * `config.json` and `op-log.jsonl`, and returns it open. Refuses ("workspace-exists") when
 * `dir/.kumiki/config.json` exists; a workspace further up does not prevent a nested one, as with git.
 */
export async function initWorkspace<T extends StoredOp = StoredOp>(
  dir: string,
  options: WorkspaceInitOptions = {},
): Promise<WorkspaceResult<Workspace<T>>> {
  const paths = workspacePaths(dir);
  if (fs.existsSync(paths.config)) {
    return fail("workspace-exists", `${paths.root} is already a workspace (${paths.config} exists)`, {
      path: paths.config,
    });
  }
  let lock: FileLock;
  try {
    makeDirs(paths.storage);
    lock = new FileLock(path.join(paths.storage, ".lock"));
  } catch (e) {
    return fail("storage-failed", `cannot create ${paths.storage}: ${(e as Error).message}`, {
      path: paths.dir,
    });
  }
  try {
    await lock.acquire();
  } catch (e) {
    return openFailure(e, paths);
  }
  let log: AutomergeOpLog<T> | undefined;
  try {
    // Checked again under the lock: two concurrent inits must not both create a graph.
    if (fs.existsSync(paths.config)) {
      return fail("workspace-exists", `${paths.root} is already a workspace (${paths.config} exists)`, {
        path: paths.config,
      });
    }
    // Asked only once the log is in use, when config.json names its graph.
    const replaced = () => (log === undefined ? undefined : replacedReason(paths, log.url));
    const logOptions = {
      directory: paths.storage,
      ...options,
      lock,
      mirror: new OpLogFile(paths.opLog),
      replaced,
    };
    log =
      options.graph === undefined
        ? await AutomergeOpLog.create<T>(logOptions)
        : await AutomergeOpLog.open<T>({ ...logOptions, url: options.graph });
    const config: WorkspaceConfig = { format: WORKSPACE_FORMAT, graph: log.url };
    if (!fs.existsSync(path.join(paths.dir, ".gitignore")))
      writeFileAtomic(path.join(paths.dir, ".gitignore"), GITIGNORE);
    writeFileAtomic(paths.config, `${JSON.stringify(config, null, 2)}\n`);
    const made = log;
    return { ok: true, value: { paths, config, log: made, close: () => made.close() } };
  } catch (e) {
    await log?.close().catch(() => undefined);
    if (e instanceof OpLogOpenError) return openFailure(e, paths);
    return fail("storage-failed", `cannot initialise ${paths.dir}: ${(e as Error).message}`, {
      path: paths.dir,
    });
  } finally {
    lock.release();
  }
}

/** Opens the workspace at `dir` (with `walkUp`, the nearest at or above it: {@link findWorkspace}). */
export async function openWorkspace<T extends StoredOp = StoredOp>(
  dir: string,
  options: WorkspaceOpenOptions = {},
): Promise<WorkspaceResult<Workspace<T>>> {
  const { walkUp = false, ...rest } = options;
  const located = locate(dir, walkUp);
  if (!located.ok) return located;
  const { paths, config } = located.value;
  try {
    // Without write access (a read-only mount, another user's workspace) the log opens read-only:
    // no lock file, nothing written, reads as usual, writes refused with the reason.
    const readOnly = options.readOnly ?? !writable(paths.storage);
    const log = await AutomergeOpLog.open<T>({
      directory: paths.storage,
      url: config.graph,
      ...rest,
      ...(readOnly ? { readOnly } : {}),
      mirror: new OpLogFile(paths.opLog),
      replaced: () => replacedReason(paths, config.graph),
    });
    return { ok: true, value: { paths, config, log, close: () => log.close() } };
  } catch (e) {
    return openFailure(e, paths);
  }
}

/** A workspace opened for reading: its op log is read-only when it came from the snapshot. */
export interface WorkspaceReader<T extends StoredOp = StoredOp> {
  readonly paths: WorkspacePaths;
  readonly config: WorkspaceConfig;
  /** The whole log (`snapshot: false`), or a read-only one over op-log.jsonl (no `append`). */
  readonly log: OpLog<T> | ReadableOpLog<T>;
  /** True when the ops came from the verified op-log.jsonl, without loading the Automerge document. */
  readonly snapshot: boolean;
}

/**
 * Opens the workspace at or above `dir` for reading (view, list, check, export): when
 * `.kumiki/op-log.jsonl` was derived from exactly the chunks now in storage, its ops are read from
 * it and the Automerge document is not loaded at all (a read-only log); otherwise this is
 * {@link openWorkspace}. Either way the ops are those of the stored document.
 */
export async function openWorkspaceReader<T extends StoredOp = StoredOp>(
  dir: string,
  options: { readonly walkUp?: boolean } = {},
): Promise<WorkspaceResult<WorkspaceReader<T>>> {
  const fast = await readWorkspaceOps<T>(dir, options);
  if (!fast.ok) return fast;
  const { paths, config, ops } = fast.value;
  if (ops !== undefined) {
    const wireChecked = fast.value.wireChecked;
    const log = new SnapshotOpLog([...ops], { wireChecked: () => wireChecked });
    return { ok: true, value: { paths, config, log, snapshot: true } };
  }
  // The workspace found above (with walkUp, maybe a parent of dir), opened in full.
  const full = await openWorkspace<T>(paths.root);
  return full.ok ? { ok: true, value: { ...full.value, snapshot: false } } : full;
}
