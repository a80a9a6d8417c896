/**
 * A workspace's machine-local caches (`.kumiki/cache/`) as files: `{v: 1, stamp, entries}`, an
 * entry per key, the latest first. Written whole, by rename from a temporary file, without fsync —
 * a cache lost to a crash costs a recomputation, never a wrong answer — and never failing the call
 * that keeps one; read as nothing when missing, unreadable, of another shape or another stamp (the
 * code that computed it: an upgraded build never answers with an older one's results).
 */
import fs from "node:fs";
import { ignoreInGit, type WorkspacePaths } from "./workspace-layout.js";

/**
 * Writes `text` (or its pieces in turn, none of them joined into one string) to `file` in the
 * workspace's cache folder (made, and ignored by git, on first use); a failure is ignored.
 */
export function writeCacheFile(paths: WorkspacePaths, file: string, text: string | Iterable<string>): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    if (!fs.existsSync(paths.cache)) {
      // Not recursive: a workspace removed under a call that keeps a cache is not made again.
      fs.mkdirSync(paths.cache);
      ignoreInGit(paths, "cache/");
    }
    if (typeof text === "string") fs.writeFileSync(tmp, text);
    else writePieces(tmp, text);
    fs.renameSync(tmp, file);
  } catch {
    // A read-only or full disk: the answer stands all the same, only it is not kept.
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // A stray temporary is overwritten by the next write of this process id.
    }
  }
}

/** Writes `pieces` to `file` about 64 KiB at a time (a 2.5 MB table as one string and one buffer cost 20 ms more to write). */
function writePieces(file: string, pieces: Iterable<string>): void {
  const fd = fs.openSync(file, "w");
  try {
    let batch: string[] = [];
    let size = 0;
    for (const p of pieces) {
      batch.push(p);
      size += p.length;
      if (size < 1 << 16) continue;
      fs.writeSync(fd, batch.join(""));
      batch = [];
      size = 0;
    }
    if (batch.length > 0) fs.writeSync(fd, batch.join(""));
  } finally {
    fs.closeSync(fd);
  }
}

/** A cache entry: what was computed, under the key it answers. */
interface CacheEntry {
  readonly key: string;
}

/** The entries of `file` kept by this `stamp` that `isEntry` accepts; none when it cannot be read as one. */
export function readCacheEntries<E extends CacheEntry>(
  file: string,
  stamp: string,
  isEntry: (e: Partial<E>) => boolean,
): E[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return [];
  }
  const f = parsed as { v?: unknown; stamp?: unknown; entries?: unknown } | null;
  if (f === null || typeof f !== "object" || f.v !== 1 || f.stamp !== stamp || !Array.isArray(f.entries))
    return [];
  return f.entries.filter(
    (e): e is E => typeof e === "object" && e !== null && typeof e.key === "string" && isEntry(e),
  );
}

/**
 * Keeps `entry` first in `file` before the others of `kept` under another key, at most `limit` in
 * all; returns what the file now holds.
 */
export function putCacheEntry<E extends CacheEntry>(
  paths: WorkspacePaths,
  file: string,
  stamp: string,
  kept: readonly E[],
  entry: E,
  limit: number,
): E[] {
  const entries = [entry, ...kept.filter((e) => e.key !== entry.key).slice(0, limit - 1)];
  writeCacheFile(paths, file, JSON.stringify({ v: 1, stamp, entries }));
  return entries;
}
