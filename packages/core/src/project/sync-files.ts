/**
 * `syncFiles` (kumiki sync --files): the project.kumiki/ tree and the store kept in step both
 * ways, refusing when both changed the same definition.
 */
import { Graph } from "../graph/graph.js";
import { GraphReader } from "../graph/reader.js";
import type { DefId } from "../ops/ids.js";
import { decomposeSource } from "../ops/source.js";
import type { BundleItem } from "../store/inputs.js";
import { ok, type Rejection, reject, type StoreResult } from "../store/result.js";
import type { Store } from "../store/store.js";
import type { WriteReceipt } from "../store/store-types.js";
import { checkFile, type FileProblem, moveKey } from "./file-check.js";
import { sourceFromFile } from "./file-text.js";
import { parseDefinitionPath } from "./layout.js";
import { type ProjectedFile, projectGraph, type TreeProjection } from "./projection.js";
import {
  fileHash,
  readSyncState,
  SYNC_STATE_FILE,
  type SyncedFile,
  type SyncState,
  sameSyncState,
  writeSyncState,
} from "./sync-state.js";
import { readTree, removeTreeFile, writeTreeFile } from "./tree-files.js";

/** How {@link syncFiles} runs. */
export interface FileSyncOptions {
  /** Work out and report everything, write nothing (neither the store nor a file). */
  readonly dryRun?: boolean;
  /** The task the ops from file edits are tagged with. */
  readonly task?: string;
}

/** A write to the store that a file edit became, with the files it came from. */
export interface FileSyncItem {
  readonly item: BundleItem;
  /** The tree paths whose change it carries (a rename: the old path, then the new one). */
  readonly paths: readonly string[];
}

/** A file changed on both sides since the last sync: reported, neither side overwritten. */
export interface FileConflict {
  readonly path: string;
  /** The definition the store shows there, or had there (`type.Todo`). */
  readonly definition: string;
  readonly reason: string;
  /** The file's content now (absent: deleted). */
  readonly file?: string;
  /** What the store would write there now (absent: the store removed or moved it). */
  readonly store?: string;
  /** Where the store shows the definition now, when it renamed it: that path is left alone too. */
  readonly storePath?: string;
  /** How to resolve it. */
  readonly hint: string;
}

/** A file whose change could not be taken (it does not parse, or the store refused it): nothing from it was applied. */
export interface FileSyncError {
  readonly path: string;
  readonly code: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** What one sync did (or, with `dryRun`, would do). */
export interface FileSyncReport {
  readonly dryRun: boolean;
  /** The file edits, as the bundle items they became, in bundle order. */
  readonly items: readonly FileSyncItem[];
  /** The ops stored for them (one atomic bundle); with `dryRun`, the ops that would be. */
  readonly applied: WriteReceipt["ops"];
  /** Tree paths written from the store (created or rewritten), sorted. */
  readonly written: readonly string[];
  /** Tree paths removed because the store no longer shows them there, sorted. */
  readonly removed: readonly string[];
  readonly conflicts: readonly FileConflict[];
  readonly errors: readonly FileSyncError[];
  /** Files in step with the store after the sync. */
  readonly files: number;
}

interface Plan {
  renames: FileSyncItem[];
  edits: FileSyncItem[];
  adds: FileSyncItem[];
  removes: FileSyncItem[];
  conflicts: FileConflict[];
  errors: FileSyncError[];
  /** Paths left alone: neither written nor removed, their sync state kept as it was. */
  blocked: Set<string>;
  /** Paths whose file is as of the last sync: the store's side may overwrite it. */
  known: Set<string>;
  /** Paths whose file content went into an item: once applied, the store's side may overwrite it. */
  consumed: Set<string>;
}

const RESOLVE_HINT =
  "make the two agree, then sync again: edit the file to the store's text (as the store views it), or change the store's definition to the file's (replace or remove it in the store)";

/**
 * Syncs the project.kumiki/ tree at `root` with the store, both ways (ai-edit.md §9.10). Files
 * changed since the last sync become ops: a new file an add, a changed one a replace, a deleted
 * one a remove, a file moved to a new name with the same definition in it (layout, comments and
 * its own name aside) a rename (and a replace when its text changed too). All of them go in one
 * atomic bundle. Then the store's changes are written back: every file the store shows otherwise
 * is rewritten (atomically: temp file and rename) and files of definitions it no longer shows are
 * removed. The sync state (`.kumiki/tree-state.json`: each file's hash as of the sync) is what
 * tells a file edit from a store change.
 *
 * Never overwritten: a file changed on both sides since the last sync (a conflict), a file that
 * does not parse or does not define the definition its path names, a file whose change the store
 * refused (errors: nothing from such a file is applied; the others are). Running it again
 * without changes in between changes nothing.
 */
export async function syncFiles(
  store: Store,
  root: string,
  options: FileSyncOptions = {},
): Promise<StoreResult<FileSyncReport>> {
  const dryRun = options.dryRun === true;
  const state = readSyncState(root);
  if (!state.ok) return state;
  const tree = readTree(root);
  if (!tree.ok) return tree;
  const disk = tree.value;
  const plan = planSync(state.value, disk, projectGraph(store.read()));

  let items = [...plan.renames, ...plan.edits, ...plan.adds, ...plan.removes];
  let applied: WriteReceipt["ops"] = [];
  let opIds: readonly string[] = [];
  while (items.length > 0) {
    const bundle = items.map((i) => withTask(i.item, options.task));
    // A dry run previews: the same gate, the exact ops, nothing written.
    const r = dryRun ? store.preview({ ops: bundle }) : await store.apply({ ops: bundle });
    if (r.ok) {
      applied = r.value.ops;
      opIds = "opIds" in r.value ? r.value.opIds : [];
      break;
    }
    if (r.error.code === "storage-failed" || r.error.code === "store-closed") return r;
    // Drop the files of the refused items and try the rest: a file the store refuses must not
    // hold back the others, each file's edit is taken on its own merits.
    const culprits = blame(store, items, r.error, options.task);
    const paths = new Set(culprits.flatMap((c) => c.item.paths));
    for (const { item, error } of culprits)
      for (const p of item.paths) {
        plan.errors.push({ path: p, code: error.code, message: `${p}: ${error.message}` });
        plan.blocked.add(p);
        plan.consumed.delete(p);
      }
    items = items.filter((i) => !i.paths.some((p) => paths.has(p)));
  }

  const after = projectGraph(
    dryRun && applied.length > 0
      ? new GraphReader(Graph.fold([...store.read().graph.ops(), ...applied]))
      : store.read(),
  );
  const { writes, removals, next } = planWriteBack(state.value, disk, after, plan);
  if (!dryRun) {
    // Files first, the sync state last: a sync interrupted in between finds files that agree
    // with the store, which it takes as in step.
    let at = "";
    try {
      for (const [p, content] of writes) {
        at = p;
        writeTreeFile(root, p, content);
      }
      for (const p of removals) {
        at = p;
        removeTreeFile(root, p);
      }
      at = SYNC_STATE_FILE;
      if (!sameSyncState(state.value, next)) writeSyncState(root, next);
    } catch (e) {
      return reject(
        "storage-failed",
        `the tree could not be written at ${at}: ${(e as Error).message}; ${opIds.length === 0 ? "no file edit was applied" : `the file edits were stored (${opIds.length} ops)`}, every file holds its old or its new content: sync again to finish`,
        { path: at, opIds },
      );
    }
  }
  return ok({
    dryRun,
    items,
    applied,
    written: [...writes.keys()].sort(),
    removed: removals.sort(),
    conflicts: plan.conflicts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    errors: plan.errors,
    files: next.size,
  });
}

/**
 * The items a refused bundle is to be blamed on, each with its own refusal: the item the store
 * named; else those whose definitions the write gate's new diagnostics are in (a type error in
 * a new file); else, trying the bundle one item longer at a time, the first item that makes it
 * fail. Never an item the refusal is not about: the other files' edits are retried.
 */
function blame(
  store: Store,
  items: readonly FileSyncItem[],
  error: Rejection,
  task: string | undefined,
): { item: FileSyncItem; error: Rejection }[] {
  const index = error.details?.item;
  if (typeof index === "number" && items[index] !== undefined) return [{ item: items[index], error }];
  const diagnostics = error.details?.diagnostics;
  if (Array.isArray(diagnostics)) {
    const where = new Set<string>();
    for (const d of diagnostics as { location?: unknown }[])
      if (typeof d.location === "string") where.add(d.location.split(".").slice(0, 2).join("."));
    const named = items.filter((i) =>
      i.paths.some((p) => {
        const at = parseDefinitionPath(p);
        return at !== undefined && where.has(`${at.layer}.${at.name}`);
      }),
    );
    if (named.length > 0) return named.map((item) => ({ item, error }));
  }
  for (let k = 1; k <= items.length; k++) {
    const r = store.preview({ ops: items.slice(0, k).map((i) => withTask(i.item, task)) });
    if (!r.ok) return [{ item: items[k - 1]!, error: r.error }];
  }
  // The bundle fails but no prefix does (it cannot: the whole bundle is the last prefix).
  return items.map((item) => ({ item, error }));
}

function withTask(item: BundleItem, task: string | undefined): BundleItem {
  return task === undefined ? item : { ...item, task };
}

/** A plan with nothing in it yet. */
function emptyPlan(): Plan {
  return {
    renames: [],
    edits: [],
    adds: [],
    removes: [],
    conflicts: [],
    errors: [],
    blocked: new Set(),
    known: new Set(),
    consumed: new Set(),
  };
}

/** Records a file that cannot be taken (it does not parse, its name is not its path's): blocked. */
function problem(plan: Plan, f: FileProblem): void {
  plan.errors.push({
    path: f.path,
    code: f.code,
    message: f.message,
    ...(f.line === undefined ? {} : { line: f.line, column: f.column }),
  });
  plan.blocked.add(f.path);
}

/** Records a file both sides changed differently: blocked, with both sides' texts and how to resolve. */
function conflict(
  plan: Plan,
  path: string,
  definition: string,
  reason: string,
  sides: { file?: string | undefined; store?: string | undefined; storePath?: string | undefined },
): void {
  plan.conflicts.push({
    path,
    definition,
    reason,
    ...(sides.file === undefined ? {} : { file: sides.file }),
    ...(sides.store === undefined ? {} : { store: sides.store }),
    ...(sides.storePath === undefined ? {} : { storePath: sides.storePath }),
    hint: RESOLVE_HINT,
  });
  plan.blocked.add(path);
  if (sides.storePath !== undefined) plan.blocked.add(sides.storePath);
}

/** A file as the last sync left it that is gone from the tree while the store kept its definition. */
interface Vanished {
  readonly path: string;
  readonly old: ProjectedFile;
}

/** A file new since the last sync that parses. */
interface Fresh {
  readonly path: string;
  readonly file: string;
  readonly name: string;
  readonly declared: string;
}

/**
 * The files of the last sync: unchanged, edited on disk (an edit), changed on both sides (agreed,
 * or a conflict). Returns the files gone from disk (maybe moved) and the new paths a move settled.
 */
function planKnownFiles(
  plan: Plan,
  state: SyncState,
  disk: ReadonlyMap<string, string>,
  proj: TreeProjection,
): { vanished: Vanished[]; settled: Set<string> } {
  const vanished: Vanished[] = [];
  /** New files already accounted for. */
  const settled = new Set<string>();
  for (const [p, entry] of [...state].sort(byKey)) {
    const file = disk.get(p);
    const fileChanged = file === undefined || fileHash(file) !== entry.hash;
    const now = proj.byDef.get(entry.def);
    const storeChanged = now === undefined || now.path !== p || fileHash(now.content) !== entry.hash;
    if (!fileChanged) {
      plan.known.add(p);
      continue;
    }
    if (!storeChanged) {
      if (file === undefined) {
        vanished.push({ path: p, old: now });
        continue;
      }
      const checked = checkFile(p, file);
      if ("code" in checked) problem(plan, checked);
      else if (checked.declared !== checked.name)
        problem(plan, nameMismatch(p, checked.declared, checked.name));
      else {
        plan.edits.push({
          item: { op: "replace", qname: entry.def, source: sourceFromFile(file, now.text) },
          paths: [p],
        });
        plan.consumed.add(p);
      }
      continue;
    }
    // Both sides changed: fine when they agree, a conflict otherwise.
    // They agree when the file at p is what the store shows at p (maybe another definition of the
    // name, or nothing), and, when the definition moved, its new file is as the store shows it.
    const shownAtP = proj.byPath.get(p);
    if (
      (file === undefined ? shownAtP === undefined : shownAtP?.content === file) &&
      (now === undefined || now.path === p || disk.get(now.path) === now.content)
    )
      continue;
    // The file was moved as it was, and the store renamed the definition to that same name (the
    // same rename on both sides, or a sync cut off after storing the rename): the moved file is
    // the definition under its new name, to be rewritten showing that name.
    const movedTo = now === undefined ? undefined : disk.get(now.path);
    if (
      file === undefined &&
      now !== undefined &&
      movedTo !== undefined &&
      !state.has(now.path) &&
      fileHash(movedTo) === entry.hash
    ) {
      settled.add(now.path);
      plan.consumed.add(now.path);
      continue;
    }
    const label = now === undefined ? labelOf(p) : `${now.layer}.${now.name}`;
    const reason =
      file === undefined
        ? `the file was deleted, and the store changed ${label} since the last sync`
        : now === undefined
          ? `the file was edited, and the store removed ${label} since the last sync`
          : now.path !== p
            ? `the file was edited, and the store renamed the definition to ${now.name} since the last sync`
            : "the file was edited, and the store changed the definition since the last sync";
    conflict(plan, p, label, reason, {
      file,
      store: now?.path === p ? now.content : undefined,
      storePath: now !== undefined && now.path !== p ? now.path : undefined,
    });
  }

  return { vanished, settled };
}

/** The files new since the last sync: the store's own (agreed, or a conflict), or new ones that parse. */
function planNewFiles(
  plan: Plan,
  state: SyncState,
  disk: ReadonlyMap<string, string>,
  proj: TreeProjection,
  settled: ReadonlySet<string>,
): Fresh[] {
  const fresh: Fresh[] = [];
  for (const p of [...disk.keys()].filter((k) => !state.has(k) && !settled.has(k)).sort()) {
    const file = disk.get(p)!;
    const at = proj.byPath.get(p);
    if (at !== undefined) {
      if (at.content !== file)
        conflict(
          plan,
          p,
          `${at.layer}.${at.name}`,
          "the file was created, and the store has the definition with another text",
          { file, store: at.content },
        );
      continue;
    }
    const checked = checkFile(p, file);
    if ("code" in checked) problem(plan, checked);
    else fresh.push({ path: p, file, name: checked.name, declared: checked.declared });
  }
  return fresh;
}

/**
 * New files against vanished ones: a move (a rename, with an edit when the text changed too), an
 * add; a vanished file no new one matches is a removal.
 */
function planMoves(plan: Plan, vanished: readonly Vanished[], fresh: readonly Fresh[]): void {
  const unmatched = [...vanished];
  for (const f of fresh) {
    const layer = parseDefinitionPath(f.path)!.layer;
    let match: number;
    if (f.declared === f.name) {
      const key = moveKey(f.file);
      match = unmatched.findIndex((v) => v.old.layer === layer && moveKey(v.old.content) === key);
    } else {
      // Moved as it was: the text still declares the old name.
      match = unmatched.findIndex(
        (v) => v.old.layer === layer && v.old.name === f.declared && v.old.content === f.file,
      );
      if (match < 0) {
        problem(plan, nameMismatch(f.path, f.declared, f.name));
        continue;
      }
    }
    const moved = match < 0 ? undefined : unmatched.splice(match, 1)[0];
    if (moved === undefined) {
      plan.adds.push({ item: { op: "add", source: f.file }, paths: [f.path] });
      plan.consumed.add(f.path);
      continue;
    }
    const paths = [moved.path, f.path];
    plan.renames.push({ item: { op: "rename", qname: moved.old.def, newName: f.name }, paths });
    if (f.file !== moved.old.content && f.declared === f.name && !sameApartFromName(f.file, moved.old)) {
      plan.edits.push({
        item: { op: "replace", qname: moved.old.def, source: sourceFromFile(f.file, moved.old.text) },
        paths,
      });
    }
    plan.consumed.add(moved.path);
    plan.consumed.add(f.path);
  }
  for (const v of unmatched) {
    plan.removes.push({ item: { op: "remove", qname: v.old.def }, paths: [v.path] });
    plan.consumed.add(v.path);
  }
}

/** Decides, from the last sync's state, the tree and the store's projection, what each side changed. */
export function planSync(state: SyncState, disk: ReadonlyMap<string, string>, proj: TreeProjection): Plan {
  const plan = emptyPlan();
  const { vanished, settled } = planKnownFiles(plan, state, disk, proj);
  planMoves(plan, vanished, planNewFiles(plan, state, disk, proj, settled));
  return plan;
}

/** True when `file` is `old`'s file with only the declared name changed. */
function sameApartFromName(file: string, old: ProjectedFile): boolean {
  const cut = (text: string): string | undefined => {
    const parts = decomposeSource(text);
    return parts === undefined ? undefined : `${parts.head ?? `${parts.layer} `}\u0000${parts.body}`;
  };
  const a = cut(old.content);
  return a !== undefined && a === cut(file);
}

function nameMismatch(path: string, declared: string, name: string): FileProblem {
  return {
    path,
    code: "definition-mismatch",
    message: `${path} defines ${declared}, not ${name}: a file is named for its definition; to rename, move the file (its text unchanged) to the new name`,
  };
}

function labelOf(path: string): string {
  const slash = path.indexOf("/");
  return `${path.slice(0, slash)}/${path.slice(slash + 1).replace(/\.kumiki$/, "")}`;
}

function byKey<V>(a: [string, V], b: [string, V]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/**
 * What to write, what to remove and the next sync state, once the file edits are applied: every
 * file the store shows otherwise is written, unless it is left alone or holds something no sync
 * has seen; the sync state records each file in step, and keeps the old entry of a file left alone.
 */
function planWriteBack(
  state: SyncState,
  disk: ReadonlyMap<string, string>,
  after: TreeProjection,
  plan: Plan,
): { writes: Map<string, string>; removals: string[]; next: Map<string, SyncedFile> } {
  const mayOverwrite = (p: string): boolean => !disk.has(p) || plan.known.has(p) || plan.consumed.has(p);
  const writes = new Map<string, string>();
  const next = new Map<string, SyncedFile>();
  for (const f of after.byPath.values()) {
    if (plan.blocked.has(f.path)) continue;
    if (disk.get(f.path) !== f.content) {
      if (!mayOverwrite(f.path)) continue;
      writes.set(f.path, f.content);
    }
    next.set(f.path, { def: f.def as DefId, hash: fileHash(f.content) });
  }
  const removals: string[] = [];
  for (const p of disk.keys()) {
    if (after.byPath.has(p) || plan.blocked.has(p) || !mayOverwrite(p)) continue;
    removals.push(p);
  }
  for (const [p, entry] of state) if (plan.blocked.has(p)) next.set(p, entry);
  return { writes, removals, next };
}
