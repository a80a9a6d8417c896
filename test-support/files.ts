/**
 * Folders and files of tests in every package: temporary folders removed together, a tree's files
 * written, read and snapshotted, and the chunk files of an automerge-repo storage folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Temporary directories, removed by {@link TempDirs.cleanup} (call it in afterEach). */
export class TempDirs {
  private readonly dirs: string[] = [];

  make(): string {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-tree-"));
    this.dirs.push(d);
    return d;
  }

  cleanup(): void {
    for (const d of this.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  }
}

/** Every file under `root` (paths relative to it, `/`-separated) → content, the sync state included. */
export function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(root, p).split(path.sep).join("/"), fs.readFileSync(p, "utf8"));
    }
  };
  walk(root);
  return out;
}

/** Writes a tree file (creating its folder). */
export function put(root: string, treePath: string, content: string): void {
  const file = path.join(root, treePath);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Reads a tree file; undefined when absent. */
export function get(root: string, treePath: string): string | undefined {
  try {
    return fs.readFileSync(path.join(root, treePath), "utf8");
  } catch {
    return undefined;
  }
}

/** Every chunk file (`…/snapshot/<hash>`, `…/incremental/<hash>`) below a storage folder, sorted. */
export function chunkFiles(storage: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/[/\\](snapshot|incremental)[/\\]/.test(p)) out.push(p);
    }
  };
  walk(storage);
  return out.sort();
}
