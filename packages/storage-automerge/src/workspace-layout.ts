/**
 * Where a workspace's files are and what its config says: the folder holding `.kumiki/` (found by
 * walking up when asked), `.kumiki/config.json` read and checked. Loads no Automerge, so a reader
 * (`read.ts`) can find and check a workspace without it.
 */
import fs from "node:fs";
import path from "node:path";
import { type Result, WORKSPACE_DIR } from "@kumiki-graph/core/read";

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
  /** `.kumiki/cache/`: results kept to spare work (machine-local, never the truth; safe to delete). */
  readonly cache: string;
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

export function fail<T>(
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
    cache: path.join(dir, "cache"),
  };
}

/**
 * Keeps `entry` (a path relative to `.kumiki/`) out of git, in `.kumiki/.gitignore`: for what a
 * later version writes into a workspace an earlier one made.
 */
export function ignoreInGit(paths: WorkspacePaths, entry: string): void {
  const file = path.join(paths.dir, ".gitignore");
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  if (!text.split("\n").includes(entry))
    fs.appendFileSync(file, `${text === "" || text.endsWith("\n") ? "" : "\n"}${entry}\n`);
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
export function workspaceAt(dir: string, walkUp: boolean): WorkspaceResult<WorkspacePaths> {
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

/**
 * Why the workspace at `paths` is no longer the one holding `graph`: removed (its config.json is
 * gone), or another graph made or cloned there; undefined while it is. One small file read. A
 * config.json that does not parse is not taken for a replacement (the open that follows says why).
 */
export function replacedReason(paths: WorkspacePaths, graph: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(paths.config, "utf8");
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT"
      ? `the workspace at ${paths.root} was removed (${paths.config} is gone)`
      : undefined;
  }
  let found: unknown;
  try {
    found = (JSON.parse(text) as { graph?: unknown } | null)?.graph;
  } catch {
    return undefined;
  }
  return typeof found === "string" && found !== graph
    ? `the workspace at ${paths.root} was replaced: it holds the graph ${found} now`
    : undefined;
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
        ? `${paths.config} is missing: the workspace is incomplete (move ${paths.dir} aside and initialise the workspace again: initWorkspace, or kumiki init)`
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

/** True when this process may create files in `dir` (false on a read-only mount, or another user's). */
export function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The workspace at `dir` (or above it, with `walkUp`) and its config. */
export function locate(
  dir: string,
  walkUp: boolean,
): WorkspaceResult<{ paths: WorkspacePaths; config: WorkspaceConfig }> {
  const found = workspaceAt(dir, walkUp);
  if (!found.ok) return found;
  const config = readConfig(found.value);
  return config.ok ? { ok: true, value: { paths: found.value, config: config.value } } : config;
}
