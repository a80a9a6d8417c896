/**
 * The readable op log (`.kumiki/op-log.jsonl`): every op, one JSON object a line, sorted by op-id
 * (plain code-unit order), so `git diff` shows ops as added lines. It is derived from the Automerge
 * document and kept complete after every append and on close.
 *
 * Keeping it cheap: a sidecar (`<file>.state`) records the file's size, inode and mtime and the
 * Automerge heads of the document state it was written from (the op set is a function of that
 * state, so equal heads mean equal contents). When the file is as the sidecar says, was written at
 * the heads the document had just before an append, and the new op-ids sort after its last one
 * (op-ids are ULIDs, so a fresh local op normally does), the new lines are appended. Anything else
 * (an op that sorts earlier, ops that arrived from a peer, a file edited or checked out, a writer
 * that died between the store and the file) rewrites the file atomically: temp file, rename, fsync.
 */
import fs from "node:fs";
import {
  isWireOp,
  type StoredOp,
  WIRE_SCHEMA_VERSION,
  writeAll,
  writeFileAtomic,
} from "@kumiki-graph/core/read";
import { readOpLines } from "./op-log-lines.js";

interface Sidecar {
  readonly v: 2;
  readonly size: string;
  readonly ino: string;
  readonly mtimeNs: string;
  /** Sorted Automerge heads of the state the file was written from. */
  readonly heads: readonly string[];
  readonly maxId: string;
  /**
   * The storage chunks (FS storage `chunkStamps`: name, size, mtime) the file was derived from, when the log knew
   * them and held no invalid entry: a reader whose listing is equal may use the file instead of
   * loading the document (see {@link OpLogFile.verified}). Absent: the file is only readable.
   */
  readonly chunks?: readonly string[];
  /** The Automerge document id the file was derived from (absent in files of older versions). */
  readonly doc?: string;
  /**
   * The core `WIRE_SCHEMA_VERSION` under which every line of the file passed `isWireOp` when it
   * was written; absent when one did not (or an older version wrote it). A reader's fold takes the
   * file's ops unchecked only under its own version (see `ReadableOpLog.wireChecked`).
   */
  readonly wire?: number;
  /** The version under which a line of the file did not pass (so an append need not look again). */
  readonly notWire?: number;
}

/**
 * Whether the lines of the file `side` describes all pass the wire schema of this version; undefined
 * when no writer of this version judged them (a file of an older version).
 */
function judgedWire(side: Sidecar): boolean | undefined {
  if (side.wire === WIRE_SCHEMA_VERSION) return true;
  if (side.notWire === WIRE_SCHEMA_VERSION) return false;
  return undefined;
}

/** Whether every op passes the wire schema as it is. */
function allWire(ops: readonly StoredOp[]): boolean {
  for (const op of ops) if (!isWireOp(op)) return false;
  return true;
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function headsKey(heads: readonly string[]): string {
  return [...heads].sort().join(",");
}

import { OpLogFileError } from "./op-log-file-error.js";

export { OpLogFileError };

/** How the last {@link OpLogFile.update} brought the file up to date. */
export type MirrorUpdate = "unchanged" | "appended" | "rewritten";

const byId = (x: StoredOp, y: StoredOp) => (x["op-id"] < y["op-id"] ? -1 : x["op-id"] > y["op-id"] ? 1 : 0);

/**
 * Replaces a small file's content in place: pwrite at 0, then cut the tail if it got shorter. Not
 * atomic (a torn write must be harmless to the reader), but cheap: truncating to zero (O_TRUNC) makes
 * ext4 force the file's blocks out on close (auto_da_alloc), measured here at 0.4 ms against 0.015 ms.
 */
function overwriteSmallFile(file: string, text: string): void {
  const data = Buffer.from(text);
  let fd: number;
  try {
    fd = fs.openSync(file, "r+");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    fd = fs.openSync(file, "w");
  }
  try {
    fs.writeSync(fd, data, 0, data.length, 0);
    if (fs.fstatSync(fd).size > data.length) fs.ftruncateSync(fd, data.length);
  } finally {
    fs.closeSync(fd);
  }
}

/** The readable, sorted op log file and its sidecar. Call {@link update} while holding the store's lock. */
export class OpLogFile {
  readonly statePath: string;
  /** The sidecar as this process last wrote it, valid while the file's stat still matches it. */
  private last: Sidecar | undefined;
  /** Kept open between appends (with the inode it was opened on); the sidecar's too. */
  private appendFd: number | undefined;
  private appendIno: bigint | undefined;
  private sideFd: number | undefined;
  /** The chunk names of the latest {@link update}, recorded in the sidecar it writes. */
  private chunks: readonly string[] | undefined;

  /** The document id recorded in the sidecar (the log sets it once its document is known). */
  document: string | undefined;

  constructor(readonly path: string) {
    this.statePath = `${path}.state`;
  }

  /**
   * Makes the file hold exactly `all`, the ops of the document at `heads`. `added` are the ops of
   * the change just made, on top of the state at `headsBefore` (empty when nothing was appended).
   * `chunks` are the storage chunk names that state is stored in (omit them when the log holds
   * entries the file cannot show, so no reader takes the file for the whole document).
   */
  update(
    all: readonly StoredOp[],
    heads: readonly string[],
    added: readonly StoredOp[] = [],
    headsBefore: readonly string[] = [],
    chunks?: readonly string[],
  ): MirrorUpdate {
    this.chunks = chunks;
    const st = this.stat();
    const side = st && this.last && matches(this.last, st) ? this.last : this.readSidecar();
    if (side && st && matches(side, st)) {
      const at = headsKey(side.heads);
      if (at === headsKey(heads)) {
        // Same ops, but compaction or a flush may have renamed the chunks they are stored in.
        if (!sameList(side.chunks, chunks))
          this.writeSidecar(side.heads, side.maxId, judgedWire(side) ?? allWire(all), st);
        return "unchanged";
      }
      if (added.length > 0 && at === headsKey(headsBefore)) {
        const sorted = [...added].sort(byId);
        if (side.maxId === "" || sorted[0]!["op-id"] > side.maxId) {
          const fd = this.appender(st.ino);
          // All of it or a throw (a full disk writes short first, then refuses): a sidecar written
          // after a short write vouched for a torn last line, or for a file missing whole ops.
          writeAll(fd, Buffer.from(lines(sorted)));
          // A file no writer of this version judged is judged whole, once (the log holds every op).
          const before = judgedWire(side);
          const wire = before === undefined ? allWire(all) : before && allWire(sorted);
          this.writeSidecar(
            heads,
            sorted[sorted.length - 1]!["op-id"],
            wire,
            fs.fstatSync(fd, { bigint: true }),
          );
          return "appended";
        }
      }
    }
    this.rewrite(all, heads);
    return "rewritten";
  }

  /** Writes the whole file from `all` (the ops at `heads`), atomically. */
  rewrite(all: readonly StoredOp[], heads: readonly string[]): void {
    const sorted = [...all].sort(byId);
    // In slices, so a 100k-op log never needs one 30 MB string.
    function* slices(): Generator<string> {
      for (let i = 0; i < sorted.length; i += 4096) yield lines(sorted.slice(i, i + 4096));
    }
    writeFileAtomic(this.path, slices(), { tmp: `${this.path}.tmp-${process.pid}` });
    this.closeAppender();
    this.writeSidecar(heads, sorted.length > 0 ? sorted[sorted.length - 1]!["op-id"] : "", allWire(sorted));
  }

  /**
   * When the sidecar says the file was derived from exactly the storage chunks `chunks` (the current
   * listing) and the file is unchanged since (call it holding the store's lock, so no writer moves
   * between listing and read): the Automerge heads the sidecar says the file was written at, and
   * the document's ops from the file, read only when asked, without loading the document — a
   * reader answered from a cache kept for these heads (`kumiki check`) reads none of the 26 MB of a
   * 100,000-op file. `ops` answers undefined once the file is not the one vouched for (size, inode
   * and mtime, before and after the read: a writer that appended or rewrote it since, the lock
   * released) or a line is not an op. `wire`: every line passed the wire schema of this code's
   * version when written (see the sidecar's `wire`).
   */
  verified(chunks: readonly string[]):
    | {
        /** The Automerge heads the file was written at. */
        readonly heads: readonly string[];
        /** Every line passed the wire schema of this code's version when written. */
        readonly wire: boolean;
        /** The file's ops, read now; undefined once it is not the vouched file, or a line is not an op. */
        ops(): StoredOp[] | undefined;
      }
    | undefined {
    const side = this.readSidecar();
    const st = this.stat();
    if (side === undefined || st === undefined || !matches(side, st) || !sameList(side.chunks, chunks))
      return undefined;
    const file = this.path;
    return { heads: side.heads, wire: judgedWire(side) === true, ops: () => opsAsVouched(file, side) };
  }

  /**
   * The Automerge heads the file was written at, when it is unchanged since (its sidecar matches)
   * and was derived from the document `documentId`:
   * every change up to them was in the document when the file was written, and still must be.
   * Undefined when the file was edited, replaced or never written by this code.
   */
  writtenHeads(documentId: string): readonly string[] | undefined {
    return this.written(documentId)?.heads;
  }

  /**
   * The storage chunk names the file was derived from (see {@link writtenHeads} for when it
   * answers): a chunk not among them was written after, and its ops may not be in the file.
   */
  writtenChunks(documentId: string): readonly string[] | undefined {
    return this.written(documentId)?.chunks;
  }

  private written(documentId: string): Sidecar | undefined {
    const side = this.readSidecar();
    const st = this.stat();
    return side !== undefined && st !== undefined && matches(side, st) && side.doc === documentId
      ? side
      : undefined;
  }

  /**
   * Every line of the file that holds an op (a JSON object with a string "op-id"), and how many
   * lines do not: what a damaged document is read and repaired from. Empty when there is no file.
   */
  readTolerant(): { readonly ops: StoredOp[]; readonly unreadable: number } {
    let text: string;
    try {
      text = fs.readFileSync(this.path, "utf8");
    } catch {
      return { ops: [], unreadable: 0 };
    }
    const ops: StoredOp[] = [];
    let unreadable = 0;
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      try {
        const op = JSON.parse(line) as { "op-id"?: unknown };
        if (typeof op === "object" && op !== null && !Array.isArray(op) && typeof op["op-id"] === "string") {
          ops.push(op as StoredOp);
          continue;
        }
      } catch {
        // Counted below.
      }
      unreadable++;
    }
    return { ops, unreadable };
  }

  /** Closes the descriptors kept open (they are reopened if used again). */
  dispose(): void {
    this.closeAppender();
    if (this.sideFd !== undefined) fs.closeSync(this.sideFd);
    this.sideFd = undefined;
  }

  private appender(ino: bigint): number {
    if (this.appendFd !== undefined && this.appendIno === ino) return this.appendFd;
    this.closeAppender();
    const fd = fs.openSync(this.path, "a");
    this.appendFd = fd;
    this.appendIno = fs.fstatSync(fd, { bigint: true }).ino;
    return fd;
  }

  private closeAppender(): void {
    if (this.appendFd !== undefined) fs.closeSync(this.appendFd);
    this.appendFd = undefined;
    this.appendIno = undefined;
  }

  private stat(): fs.BigIntStats | undefined {
    try {
      return fs.statSync(this.path, { bigint: true });
    } catch {
      return undefined;
    }
  }

  private readSidecar(): Sidecar | undefined {
    try {
      const s = JSON.parse(fs.readFileSync(this.statePath, "utf8")) as Partial<Sidecar>;
      if (s.v !== 2 || !Array.isArray(s.heads) || typeof s.maxId !== "string") return undefined;
      return s as Sidecar;
    } catch {
      return undefined;
    }
  }

  private writeSidecar(heads: readonly string[], maxId: string, wire: boolean, stat?: fs.BigIntStats): void {
    const st = stat ?? this.stat();
    if (!st) return;
    const side: Sidecar = {
      v: 2,
      size: String(st.size),
      ino: String(st.ino),
      mtimeNs: String(st.mtimeNs),
      heads: [...heads].sort(),
      maxId,
      ...(this.chunks === undefined ? {} : { chunks: this.chunks }),
      ...(this.document === undefined ? {} : { doc: this.document }),
      ...(wire ? { wire: WIRE_SCHEMA_VERSION } : { notWire: WIRE_SCHEMA_VERSION }),
    };
    // Not atomic on purpose: a torn sidecar fails to parse or to match, and that only forces a rewrite.
    // Written in place through a kept descriptor (see overwriteSmallFile for why not O_TRUNC).
    if (this.sideFd !== undefined && fs.fstatSync(this.sideFd).nlink === 0) {
      fs.closeSync(this.sideFd);
      this.sideFd = undefined;
    }
    if (this.sideFd === undefined) {
      overwriteSmallFile(this.statePath, "");
      this.sideFd = fs.openSync(this.statePath, "r+");
    }
    const data = Buffer.from(`${JSON.stringify(side)}\n`);
    fs.writeSync(this.sideFd, data, 0, data.length, 0);
    if (fs.fstatSync(this.sideFd).size > data.length) fs.ftruncateSync(this.sideFd, data.length);
    this.last = side;
  }
}

/**
 * The ops of `file` when it is still the file `side` vouches for, checked on the descriptor read
 * from, before and after the read (a writer appends or renames a new file into place, so a match
 * on both sides is the vouched content); undefined otherwise, or when a line is not an op.
 */
function opsAsVouched(file: string, side: Sidecar): StoredOp[] | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    if (!matches(side, fs.fstatSync(fd, { bigint: true }))) return undefined;
    const ops = readOpLines(fd, Number(side.size));
    return matches(side, fs.fstatSync(fd, { bigint: true })) ? ops : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function matches(side: Sidecar, st: fs.BigIntStats): boolean {
  return side.size === String(st.size) && side.ino === String(st.ino) && side.mtimeNs === String(st.mtimeNs);
}

function lines(ops: readonly StoredOp[]): string {
  let s = "";
  for (const op of ops) s += `${JSON.stringify(op)}\n`;
  return s;
}
