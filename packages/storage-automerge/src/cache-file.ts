/**
 * How a workspace's machine-local caches (`.kumiki/cache/`) are written: whole, by rename from a
 * temporary file, without fsync — a cache lost to a crash costs a recomputation, never a wrong
 * answer — and never failing the call that keeps one.
 */
import fs from "node:fs";
import { ignoreInGit, type WorkspacePaths } from "./workspace-layout.js";

/** Writes `text` to `file` in the workspace's cache folder (made, and ignored by git, on first use); a failure is ignored. */
export function writeCacheFile(paths: WorkspacePaths, file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    if (!fs.existsSync(paths.cache)) {
      fs.mkdirSync(paths.cache, { recursive: true });
      ignoreInGit(paths, "cache/");
    }
    fs.writeFileSync(tmp, text);
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
