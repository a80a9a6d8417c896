/**
 * Every definition of a graph as a table that a process of its own answers `view`, `list` and
 * `refs` from (table-reads.ts) without reading or folding the ops (issue 42), kept for the state
 * of the ops it was made from (the CLI keeps it in `.kumiki/cache/definitions.jsonl`: a read that
 * folded keeps it whole, a write appends the rows it changed). Texts are kept as stored, with
 * their bindings and every definition's name, and what is shown is rendered from them: rendering
 * all 5,031 of a 5,000-definition program took 64 ms in a fresh process, a walk that keeps them as
 * stored a few.
 */
import type { DefinitionState, GraphStatus } from "../graph/graph.js";
import type { Layer } from "../lang/layers.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { RefBindings } from "../ops/op.js";
import type { StoredOp } from "./op-log.js";
import type { Store } from "./store.js";

/** One definition: identity, layer, name, alive, visible, version, text as stored, its bindings. */
export type DefinitionRow = readonly [
  def: DefId,
  layer: Layer,
  name: string,
  alive: boolean,
  visible: boolean,
  version: OpId,
  text: string,
  refs: RefBindings,
];

/** Every definition of a graph (live, removed, hidden by a name conflict), as JSON keeps it. */
export interface DefinitionTable {
  readonly v: 1;
  readonly rows: readonly DefinitionRow[];
  /** What `status` says of the state, but the author ({@link statusOfState}); absent for a damaged store. */
  readonly status?: GraphStatus;
}

/** The table of every definition `store` holds now (other writers' ops taken in first, as a read does). */
export function definitionTable(store: Store): DefinitionTable {
  const status = statusOfState(store);
  return { v: 1, rows: [...definitionRows(store)], ...(status === undefined ? {} : { status }) };
}

/**
 * What `status` says of the state `store` holds now, less the author (the caller's, not the
 * state's): what a table keeps for `status` to answer from. Undefined for a damaged store (its
 * status says what is damaged and how to repair it: the store's to answer).
 */
export function statusOfState(store: Store): GraphStatus | undefined {
  const { author: _author, damage, ...status } = store.status();
  return damage === undefined ? status : undefined;
}

/**
 * The rows of {@link definitionTable}, made one at a time as they are taken: what a writer of the
 * table to a file iterates, so that no row outlives its line (5,000 rows held to the end were
 * copied by every garbage collection meanwhile).
 */
export function* definitionRows(store: Store): IterableIterator<DefinitionRow> {
  const { graph } = store.read();
  const shadowed = graph.shadowed();
  for (const s of graph.definitions()) yield rowOfState(s, s.alive && !shadowed.has(s.def));
}

function rowOfState(s: DefinitionState, visible: boolean): DefinitionRow {
  return [s.def, s.layer, s.name, s.alive, visible, s.body.version, s.body.text, s.body.refs];
}

/**
 * The rows the table of the graph before `written` (ops this store just wrote) must take, each in
 * place of its definition's row, to be the table after them; undefined when that is not known
 * without the whole table. Known for adds, replaces, edits, renames and removes: each changes its
 * own definition's row; a rename or a remove what shows under each name that definition ever had
 * (another claimant of a name can show, or stop showing); through a reference to a removed
 * definition (whose remove the conflict policy may take back) the rows of what that definition
 * references, then or before, and of what references a removed one. A link changes what a name
 * binds, and a control op what applies: undefined.
 */
export function changedRows(store: Store, written: readonly StoredOp[]): DefinitionRow[] | undefined {
  const defs = new Set<DefId>();
  let renamed = false;
  for (const op of written) {
    const o = op as { readonly op?: unknown; readonly def?: unknown };
    if (typeof o.def !== "string" || typeof o.op !== "string" || !ROW_OPS.has(o.op)) return undefined;
    renamed ||= o.op === "rename" || o.op === "remove";
    defs.add(o.def as DefId);
  }
  const { graph } = store.read();
  for (const d of [...defs]) {
    const s = graph.definition(d);
    for (const o of s?.ops ?? []) {
      const refs = (o as { readonly refs?: RefBindings }).refs;
      if (refs !== undefined) for (const t of Object.values(refs)) defs.add(t);
    }
    if (!renamed || s === undefined) continue;
    for (const r of graph.referrersOf(d)) defs.add(r);
    // Every definition that ever claimed one of its names: the ones that claim it now among them.
    for (const name of namesOf(s)) for (const c of graph.everNamed(s.layer, name)) defs.add(c);
  }
  const rows: DefinitionRow[] = [];
  for (const d of defs) {
    const s = graph.definition(d);
    if (s !== undefined) rows.push(rowOfState(s, graph.isVisible(d)));
  }
  return rows;
}

/** The writes {@link changedRows} knows the rows of. */
const ROW_OPS = new Set(["add", "replace", "edit", "rename", "remove"]);

/** Every name a definition has had: its add's and its applied renames'. */
function namesOf(s: DefinitionState): Set<string> {
  const names = new Set([s.name, s.added.name]);
  for (const o of s.ops) if (o.op === "rename") names.add(o["new-name"]);
  return names;
}

/**
 * The first five values of a row (identity, layer, name, alive, visible), as {@link DefinitionRows.every}
 * gives them, and the whole row when asked: a list of names parses no text.
 */
export interface RowHead {
  /** `[def, layer, name, alive, visible]`, parsed, not checked. */
  readonly head: unknown;
  /** The whole row (parsed, not checked). */
  row(): unknown;
}

/**
 * A table's rows as a reader looks them up: from a table in memory ({@link rowsOf}), or from a
 * file read a row at a time (storage-automerge's `DefinitionTableFile`). What they answer is
 * checked by {@link viewFromTable} and {@link listFromTable}: anything, from a file.
 */
export interface DefinitionRows {
  /** The row of the definition that shows under `layer`.`name` (alive, visible), or undefined. */
  shownAs(layer: Layer, name: string): unknown;
  /** The row of the definition `def`, or undefined. */
  rowOf(def: DefId): unknown;
  /**
   * The latest row of every definition, its head read and the rest on demand; undefined when a
   * line cannot be read (then nothing is answered from the table: a list must not leave one out).
   */
  every(): readonly RowHead[] | undefined;
  /**
   * The latest rows that may bind a reference to `def`: every row whose bindings name it, and
   * perhaps more (a file finds them by the identity's bytes; {@link refsFromTable} checks each);
   * undefined when the table cannot say.
   */
  referencing(def: DefId): readonly unknown[] | undefined;
  /** The status kept with the table ({@link statusOfState}; parsed, not checked), or undefined. */
  status(): unknown;
}

/** The rows of `table`, looked up in memory. */
export function rowsOf(table: DefinitionTable): DefinitionRows {
  const byDef = new Map<DefId, DefinitionRow>();
  const shown = new Map<string, DefinitionRow>();
  for (const r of table.rows) {
    byDef.set(r[0], r);
    if (r[3] && r[4]) shown.set(`${r[1]}.${r[2]}`, r);
  }
  return {
    shownAs: (layer, name) => shown.get(`${layer}.${name}`),
    rowOf: (def) => byDef.get(def),
    every: () => [...byDef.values()].map((r) => ({ head: r.slice(0, 5), row: () => r })),
    referencing: (def) => [...byDef.values()].filter((r) => Object.values(r[7]).includes(def)),
    status: () => table.status,
  };
}
