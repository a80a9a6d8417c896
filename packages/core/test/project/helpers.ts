import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore } from "../../src/integrity/checked-store.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoreResult } from "../../src/store/result.js";
import type { Store } from "../../src/store/store.js";

/**
 * A store over a fresh in-memory log, with a deterministic clock. Without `checked`, the write gate
 * is the built-in one only (parse, references): what a projection needs, and fast.
 */
export function memoryStore(author = "agent:test", checked = false): Store {
  let clock = 1_780_000_000_000;
  const r = openStore({
    log: new MemoryOpLog(),
    author,
    now: () => clock++,
    ...(checked ? {} : { validators: [] }),
  });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** The value of a result, or a thrown error naming the rejection. */
export function must<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

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
