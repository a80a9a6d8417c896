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
  type Result,
  SnapshotOpLog,
  type StoredOp,
  WORKSPACE_DIR,
  writeFileAtomic,
} from "@kumiki-graph/core";
import { AutomergeOpLog, OpLogOpenError } from "./automerge-op-log.js";
import { FileLock, LockTimeoutError } from "./file-lock.js";
import { OpLogFile } from "./op-log-file.js";

/** The config format this code writes and reads. */
export const WORKSPACE_FORMAT = 1;

/** Where a workspace's files are. */
export interface WorkspacePaths {
  /** The folder that holds `.kumiki/`. */
  readonly root: string;
  /** `<root>/.kumiki`. */
  readonly dir: string;
  /** `.kumiki/config.json`. */
  readonly config: string;
  /** `.kumiki/automerge`: the automerge-repo storage directory. */
  readonly storage: string;
  /** `.kumiki/op-log.jsonl`: the readable op log. */
  readonly opLog: string;
}

/** `.kumiki/config.json`. */
export interface WorkspaceConfig {
  readonly format: number;
  /** The graph document's Automerge URL. */
  readonly graph: string;
}

/** Stable codes of workspace failures. */
export type WorkspaceErrorCode =
  | "no-workspace"
  | "workspace-exists"
  | "config-corrupt"
  | "config-unsupported"
  | "store-missing"
  | "store-corrupt"
  | "store-unsupported"
  | "storage-failed"
  /** A repair needed the remote's copy of the graph (its first change was lost) and could not get it. */
  | "remote-unavailable";

/** A workspace failure: a code, a message saying what, where and what to do, and details. */
export interface WorkspaceError {
  readonly code: WorkspaceErrorCode;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** A value, or a {@link WorkspaceError}. */
export type WorkspaceResult<T> = Result<T, WorkspaceError>;

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

function fail<T>(
  code: WorkspaceErrorCode,
  message: string,
  details?: Record<string, unknown>,
): WorkspaceResult<T> {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}

/** The paths of a workspace rooted at `root` (whether or not it exists). */
export function workspacePaths(root: string): WorkspacePaths {
  const r = path.resolve(root);
  const dir = path.join(r, WORKSPACE_DIR);
  return {
    root: r,
    dir,
    config: path.join(dir, "config.json"),
    storage: path.join(dir, "automerge"),
    opLog: path.join(dir, "op-log.jsonl"),
  };
}

/** The nearest workspace at or above `from`: the first ancestor holding a `.kumiki/` directory. */
export function findWorkspace(from: string): WorkspaceResult<WorkspacePaths> {
  const start = path.resolve(from);
  for (let d = start; ; d = path.dirname(d)) {
    try {
      if (fs.statSync(path.join(d, WORKSPACE_DIR)).isDirectory())
        return { ok: true, value: workspacePaths(d) };
    } catch {
      // Not here (or unreadable): keep walking up.
    }
    if (path.dirname(d) === d) break;
  }
  const remedy = "initWorkspace makes one";
  return fail("no-workspace", `no workspace at or above ${start}: ${remedy}`, { from: start, remedy });
}

/**
 * The workspace whose root is `dir` (`walkUp`: the nearest at or above it). When `dir` is not one
 * but a folder above it is, the refusal says so (`details.above`), so that a library never opens a
 * parent's workspace it was not asked for.
 */
function workspaceAt(dir: string, walkUp: boolean): WorkspaceResult<WorkspacePaths> {
  const nearest = findWorkspace(dir);
  if (walkUp || !nearest.ok) return nearest;
  const start = path.resolve(dir);
  if (nearest.value.root === start) return nearest;
  return fail(
    "no-workspace",
    `${start} is not a workspace; ${nearest.value.root}, above it, is: open that folder, or open with walkUp`,
    { from: start, above: nearest.value.root },
  );
}

/** Reads and checks `.kumiki/config.json`. */
export function readConfig(paths: WorkspacePaths): WorkspaceResult<WorkspaceConfig> {
  let text: string;
  try {
    text = fs.readFileSync(paths.config, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail(
      "config-corrupt",
      code === "ENOENT"
        ? `${paths.config} is missing: the workspace is incomplete (run \`kumiki init\` again after moving ${paths.dir} aside)`
        : `cannot read ${paths.config}: ${(e as Error).message}`,
      { path: paths.config },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return fail("config-corrupt", `${paths.config} is not valid JSON: ${(e as Error).message}`, {
      path: paths.config,
    });
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail("config-corrupt", `${paths.config} must hold a JSON object`, { path: paths.config });
  }
  const { format, graph } = raw as { format?: unknown; graph?: unknown };
  if (typeof format !== "number" || !Number.isInteger(format) || format < 1) {
    return fail("config-corrupt", `${paths.config}: "format" must be a positive integer`, {
      path: paths.config,
    });
  }
  if (format > WORKSPACE_FORMAT) {
    return fail(
      "config-unsupported",
      `${paths.config} has format ${format}; this version of kumiki reads up to ${WORKSPACE_FORMAT} (upgrade kumiki)`,
      { path: paths.config, format },
    );
  }
  if (typeof graph !== "string" || !/^automerge:[1-9A-HJ-NP-Za-km-z]+$/.test(graph)) {
    return fail("config-corrupt", `${paths.config}: "graph" must be an Automerge URL (automerge:…)`, {
      path: paths.config,
    });
  }
  return { ok: true, value: { format, graph } };
}

const GITIGNORE =
  "# Machine-local files of the store (kumiki writes them):\nop-log.jsonl.state\nautomerge/.lock\nautomerge/.generation\nautomerge/.tmp/\nidempotency.jsonl\ndamaged/\n";

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
    const logOptions = { directory: paths.storage, ...options, lock, mirror: new OpLogFile(paths.opLog) };
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

/** True when this process may create files in `dir` (false on a read-only mount, or another user's). */
function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The workspace at `dir` (or above it, with `walkUp`) and its config. */
function locate(
  dir: string,
  walkUp: boolean,
): WorkspaceResult<{ paths: WorkspacePaths; config: WorkspaceConfig }> {
  const found = workspaceAt(dir, walkUp);
  if (!found.ok) return found;
  const config = readConfig(found.value);
  return config.ok ? { ok: true, value: { paths: found.value, config: config.value } } : config;
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
  readonly log: OpLog<T>;
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
  const located = locate(dir, options.walkUp ?? false);
  if (!located.ok) return located;
  const { paths, config } = located.value;
  try {
    const ops = await AutomergeOpLog.readSnapshot({
      readOnly: !writable(paths.storage),
      directory: paths.storage,
      url: config.graph,
      mirror: new OpLogFile(paths.opLog),
    });
    if (ops !== undefined) {
      return {
        ok: true,
        value: { paths, config, log: new SnapshotOpLog(ops as T[]), snapshot: true },
      };
    }
  } catch (e) {
    return openFailure(e, paths);
  }
  const full = await openWorkspace<T>(dir);
  return full.ok ? { ok: true, value: { ...full.value, snapshot: false } } : full;
}
