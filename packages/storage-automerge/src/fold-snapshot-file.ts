/**
 * A workspace's fold of op-log.jsonl kept as a snapshot (core's `Graph.snapshot`) in
 * `.kumiki/cache/fold.jsonl`, for the ops of one state of the file: what a write in a process of
 * its own takes its graph up from instead of parsing and folding every op (quick-write.ts).
 *
 * Lines: a label `{v, stamp, state, head, rows}` (the head's and each row's length in bytes), the
 * snapshot's head, then one row per definition. The label and the head are read and parsed; a row
 * is read from the open file only when core asks for it (the graph looks at that definition) — at
 * 100,012 ops the file is 33 MB, of which a write reads the 5 MB head. `stamp` names the code that folded (as for the check cache): a
 * snapshot of another build is never taken, since what a fold decides can change between builds.
 * Written by rename from a temporary file, without fsync: a snapshot lost to a crash is a miss,
 * and so is one of another state, another stamp, or that does not read as one; nothing here throws.
 */
import fs from "node:fs";
import path from "node:path";
// Types only: this entry loads no more of core than its read entry.
import type { FoldSnapshot, FoldSnapshotHead } from "@kumiki-graph/core";
import { writeCacheFile } from "./cache-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

const NEWLINE = 0x0a;

/** The label line: what the file is of, and where its head and rows are (byte offsets after the label). */
interface Label {
  readonly v: 1;
  readonly stamp: string;
  readonly state: string;
  /** The head's length in bytes, and each row's (each line's, its newline included). */
  readonly head: number;
  readonly rows: readonly number[];
}

/**
 * Rows read one at a time past this many: a graph that walks every definition (a check of the
 * whole program) reads the rest of the file at once instead of a read per row.
 */
const ROWS_READ_ALONE = 64;

/** A kept snapshot: what core takes the graph up from, and the file to close once the store is closed. */
export interface KeptFoldSnapshot {
  readonly snapshot: FoldSnapshot;
  /** Closes the file (rows are read from it until then). */
  close(): void;
}

/**
 * The op-ids a snapshot's graph holds, asked one at a time: an op-id greater than all of them (a
 * write's fresh one) is answered without the set of them, which is made when first needed.
 */
export function heldBySnapshot(snapshot: FoldSnapshot): {
  readonly count: number;
  holds(id: string): boolean;
} {
  const ids = snapshot.head.causal.ids;
  // The snapshot's ops are the first `count`: a graph taken up from it appends its own to the
  // same array (core's `Causality.restore` takes it), which are not the snapshot's.
  const count = ids.length;
  let greatest = snapshot.head.causal.max ?? "";
  if (greatest === "") for (let i = 0; i < count; i++) if (ids[i]! > greatest) greatest = ids[i]!;
  let set: Set<string> | undefined;
  return {
    count,
    holds(id) {
      if (id > greatest) return false;
      set ??= new Set(ids.slice(0, count));
      return set.has(id);
    },
  };
}

/** The snapshot file bound to `state` (op-log.jsonl's, without pending bundles: `opsState`). */
export class FoldSnapshotFile {
  private readonly file: string;

  constructor(
    private readonly paths: WorkspacePaths,
    readonly state: string,
    private readonly stamp: string,
  ) {
    this.file = path.join(paths.cache, "fold.jsonl");
  }

  /**
   * The snapshot kept for this state by this build, or undefined: its label and head read and
   * parsed now, each row read from the open file when core first asks for it (the file is held
   * open, so a snapshot written meanwhile by rename is not mixed in).
   */
  read(): KeptFoldSnapshot | undefined {
    let fd: number | undefined;
    try {
      fd = fs.openSync(this.file, "r");
      const size = fs.fstatSync(fd).size;
      const label = readLabel(fd, size);
      if (label?.v !== 1 || label.stamp !== this.stamp || label.state !== this.state)
        throw new Error("another");
      const headAt = label.at;
      const rowsAt = headAt + label.head;
      const starts = [rowsAt];
      for (const n of label.rows) starts.push(starts[starts.length - 1]! + n);
      if (!Array.isArray(label.rows) || starts[starts.length - 1] !== size) throw new Error("cut");
      const head = JSON.parse(readBytes(fd, headAt, label.head - 1).toString("utf8")) as FoldSnapshotHead;
      const open = fd;
      let whole: Buffer | undefined;
      let reads = 0;
      const row = (i: number): string => {
        const [from, to] = [starts[i]!, starts[i + 1]! - 1];
        if (whole === undefined && ++reads > ROWS_READ_ALONE) whole = readBytes(open, rowsAt, size - rowsAt);
        if (whole !== undefined) return whole.toString("utf8", from - rowsAt, to - rowsAt);
        return readBytes(open, from, to - from).toString("utf8");
      };
      return {
        snapshot: { head, rows: label.rows.length, row },
        close: () => fs.closeSync(open),
      };
    } catch {
      if (fd !== undefined) fs.closeSync(fd);
      return undefined;
    }
  }

  /** Keeps `snapshot` (core's `Graph.snapshot`) for this state (a failed write is ignored). */
  write(snapshot: { readonly head: FoldSnapshotHead; readonly rows: readonly string[] }): void {
    const head = `${JSON.stringify(snapshot.head)}\n`;
    const rows = snapshot.rows.map((r) => `${r}\n`);
    const label: Label = {
      v: 1,
      stamp: this.stamp,
      state: this.state,
      head: Buffer.byteLength(head),
      rows: rows.map((r) => Buffer.byteLength(r)),
    };
    function* lines(): IterableIterator<string> {
      yield `${JSON.stringify(label)}\n`;
      yield head;
      yield* rows;
    }
    writeCacheFile(this.paths, this.file, lines());
  }
}

/** The label line at the file's start, with where the head starts; undefined when it does not read as one. */
function readLabel(fd: number, size: number): (Label & { readonly at: number }) | undefined {
  // A label names each row's length: at 5,000 definitions about 25 KB; read a piece at a time.
  let bytes = Buffer.alloc(0);
  for (let at = 0; at < size; ) {
    const piece = readBytes(fd, at, Math.min(1 << 16, size - at));
    at += piece.length;
    bytes = Buffer.concat([bytes, piece]);
    const nl = bytes.indexOf(NEWLINE);
    if (nl >= 0) return { ...(JSON.parse(bytes.toString("utf8", 0, nl)) as Label), at: nl + 1 };
  }
  return undefined;
}

/** `length` bytes of `fd` from `position` (throws when the file is shorter). */
function readBytes(fd: number, position: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, out, got, length - got, position + got);
    if (n === 0) throw new Error("the file is shorter than its label says");
    got += n;
  }
  return out;
}
