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
import path from "node:path";
import { overwriteSmallFile } from "./fs-storage.js";
import type { StoredOp } from "./op-log.js";

interface Sidecar {
  readonly v: 2;
  readonly size: string;
  readonly ino: string;
  readonly mtimeNs: string;
  /** Sorted Automerge heads of the state the file was written from. */
  readonly heads: readonly string[];
  readonly maxId: string;
}

function headsKey(heads: readonly string[]): string {
  return [...heads].sort().join(",");
}

/** How the last {@link OpLogFile.update} brought the file up to date. */
export type MirrorUpdate = "unchanged" | "appended" | "rewritten";

const byId = (x: StoredOp, y: StoredOp) => (x["op-id"] < y["op-id"] ? -1 : x["op-id"] > y["op-id"] ? 1 : 0);

/** The readable, sorted op log file and its sidecar. Call {@link update} while holding the store's lock. */
export class OpLogFile {
  readonly statePath: string;
  /** The sidecar as this process last wrote it, valid while the file's stat still matches it. */
  private last: Sidecar | undefined;
  /** Kept open between appends (with the inode it was opened on); the sidecar's too. */
  private appendFd: number | undefined;
  private appendIno: bigint | undefined;
  private sideFd: number | undefined;

  constructor(readonly path: string) {
    this.statePath = `${path}.state`;
  }

  /**
   * Makes the file hold exactly `all`, the ops of the document at `heads`. `added` are the ops of
   * the change just made, on top of the state at `headsBefore` (empty when nothing was appended).
   */
  update(
    all: readonly StoredOp[],
    heads: readonly string[],
    added: readonly StoredOp[] = [],
    headsBefore: readonly string[] = [],
  ): MirrorUpdate {
    const st = this.stat();
    const side = st && this.last && matches(this.last, st) ? this.last : this.readSidecar();
    if (side && st && matches(side, st)) {
      const at = headsKey(side.heads);
      if (at === headsKey(heads)) return "unchanged";
      if (added.length > 0 && at === headsKey(headsBefore)) {
        const sorted = [...added].sort(byId);
        if (side.maxId === "" || sorted[0]!["op-id"] > side.maxId) {
          const fd = this.appender(st.ino);
          fs.writeSync(fd, lines(sorted));
          this.writeSidecar(heads, sorted[sorted.length - 1]!["op-id"], fs.fstatSync(fd, { bigint: true }));
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
    const tmp = `${this.path}.tmp-${process.pid}`;
    const fd = fs.openSync(tmp, "w");
    try {
      // In slices, so a 100k-op log never needs one 30 MB string.
      for (let i = 0; i < sorted.length; i += 4096) fs.writeSync(fd, lines(sorted.slice(i, i + 4096)));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.path);
    this.closeAppender();
    const dfd = fs.openSync(path.dirname(this.path), "r");
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
    this.writeSidecar(heads, sorted.length > 0 ? sorted[sorted.length - 1]!["op-id"] : "");
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

  private writeSidecar(heads: readonly string[], maxId: string, stat?: fs.BigIntStats): void {
    const st = stat ?? this.stat();
    if (!st) return;
    const side: Sidecar = {
      v: 2,
      size: String(st.size),
      ino: String(st.ino),
      mtimeNs: String(st.mtimeNs),
      heads: [...heads].sort(),
      maxId,
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

function matches(side: Sidecar, st: fs.BigIntStats): boolean {
  return side.size === String(st.size) && side.ino === String(st.ino) && side.mtimeNs === String(st.mtimeNs);
}

function lines(ops: readonly StoredOp[]): string {
  let s = "";
  for (const op of ops) s += `${JSON.stringify(op)}\n`;
  return s;
}
