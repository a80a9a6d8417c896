import fs from "node:fs";
import path from "node:path";
import { LAYERS } from "../lang/layers.js";
import { writeFileAtomic } from "../store/files.js";
import { makeDirs } from "../store/make-dirs.js";
import { ok, reject, type StoreResult } from "../store/result.js";
import { DEFINITION_EXT, LAYER_DIRS } from "./layout.js";

/**
 * The definition files of the tree at `root`: every `*.kumiki` file directly in a layer folder,
 * tree path (`slots/todos.kumiki`) → content. Anything else (other files, sub-folders, the temp
 * files of an interrupted write) is not part of the tree.
 */
export function readTree(root: string): StoreResult<Map<string, string>> {
  const out = new Map<string, string>();
  for (const layer of LAYERS) {
    const dir = LAYER_DIRS[layer];
    const abs = path.join(root, dir);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      return reject("tree-unreadable", `cannot list ${abs}: ${(e as Error).message}`, { path: abs });
    }
    for (const entry of entries) {
      if (!entry.isFile() || !entry.name.endsWith(DEFINITION_EXT)) continue;
      const file = path.join(abs, entry.name);
      try {
        out.set(`${dir}/${entry.name}`, fs.readFileSync(file, "utf8"));
      } catch (e) {
        return reject("tree-unreadable", `cannot read ${file}: ${(e as Error).message}`, { path: file });
      }
    }
  }
  return ok(out);
}

/** Writes one file of the tree atomically (temp file, fsync, rename): a reader sees the old or the new content. */
export function writeTreeFile(root: string, treePath: string, content: string): void {
  const file = path.join(root, treePath);
  makeDirs(path.dirname(file));
  writeFileAtomic(file, content);
}

/** Removes one file of the tree (a file already gone is fine). */
export function removeTreeFile(root: string, treePath: string): void {
  fs.rmSync(path.join(root, treePath), { force: true });
}
