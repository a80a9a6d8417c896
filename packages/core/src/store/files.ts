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

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a file atomically and durably: temp file in the same directory, fsync, rename, fsync of the directory. */
export function writeFileAtomic(file: string, data: string): void {
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = fs.openSync(tmp, "w");
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(path.dirname(file));
}
