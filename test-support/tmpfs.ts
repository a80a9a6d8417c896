/**
 * A real full disk for tests: a small tmpfs, which only root can mount. `mountable` says whether
 * this run can (tests that need it are skipped, saying why, where it cannot).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

/** True when this process may mount a tmpfs (root, and mount allowed in this sandbox). */
export const mountable = canMount();

/** Why a full-disk test is skipped here. */
export const NOT_MOUNTABLE = "needs root to mount a small tmpfs (a real full disk): skipped";

/** Mounts a tmpfs of `size` (`"1m"`, `"200k"`) on `dir` (made if absent). */
export function mountTmpfs(dir: string, size: string): void {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
}

/** Unmounts `dir` lazily (a process killed a moment ago may still hold a file there). */
export function unmount(dir: string): void {
  execFileSync("umount", ["-l", dir], { stdio: "ignore" });
}

/** Fills the disk holding `dir` until `leave` bytes are free (rounded to its blocks); the filler's path. */
export function fillDisk(dir: string, leave: number): string {
  const filler = path.join(dir, ".filler");
  fs.rmSync(filler, { force: true });
  const { bavail, bsize } = fs.statfsSync(dir);
  const size = Math.max(0, bavail * bsize - leave);
  const fd = fs.openSync(filler, "w");
  try {
    const block = Buffer.alloc(64 * 1024);
    for (let written = 0; written < size; ) {
      const n = Math.min(block.length, size - written);
      written += fs.writeSync(fd, block, 0, n);
    }
  } catch {
    // Full before the count: that is what was asked.
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}
