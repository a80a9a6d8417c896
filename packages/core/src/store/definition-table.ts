/**
 * Every definition of a graph as a table that a process of its own answers `view <layer.name>`
 * from without reading or folding the ops (issue 42), kept for the state of the ops it was made
 * from (the CLI keeps it in `.kumiki/cache/definitions.jsonl`: a view that folded keeps it whole, a
 * write appends the rows it changed). Texts are kept as stored, with their bindings and every
 * definition's name, and the one definition shown is rendered from them: rendering all 5,031 of a
 * 5,000-definition program took 64 ms in a fresh process, a walk that keeps them as stored a few.
 */
import type { DefinitionState, Graph } from "../graph/graph.js";
import { qualified, renderStored } from "../graph/materialize.js";
import type { DefinitionView } from "../graph/reader.js";
import type { Layer } from "../lang/layers.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { RefBindings } from "../ops/op.js";
import type { StoredOp } from "./op-log.js";
import { viewResultOf } from "./reads.js";
import { parseSelector } from "./selector.js";
import type { Store } from "./store.js";
import type { ViewResult } from "./store-types.js";

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
}

/** The table of every definition `store` holds now (other writers' ops taken in first, as a read does). */
export function definitionTable(store: Store): DefinitionTable {
  return { v: 1, rows: [...definitionRows(store)] };
}

/**
 * The rows of {@link definitionTable}, made one at a time as they are taken: what a writer of the
 * table to a file iterates, so that no row outlives its line (5,000 rows held to the end were
 * copied by every garbage collection meanwhile).
 */
export function* definitionRows(store: Store): IterableIterator<DefinitionRow> {
  const { graph } = store.read();
  for (const s of graph.definitions()) yield rowOfState(graph, s);
}

function rowOfState(graph: Graph, s: DefinitionState): DefinitionRow {
  return [s.def, s.layer, s.name, s.alive, graph.isVisible(s.def), s.body.version, s.body.text, s.body.refs];
}

/**
 * The rows the table of the graph before `written` (ops this store just wrote) must take, each in
 * place of its definition's row, to be the table after them; undefined when that is not known
 * without the whole table. Known for adds, replaces and edits: each changes its own definition's
 * row, and through a reference to a removed definition (whose remove the conflict policy may take
 * back) the rows of what that definition references, then or before. A rename, a remove or a
 * link changes what shows under a name or binds, and a control op what applies: undefined.
 */
export function changedRows(store: Store, written: readonly StoredOp[]): DefinitionRow[] | undefined {
  const defs = new Set<DefId>();
  for (const op of written) {
    const o = op as { readonly op?: unknown; readonly def?: unknown };
    if ((o.op !== "add" && o.op !== "replace" && o.op !== "edit") || typeof o.def !== "string")
      return undefined;
    defs.add(o.def as DefId);
  }
  const { graph } = store.read();
  for (const d of [...defs])
    for (const o of graph.definition(d)?.ops ?? []) {
      const refs = (o as { readonly refs?: RefBindings }).refs;
      if (refs !== undefined) for (const t of Object.values(refs)) defs.add(t);
    }
  const rows: DefinitionRow[] = [];
  for (const d of defs) {
    const s = graph.definition(d);
    if (s !== undefined) rows.push(rowOfState(graph, s));
  }
  return rows;
}

/**
 * A table's rows as a reader looks them up: from a table in memory ({@link rowsOf}), or from a
 * file read a row at a time (storage-automerge's `DefinitionTableFile`). What they answer is
 * checked by {@link viewFromTable}: anything, from a file.
 */
export interface DefinitionRows {
  /** The row of the definition that shows under `layer`.`name` (alive, visible), or undefined. */
  shownAs(layer: Layer, name: string): unknown;
  /** The row of the definition `def`, or undefined. */
  rowOf(def: DefId): unknown;
}

/** The rows of `table`, looked up in memory. */
export function rowsOf(table: DefinitionTable): DefinitionRows {
  const byDef = new Map<DefId, DefinitionRow>();
  const shown = new Map<string, DefinitionRow>();
  for (const r of table.rows) {
    byDef.set(r[0], r);
    if (r[3] && r[4]) shown.set(`${r[1]}.${r[2]}`, r);
  }
  return { shownAs: (layer, name) => shown.get(`${layer}.${name}`), rowOf: (def) => byDef.get(def) };
}

/**
 * `view` of `selector` as the store answers it, from a table's `rows`: for one name (`layer.name`)
 * that shows. Undefined for anything else — a pattern, a `def_…`, a name nothing shows under (the
 * store's refusal says why and suggests), a row not of this shape (a file edited by hand) — and
 * then the store is asked.
 */
export function viewFromTable(rows: DefinitionRows, selector: string): ViewResult | undefined {
  const sel = parseSelector(selector);
  if ("error" in sel || sel.kind !== "name" || sel.wildcard || sel.layer === undefined) return undefined;
  const row = rows.shownAs(sel.layer, sel.pattern);
  if (!isRow(row) || row[1] !== sel.layer || row[2] !== sel.pattern || !row[3] || !row[4]) return undefined;
  const nameOf = (id: DefId): string | undefined => {
    const r = rows.rowOf(id);
    return isRow(r) && r[0] === id ? r[2] : undefined;
  };
  const [def, layer, name, alive, visible, version, source, refs] = row;
  const view: DefinitionView = {
    def,
    layer,
    name,
    qname: qualified(layer, name),
    alive,
    visible,
    text: renderStored({ name, body: { text: source, refs } }, nameOf),
    source,
    refs,
    version,
  };
  return viewResultOf([view]);
}

function isRow(r: unknown): r is DefinitionRow {
  if (!Array.isArray(r) || r.length !== 8) return false;
  const [def, layer, name, alive, visible, version, text, refs] = r as unknown[];
  return (
    typeof def === "string" &&
    typeof layer === "string" &&
    typeof name === "string" &&
    typeof alive === "boolean" &&
    typeof visible === "boolean" &&
    typeof version === "string" &&
    typeof text === "string" &&
    typeof refs === "object" &&
    refs !== null &&
    Object.values(refs).every((v) => typeof v === "string")
  );
}
