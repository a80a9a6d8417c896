/**
 * Every definition of a graph as a table that a process of its own answers `view`, `list` and
 * `refs` from without reading or folding the ops (issue 42), kept for the state of the ops it was
 * made from (the CLI keeps it in `.kumiki/cache/definitions.jsonl`: a view that folded keeps it whole, a
 * write appends the rows it changed). Texts are kept as stored, with their bindings and every
 * definition's name, and the one definition shown is rendered from them: rendering all 5,031 of a
 * 5,000-definition program took 64 ms in a fresh process, a walk that keeps them as stored a few.
 */
import type { DefinitionState, Graph } from "../graph/graph.js";
import {
  compareDefinitions,
  dependenciesOf,
  linesReferencing,
  qualified,
  renderStored,
} from "../graph/materialize.js";
import type { DefinitionView } from "../graph/reader.js";
import { isLayer, type Layer } from "../lang/layers.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { RefBindings } from "../ops/op.js";
import type { StoredOp } from "./op-log.js";
import {
  dependencyClosure,
  patternRefsOf,
  type ReferrerSource,
  targetRefsOf,
  viewResultOf,
} from "./reads.js";
import { matchesPattern, parseSelector, type Selector } from "./selector.js";
import type { Store } from "./store.js";
import type { ListEntry, RefsResult, ViewResult } from "./store-types.js";

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
    if (s !== undefined) rows.push(rowOfState(graph, s));
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
  };
}

/**
 * `view` of `selector` as the store answers it, from a table's `rows`: a name (`layer.name`) that
 * shows, a pattern (`slot.*`, `*.draft`: every definition that shows and matches, in the store's
 * order; none is an empty answer, as the store's) or an identity (`def_…`, live or not); with
 * `withDeps`, what they reference, transitively, after them. Undefined for anything else — a name
 * nothing shows under or an identity the table does not hold (the store's refusal says why and
 * suggests), a row not of this shape (a file edited by hand) — and then the store is asked.
 */
export function viewFromTable(
  rows: DefinitionRows,
  selector: string,
  options: { readonly withDeps?: boolean } = {},
): ViewResult | undefined {
  const sel = parseSelector(selector);
  if ("error" in sel) return undefined;
  if (!isPattern(sel) && !options.withDeps) {
    // One row, found by its bytes, and the names of what it references: no list of every row.
    const row = selectedRow(rows, sel);
    return row === undefined ? undefined : viewResultOf([viewOfRow(row, nameIn(rows))]);
  }
  const heads = headsOf(rows);
  if (heads === undefined) return undefined;
  const byDef = new Map(heads.map((h) => [h.def, h]));
  const start = sel.kind === "def" ? [byDef.get(sel.def)] : matching(heads, sel);
  // A name (not a pattern) that nothing shows under: the store's refusal.
  if (start.length === 0 && !isPattern(sel)) return undefined;
  const picked: Picked[] = [];
  for (const h of start) {
    const p = h === undefined ? undefined : pick(h);
    if (p === undefined) return undefined;
    picked.push(p);
  }
  if (options.withDeps) {
    const deps = dependencyClosure(picked, (p) => {
      const direct: Picked[] = [];
      for (const d of dependenciesOf(
        { body: { text: p.row[6], refs: p.row[7] } },
        (t) => byDef.get(t)?.alive === true,
      )) {
        const q = pick(byDef.get(d)!);
        if (q === undefined) return undefined;
        direct.push(q);
      }
      return direct;
    });
    if (deps === undefined) return undefined;
    picked.push(...deps);
  }
  const nameOf = (id: DefId) => byDef.get(id)?.name;
  return viewResultOf(picked.map((p) => viewOfRow(p.row, nameOf)));
}

/** A row a view shows, with what its head said. */
interface Picked extends Head {
  readonly row: DefinitionRow;
}

/** The whole row of `h`, when it reads and says what its head said; else undefined. */
function pick(h: Head): Picked | undefined {
  const r = h.at.row();
  if (
    !isRow(r) ||
    r[0] !== h.def ||
    r[1] !== h.layer ||
    r[2] !== h.name ||
    r[3] !== h.alive ||
    r[4] !== h.visible
  )
    return undefined;
  return { ...h, row: r };
}

/**
 * `list` (of `layer`, or of all) as the store answers it, from a table's `rows`: every definition
 * that shows, in the store's order. Undefined when the table cannot say (a line or a row that does
 * not read) or the layer is not one (the store's refusal names the layers).
 */
export function listFromTable(rows: DefinitionRows, layer?: string): ListEntry[] | undefined {
  if (layer !== undefined && !isLayer(layer)) return undefined;
  const heads = headsOf(rows);
  if (heads === undefined) return undefined;
  return heads
    .filter((h) => h.alive && h.visible && (layer === undefined || h.layer === layer))
    .sort(compareDefinitions)
    .map((h) => ({ layer: h.layer, name: h.name, qname: qualified(h.layer, h.name), def: h.def }));
}

/**
 * `refs` of `selector` (`view --refs`) as the store answers it, from a table's `rows`: of a name
 * that shows, a `def_…` the table holds, or a pattern that matches what shows. Undefined for
 * anything else (the store's refusal says why) and when a row does not read.
 */
export function refsFromTable(rows: DefinitionRows, selector: string): RefsResult | undefined {
  const sel = parseSelector(selector);
  if ("error" in sel) return undefined;
  let targets: DefId[];
  if (isPattern(sel)) {
    const heads = headsOf(rows);
    if (heads === undefined) return undefined;
    targets = matching(heads, sel).map((h) => h.def);
    // A pattern that matches nothing: the store's refusal.
    if (targets.length === 0) return undefined;
  } else {
    const row = selectedRow(rows, sel);
    if (row === undefined) return undefined;
    targets = [row[0]];
  }
  const src = referrerSource(rows, targets);
  if (src === undefined) return undefined;
  return isPattern(sel) ? patternRefsOf(src, selector, targets) : targetRefsOf(src, targets[0]!);
}

/** What `refs` reads of the rows, the referrers of each of `targets` read up front; undefined when a row does not read. */
function referrerSource(rows: DefinitionRows, targets: readonly DefId[]): ReferrerSource | undefined {
  const byTarget = new Map<DefId, ReturnType<ReferrerSource["referrers"]>>();
  for (const id of targets) {
    const candidates = rows.referencing(id);
    if (candidates === undefined) return undefined;
    const referrers: DefinitionRow[] = [];
    for (const r of candidates) {
      if (!isRow(r)) return undefined;
      if (r[3] && Object.values(r[7]).includes(id)) referrers.push(r);
    }
    byTarget.set(
      id,
      referrers
        .map(([def, layer, name, , visible, , text, refs]) => ({ def, layer, name, visible, text, refs }))
        .sort(compareDefinitions)
        .map((r) => ({
          view: { def: r.def, layer: r.layer, qname: qualified(r.layer, r.name), visible: r.visible },
          lines: linesReferencing({ body: { text: r.text, refs: r.refs } }, id),
        }))
        .filter((r) => r.lines.length > 0),
    );
  }
  const labels = new Map<DefId, string>();
  return {
    // A pattern's referrer names each target it references: each label is read once.
    label: (id) => {
      let label = labels.get(id);
      if (label === undefined) {
        const r = rows.rowOf(id);
        const q = isRow(r) && r[0] === id ? qualified(r[1], r[2]) : undefined;
        label =
          !isRow(r) || q === undefined ? id : !r[3] ? `${q} (removed, ${id})` : r[4] ? q : `${q} (${id})`;
        labels.set(id, label);
      }
      return label;
    },
    referrers: (id) => byTarget.get(id) ?? [],
  };
}

/** True for a pattern (`slot.*`, `*.draft`): a selector of every definition that shows and matches. */
function isPattern(sel: Selector): sel is Selector & { readonly kind: "name" } {
  return sel.kind === "name" && (sel.wildcard || sel.layer === undefined);
}

/** The definitions that show under what a name or a pattern matches, in listing order. */
function matching(heads: readonly Head[], sel: Selector & { readonly kind: "name" }): Head[] {
  return heads
    .filter(
      (h) =>
        h.alive &&
        h.visible &&
        (sel.layer === undefined || h.layer === sel.layer) &&
        matchesPattern(sel.pattern, h.name),
    )
    .sort(compareDefinitions);
}

/** The row a `def_…` or a name that shows selects, found by its bytes; undefined when none reads. */
function selectedRow(rows: DefinitionRows, sel: Selector): DefinitionRow | undefined {
  if (sel.kind === "def") {
    const r = rows.rowOf(sel.def);
    return isRow(r) && r[0] === sel.def ? r : undefined;
  }
  const r = rows.shownAs(sel.layer!, sel.pattern);
  return isRow(r) && r[1] === sel.layer && r[2] === sel.pattern && r[3] && r[4] ? r : undefined;
}

/** What a row's head says, checked. */
interface Head {
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  readonly alive: boolean;
  readonly visible: boolean;
  readonly at: RowHead;
}

/** Every row's head, checked; undefined when one does not read. */
function headsOf(rows: DefinitionRows): Head[] | undefined {
  const every = rows.every();
  if (every === undefined) return undefined;
  const out: Head[] = [];
  for (const at of every) {
    const h = at.head;
    if (!Array.isArray(h) || h.length !== 5) return undefined;
    const [def, layer, name, alive, visible] = h as unknown[];
    if (
      typeof def !== "string" ||
      typeof layer !== "string" ||
      !isLayer(layer) ||
      typeof name !== "string" ||
      typeof alive !== "boolean" ||
      typeof visible !== "boolean"
    )
      return undefined;
    out.push({ def: def as DefId, layer, name, alive, visible, at });
  }
  return out;
}

/** A definition's name by its row, for rendering what references it (undefined: not in the table). */
function nameIn(rows: DefinitionRows): (id: DefId) => string | undefined {
  return (id) => {
    const r = rows.rowOf(id);
    return isRow(r) && r[0] === id ? r[2] : undefined;
  };
}

/** A row as the store's reader shows its definition, its text rendered with the names `nameOf` gives. */
function viewOfRow(row: DefinitionRow, nameOf: (id: DefId) => string | undefined): DefinitionView {
  const [def, layer, name, alive, visible, version, source, refs] = row;
  return {
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
}

function isRow(r: unknown): r is DefinitionRow {
  if (!Array.isArray(r) || r.length !== 8) return false;
  const [def, layer, name, alive, visible, version, text, refs] = r as unknown[];
  return (
    typeof def === "string" &&
    typeof layer === "string" &&
    isLayer(layer) &&
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
