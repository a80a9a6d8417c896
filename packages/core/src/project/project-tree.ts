/**
 * `projectTree`: the graph written as the project.kumiki/ tree of ai-edit.md §9.10, a file per
 * definition.
 */
import { ok, type StoreResult } from "../store/result.js";
import type { Store } from "../store/store.js";
import { projectGraph } from "./projection.js";
import { fileHash, readSyncState, type SyncedFile, sameSyncState, writeSyncState } from "./sync-state.js";
import { readTree, removeTreeFile, writeTreeFile } from "./tree-files.js";

/** What {@link projectTree} did. */
export interface ProjectReport {
  /** Tree paths written (created or rewritten), sorted. */
  readonly written: readonly string[];
  /** Definition files removed because the store does not show them, sorted. */
  readonly removed: readonly string[];
  /** Files in the tree afterwards. */
  readonly files: number;
}

/**
 * Writes the store's project.kumiki/ tree at `root` (ai-edit.md §9.10): one file per definition
 * that shows under its name, `<layer folder>/<name>.kumiki` (`types/`, `slots/`, … `motions/`),
 * each holding the definition's text with current names, written atomically (temp file, rename),
 * and the sync state {@link syncFiles} starts from. The store is the source: a definition file
 * that differs is overwritten and one the store does not show is removed (use `syncFiles` to keep
 * edits made in the tree). Files already as the store shows them are not touched.
 */
export function projectTree(store: Store, root: string): StoreResult<ProjectReport> {
  const tree = readTree(root);
  if (!tree.ok) return tree;
  const state = readSyncState(root);
  const proj = projectGraph(store.read());
  const written: string[] = [];
  const next = new Map<string, SyncedFile>();
  for (const f of proj.byPath.values()) {
    if (tree.value.get(f.path) !== f.content) {
      writeTreeFile(root, f.path, f.content);
      written.push(f.path);
    }
    next.set(f.path, { def: f.def, hash: fileHash(f.content) });
  }
  const removed = [...tree.value.keys()].filter((p) => !proj.byPath.has(p));
  for (const p of removed) removeTreeFile(root, p);
  if (!state.ok || !sameSyncState(state.value, next)) writeSyncState(root, next);
  return ok({ written: written.sort(), removed: removed.sort(), files: next.size });
}
