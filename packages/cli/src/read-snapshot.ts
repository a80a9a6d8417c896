/**
 * The read snapshot: the ops of a workspace as the last full open saw them, kept in the user's
 * cache directory, so a read verb (`view`, `list`, `status`…) answers without loading Automerge.
 *
 * It is served only while it is provably current. Core's storage rewrites a 16-character
 * generation token (`.kumiki/automerge/.generation`) whenever any process saves or removes a chunk
 * of the graph; a snapshot records the token read *before* the full open that produced it, and
 * is used only while the token is unchanged and the workspace still names the same graph. A write
 * anywhere (another process, a sync peer's ops saved by a running `kumiki serve`) changes the
 * token, and the next read opens the store in full and takes a new snapshot. A token that cannot be
 * read, a snapshot that does not parse, or one for another workspace: the full open serves.
 *
 * `KUMIKI_READ_SNAPSHOT=off` turns it off; `KUMIKI_CACHE_DIR` says where snapshots live (default
 * `$XDG_CACHE_HOME/kumiki`, else `~/.cache/kumiki`, else the system temp directory).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The workspace folder's name (core's WORKSPACE_DIR, repeated here so this path loads no Automerge). */
const WORKSPACE_DIR = ".kumiki";
const FORMAT = 1;

type Env = Readonly<Record<string, string | undefined>>;

/** One stored op, as the op log holds it. */
export interface SnapshotOp {
  readonly "op-id": string;
}

interface SnapshotFile {
  readonly v: number;
  readonly root: string;
  readonly graph: string;
  readonly generation: string;
  readonly ops: readonly SnapshotOp[];
}

/** The folder holding `.kumiki/` at or above `from` (as core's findWorkspace finds it), or undefined. */
export function findWorkspaceRoot(from: string): string | undefined {
  for (let d = path.resolve(from); ; d = path.dirname(d)) {
    try {
      if (fs.statSync(path.join(d, WORKSPACE_DIR)).isDirectory()) return d;
    } catch {
      // Not here: keep walking up.
    }
    if (path.dirname(d) === d) return undefined;
  }
}

/** True unless `KUMIKI_READ_SNAPSHOT=off`. */
export function snapshotsEnabled(env: Env): boolean {
  return env.KUMIKI_READ_SNAPSHOT !== "off";
}

function cacheDir(env: Env): string {
  if (env.KUMIKI_CACHE_DIR) return env.KUMIKI_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, "kumiki");
  if (env.HOME) return path.join(env.HOME, ".cache", "kumiki");
  return path.join(os.tmpdir(), `kumiki-${os.userInfo().uid}`);
}

function snapshotPath(root: string, env: Env): string {
  const key = createHash("sha256").update(root).digest("hex").slice(0, 24);
  return path.join(cacheDir(env), `read-${key}.json`);
}

/** The storage's generation token, or undefined when there is none yet (nothing ever written). */
export function readGeneration(root: string): string | undefined {
  try {
    const g = fs.readFileSync(path.join(root, WORKSPACE_DIR, "automerge", ".generation"), "utf8");
    return /^[0-9a-f]{16}$/.test(g) ? g : undefined;
  } catch {
    return undefined;
  }
}

/** The graph URL `.kumiki/config.json` of the workspace at `root` names, or undefined. */
export function readGraphUrl(root: string): string | undefined {
  try {
    const c = JSON.parse(fs.readFileSync(path.join(root, WORKSPACE_DIR, "config.json"), "utf8")) as {
      graph?: unknown;
    };
    return typeof c.graph === "string" ? c.graph : undefined;
  } catch {
    return undefined;
  }
}

/** The snapshot's ops when it is current for the workspace at `root`, else undefined. */
export function readSnapshot(root: string, env: Env): readonly SnapshotOp[] | undefined {
  const generation = readGeneration(root);
  if (generation === undefined) return undefined;
  let snap: SnapshotFile;
  try {
    snap = JSON.parse(fs.readFileSync(snapshotPath(root, env), "utf8")) as SnapshotFile;
  } catch {
    return undefined;
  }
  if (
    snap.v !== FORMAT ||
    snap.root !== root ||
    snap.generation !== generation ||
    !Array.isArray(snap.ops) ||
    snap.graph !== readGraphUrl(root)
  )
    return undefined;
  return snap.ops;
}

/**
 * Records `ops` as the workspace's state at `generation` (read before the open that loaded them).
 * Best effort: a cache that cannot be written only costs the next read its speed.
 */
export function writeSnapshot(
  root: string,
  env: Env,
  generation: string,
  graph: string,
  ops: readonly SnapshotOp[],
): void {
  const file = snapshotPath(root, env);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    // The cache folder and its parent, one level at a time: Node's recursive mkdir never returns
    // where a parent refuses children (/proc), and a cache deeper than that is simply not kept.
    const dir = path.dirname(file);
    for (const d of [path.dirname(dir), dir]) {
      try {
        fs.mkdirSync(d, { mode: 0o700 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
    }
    const snap: SnapshotFile = { v: FORMAT, root, graph, generation, ops };
    fs.writeFileSync(tmp, JSON.stringify(snap), { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}
