/**
 * Bundles stored beside a workspace's Automerge document by a write that did not load it (issue 42:
 * a write in a process of its own costs about 0.2 s of Automerge load at 5,000 definitions, and
 * seconds at 100,000 ops). `.kumiki/automerge/pending/<name>.json` holds one append: the JSON array
 * of its ops, written whole (temporary file in `.tmp/`, fsync, rename, fsync of the folder) under
 * the storage lock, after which the generation token moves so that open logs look. The next log
 * that opens the document, appends, fences or closes (the CLI daemon, the MCP server, `kumiki sync`,
 * a write opened in full) folds each file into the document as one bundle of its own and then
 * removes it; a file whose ops the document holds already (a fold cut short by a crash) is removed
 * without a second copy. Readers take the files as ops after op-log.jsonl's (workspace-read.ts),
 * and an open log holds them at its next poll, before any fold (repo-op-log.ts).
 *
 * A file that does not parse as such a bundle (edited by hand, damaged on disk) is neither read nor
 * folded nor removed: {@link PendingBundles.read} reports it, the folder stays as it is.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fsyncDir, type StoredOp, writeFileAtomic } from "@kumiki-graph/core/read";
import { GENERATION_FILE, writeGenerationToken } from "./chunk-files.js";

/** The folder of pending bundles, inside the storage folder. */
export const PENDING_DIR = "pending";

/** One pending append: its file's name and its ops, in the order they were written. */
export interface PendingBundle<T extends StoredOp = StoredOp> {
  readonly name: string;
  readonly ops: readonly T[];
}

/** What a log folds pending bundles from (a workspace's {@link PendingBundles}). */
export interface PendingSource<T extends StoredOp = StoredOp> {
  /** Cheap: whether any pending file is there (one directory listing). */
  any(): boolean;
  /** The pending files' names, oldest first (one directory listing). */
  names(): string[];
  /** Every pending bundle that parses (of `names` only, when given), oldest first. */
  read(names?: readonly string[]): PendingBundle<T>[];
  /** Removes the named files (once their ops are stored in the document); a missing one is no error. */
  remove(names: readonly string[]): void;
}

/** A pending file's name: the first op's id and a hash of the content (no two writes share one). */
const NAME = /^[A-Za-z0-9_]{1,64}-[0-9a-f]{16}\.json$/;

/** The pending bundles of the storage folder `storageDir` (`.kumiki/automerge`). */
export class PendingBundles<T extends StoredOp = StoredOp> implements PendingSource<T> {
  /** The folder the files are in. */
  readonly dir: string;
  /** Files that did not parse as a bundle at the last {@link read}, with why. */
  unreadable: { readonly name: string; readonly reason: string }[] = [];

  constructor(readonly storageDir: string) {
    this.dir = path.join(storageDir, PENDING_DIR);
  }

  /** The pending files' names, sorted (the order they were written in). */
  names(): string[] {
    try {
      return fs
        .readdirSync(this.dir)
        .filter((n) => NAME.test(n))
        .sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
  }

  any(): boolean {
    return this.names().length > 0;
  }

  read(names: readonly string[] = this.names()): PendingBundle<T>[] {
    const out: PendingBundle<T>[] = [];
    this.unreadable = [];
    for (const name of names) {
      let text: string;
      try {
        text = fs.readFileSync(path.join(this.dir, name), "utf8");
      } catch (e) {
        // Folded and removed by another process between the listing and the read.
        if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw e;
      }
      const ops = parseBundle<T>(text);
      if (ops === undefined) this.unreadable.push({ name, reason: "not a JSON array of ops" });
      else out.push({ name, ops });
    }
    return out;
  }

  /**
   * Stores `ops` as one pending bundle, durably, and moves the generation token; returns the
   * file's name. Call it holding the storage lock, after judging the ops against every op stored
   * (op-log.jsonl's and the pending ones).
   */
  write(ops: readonly T[]): string {
    if (ops.length === 0) throw new Error("a pending bundle holds at least one op");
    const text = JSON.stringify(ops);
    const first = ops[0]!["op-id"].replace(/[^A-Za-z0-9_]/g, "_").slice(0, 64);
    const name = `${first}-${randomBytes(8).toString("hex")}.json`;
    if (!fs.existsSync(this.dir)) {
      fs.mkdirSync(this.dir);
      fsyncDir(this.storageDir);
    }
    const tmpDir = path.join(this.storageDir, ".tmp");
    fs.mkdirSync(tmpDir, { recursive: true });
    // Named as the storage adapter names its temporaries, so that a dead writer's is swept at the next open.
    const tmp = path.join(tmpDir, `${process.pid}-pending-${randomBytes(6).toString("hex")}`);
    const file = path.join(this.dir, name);
    try {
      writeFileAtomic(file, text, { tmp });
      moveGeneration(this.storageDir);
    } catch (e) {
      // Refused writes are never stored: a failure after the rename (the folder's fsync, the
      // token) takes the file back, so that no later fold stores what its caller was told failed.
      fs.rmSync(file, { force: true });
      throw e;
    }
    return name;
  }

  remove(names: readonly string[]): void {
    if (names.length === 0) return;
    for (const name of names) fs.rmSync(path.join(this.dir, name), { force: true });
    try {
      fsyncDir(this.dir);
    } catch {
      // The folder went with its workspace: nothing is left to sync.
    }
  }
}

/** The ops of a pending file's text, or undefined when it is not a non-empty array of ops. */
function parseBundle<T extends StoredOp>(text: string): T[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  for (const op of parsed) if (!isHeldOp(op)) return undefined;
  return parsed as T[];
}

/**
 * Whether `x` is what a log holds as an op: a JSON object with a non-empty string op-id (the op
 * schema is the fold's to judge). The document's bundles (repo-op-log.ts) and pending files alike.
 */
export function isHeldOp(x: unknown): x is StoredOp {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const id = (x as { "op-id"?: unknown })["op-id"];
  return typeof id === "string" && id !== "";
}

/** Moves the storage's generation token, as the storage adapter does, so that every open log looks again. */
function moveGeneration(storageDir: string): void {
  const fd = fs.openSync(path.join(storageDir, GENERATION_FILE), fs.constants.O_RDWR | fs.constants.O_CREAT);
  try {
    writeGenerationToken(fd);
  } finally {
    fs.closeSync(fd);
  }
}
