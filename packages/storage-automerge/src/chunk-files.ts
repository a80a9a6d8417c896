/**
 * Where automerge-repo's NodeFS layout keeps a key on disk (`ab/cdef…/type/name`), and the chunk
 * files of a document listed from it, without loading Automerge: what the storage adapter and a
 * reader that checks op-log.jsonl against the chunks (workspace-read.ts) both use.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * The storage folder's generation token file: every chunk write and removal, and every pending
 * write, moves the token, so an open log lists the folder again only when it moved.
 */
export const GENERATION_FILE = ".generation";

/**
 * Moves the token in the open generation file `fd` and returns it: always 16 hex characters,
 * written in place — no truncation, so no reader sees a shorter token. The one spelling of the
 * storage adapter's writes and a pending write's (pending-bundles.ts).
 */
export function writeGenerationToken(fd: number): string {
  const next = randomBytes(8).toString("hex");
  fs.writeSync(fd, next, 0, "utf8");
  return next;
}

/** The kinds of chunk a document is stored in. */
export const CHUNK_TYPES = ["snapshot", "incremental"] as const;

/** The same mapping as NodeFSStorageAdapter (whose own is private): `ab/cdef…/type/name`. */
export function storagePath(directory: string, key: readonly string[]): string {
  const [first = "", ...rest] = key;
  return path.join(directory, first.slice(0, 2), first.slice(2), ...rest);
}

/**
 * The chunk files of `documentId` in the storage at `directory`, sorted, each stamped as
 * `type/name size mtime` (mtime in ns). automerge-repo names a chunk by its content's hash, so equal
 * names mean equal contents — of sound files. The size and mtime are what catch a file damaged in
 * place since (cut short, emptied, overwritten: the full open's checksums then name it); a list
 * recorded before that no longer equals the one read after it.
 */
export function chunkStampsIn(directory: string, documentId: string): string[] {
  const out: string[] = [];
  for (const type of CHUNK_TYPES) {
    const dir = storagePath(directory, [documentId, type]);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      continue;
    }
    for (const name of names) {
      const st = fs.statSync(path.join(dir, name), { bigint: true, throwIfNoEntry: false });
      // Removed between the listing and the stat (a compaction): listed without a stamp, so the
      // list cannot equal one recorded while the file existed.
      out.push(st === undefined ? `${type}/${name}` : `${type}/${name} ${st.size} ${st.mtimeNs}`);
    }
  }
  return out.sort();
}
