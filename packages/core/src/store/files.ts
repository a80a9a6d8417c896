/**
 * The files a workspace keeps beside its op log: the folder's name (`.kumiki`), and the one atomic,
 * durable write every such file gets (the projection's state, the op-log storage's config). The op
 * log itself is a storage package's (`@kumiki-graph/storage-automerge`); these are what core's own
 * layers (the projection) write too.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** The workspace folder's name. */
export const WORKSPACE_DIR = ".kumiki";

/** Flushes a folder's entries (a file created, renamed or removed in it) to the disk. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** How {@link writeFileAtomic} writes. */
export interface AtomicWriteOptions {
  /**
   * The temporary file to write first, on the same file system as the target (default: beside it,
   * named for this process); a caller that sweeps its own temporaries names them.
   */
  readonly tmp?: string;
  /** How the target's folder is flushed (default {@link fsyncDir}; a caller may keep folders open). */
  readonly fsyncDir?: (dir: string) => void;
}

/**
 * Writes a file atomically and durably — the one routine every file of a workspace and of the
 * storage is written with: the data into a temporary file in the same folder (all of it: a write
 * may take only part of what it is given on a nearly full disk), fsync of that file, rename over
 * the target, fsync of the folder. A reader sees the old file or the new one, never a part, and
 * once this returns the new one survives a crash. When any step fails the temporary file is
 * removed (a failed write must not leave space taken) and the error thrown. `data` may come in
 * pieces, so a large file never needs to be one string.
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array | Iterable<string | Uint8Array>,
  options: AtomicWriteOptions = {},
): void {
  const tmp = options.tmp ?? `${file}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const fd = fs.openSync(tmp, "w");
    try {
      const pieces = typeof data === "string" || data instanceof Uint8Array ? [data] : data;
      for (const piece of pieces)
        writeAll(fd, typeof piece === "string" ? Buffer.from(piece, "utf8") : piece);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  (options.fsyncDir ?? fsyncDir)(path.dirname(file));
}

/**
 * Writes all of `bytes` to `fd`, or throws: a write may store only part of what it is given (a
 * nearly full disk writes short first, then refuses), so one `writeSync` is not a whole write.
 */
export function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length; ) off += fs.writeSync(fd, bytes, off, bytes.length - off);
}
