/**
 * What `syncFiles` remembers of the last sync (each file's hash and the store's text), so it can
 * tell who changed what since.
 */
import fs from "node:fs";
import path from "node:path";
import { blake3HexOfText } from "../lang/blake3.js";
import { type DefId, isDefId } from "../ops/ids.js";
import { WORKSPACE_DIR, writeFileAtomic } from "../store/files.js";
import { makeDirs } from "../store/make-dirs.js";
import { ok, reject, type StoreResult } from "../store/result.js";
import { parseDefinitionPath } from "./layout.js";

/** Where the sync state lives, relative to the tree root. */
export const SYNC_STATE_FILE = `${WORKSPACE_DIR}/tree-state.json`;
/** The sync state format this code writes and reads. */
export const SYNC_STATE_FORMAT = 1;

/** What one file of the tree was at the last sync: the definition it shows and its content's hash. */
export interface SyncedFile {
  readonly def: DefId;
  /** {@link fileHash} of the content both sides agreed on. */
  readonly hash: string;
}

/**
 * The tree as of the last sync, path → file. A file's side changed since when its content's hash
 * differs; the store's side changed when the definition shows at another path or its file content
 * hashes differently.
 */
export type SyncState = ReadonlyMap<string, SyncedFile>;

/** The hash a sync records for a file's content: blake3 of its UTF-8 bytes. */
export function fileHash(content: string): string {
  return `blake3:${blake3HexOfText(content)}`;
}

/** Reads the sync state of the tree at `root`; empty when there is none yet (nothing synced). */
export function readSyncState(root: string): StoreResult<SyncState> {
  const file = path.join(root, SYNC_STATE_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return ok(new Map());
    return reject("tree-unreadable", `cannot read ${file}: ${(e as Error).message}`, { path: file });
  }
  const corrupt = (why: string) =>
    reject<SyncState>(
      "tree-unreadable",
      `${file} is not a sync state (${why}); delete it to start over: the next sync then compares every file with the store afresh`,
      { path: file },
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return corrupt((e as Error).message);
  }
  if (typeof data !== "object" || data === null) return corrupt("not an object");
  const { format, files } = data as { format?: unknown; files?: unknown };
  if (format !== SYNC_STATE_FORMAT) return corrupt(`format ${JSON.stringify(format)}, expected 1`);
  if (typeof files !== "object" || files === null || Array.isArray(files)) return corrupt("no files");
  const out = new Map<string, SyncedFile>();
  for (const [p, entry] of Object.entries(files)) {
    const { def, hash } = (entry ?? {}) as { def?: unknown; hash?: unknown };
    if (
      parseDefinitionPath(p) === undefined ||
      typeof def !== "string" ||
      !isDefId(def) ||
      typeof hash !== "string"
    )
      return corrupt(`bad entry ${JSON.stringify(p)}`);
    out.set(p, { def, hash });
  }
  return ok(out);
}

/**
 * Writes the sync state atomically: one file a line, sorted by path, so it reads well. It is
 * machine-local (it relates this checkout's files to this store), so it is added to the
 * workspace's `.kumiki/.gitignore` when there is one: a clone or a pull then compares the files
 * with the store afresh, and two branches never conflict over it in git.
 */
export function writeSyncState(root: string, state: SyncState): void {
  const file = path.join(root, SYNC_STATE_FILE);
  makeDirs(path.dirname(file));
  ignoreLocally(path.dirname(file), path.basename(file));
  const lines = [...state]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, f]) => `    ${JSON.stringify(p)}: ${JSON.stringify({ def: f.def, hash: f.hash })}`);
  const body = lines.length === 0 ? "{}" : `{\n${lines.join(",\n")}\n  }`;
  writeFileAtomic(file, `{\n  "format": ${SYNC_STATE_FORMAT},\n  "files": ${body}\n}\n`);
}

/** True when two states record the same files. */
export function sameSyncState(a: SyncState, b: SyncState): boolean {
  if (a.size !== b.size) return false;
  for (const [p, f] of a) {
    const g = b.get(p);
    if (g === undefined || g.def !== f.def || g.hash !== f.hash) return false;
  }
  return true;
}

function ignoreLocally(dir: string, name: string): void {
  const ignore = path.join(dir, ".gitignore");
  let text: string;
  try {
    text = fs.readFileSync(ignore, "utf8");
  } catch {
    return;
  }
  if (text.split(/\r?\n/).includes(name)) return;
  writeFileAtomic(ignore, `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${name}\n`);
}
