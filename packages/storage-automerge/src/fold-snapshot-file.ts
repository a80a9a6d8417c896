/**
 * A workspace's fold of op-log.jsonl kept as a snapshot (core's `Graph.snapshot`) in
 * `.kumiki/cache/fold.jsonl`, for the ops of one state of the file: what a write in a process of
 * its own takes its graph up from instead of parsing and folding every op (quick-write.ts).
 *
 * Lines: `{v, stamp, state}`, the snapshot's head, then one row per definition, which core reads
 * only when the graph looks at that definition — the file is read whole (one read, its bytes kept)
 * and only the head is parsed. `stamp` names the code that folded (as for the check cache): a
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

  /** The snapshot kept for this state by this build (its head parsed, its rows on demand), or undefined. */
  read(): FoldSnapshot | undefined {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(this.file);
    } catch {
      return undefined;
    }
    const first = bytes.indexOf(NEWLINE);
    const second = first < 0 ? -1 : bytes.indexOf(NEWLINE, first + 1);
    if (second < 0 || bytes[bytes.length - 1] !== NEWLINE) return undefined;
    try {
      const label = JSON.parse(bytes.toString("utf8", 0, first)) as {
        v?: unknown;
        stamp?: unknown;
        state?: unknown;
      };
      if (label?.v !== 1 || label.stamp !== this.stamp || label.state !== this.state) return undefined;
      const head = JSON.parse(bytes.toString("utf8", first + 1, second)) as FoldSnapshotHead;
      // Where each row starts; the last ends before the file's final newline.
      const starts: number[] = [];
      for (let at = second + 1; at < bytes.length; at = bytes.indexOf(NEWLINE, at) + 1) starts.push(at);
      starts.push(bytes.length);
      return {
        head,
        rows: starts.length - 1,
        row: (i) => bytes.toString("utf8", starts[i], starts[i + 1]! - 1),
      };
    } catch {
      return undefined;
    }
  }

  /** Keeps `snapshot` (core's `Graph.snapshot`) for this state (a failed write is ignored). */
  write(snapshot: { readonly head: FoldSnapshotHead; readonly rows: readonly string[] }): void {
    const { stamp, state } = this;
    function* lines(): IterableIterator<string> {
      yield `${JSON.stringify({ v: 1, stamp, state })}\n`;
      yield `${JSON.stringify(snapshot.head)}\n`;
      for (const row of snapshot.rows) yield `${row}\n`;
    }
    writeCacheFile(this.paths, this.file, lines());
  }
}
