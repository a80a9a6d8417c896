/**
 * A table's rows read and checked (store/definition-table.ts): what its reads (table-reads.ts)
 * select and show. Internal: a row from a file is anything until these say what it is.
 */
import { compareDefinitions } from "../graph/materialize.js";
import { isLayer, type Layer } from "../lang/layers.js";
import type { DefId } from "../ops/ids.js";
import type { DefinitionRow, DefinitionRows, RowHead } from "./definition-table.js";
import { matchesPattern, type Selector } from "./selector.js";

/** A row a view shows, with what its head said. */
export interface Picked extends Head {
  readonly row: DefinitionRow;
}

/** The whole row of `h`, when it reads and says what its head said; else undefined. */
export function pick(h: Head): Picked | undefined {
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

/** True for a pattern (`slot.*`, `*.draft`): a selector of every definition that shows and matches. */
export function isPattern(sel: Selector): sel is Selector & { readonly kind: "name" } {
  return sel.kind === "name" && (sel.wildcard || sel.layer === undefined);
}

/** The definitions that show under what a name or a pattern matches, in listing order. */
export function matching(heads: readonly Head[], sel: Selector & { readonly kind: "name" }): Head[] {
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
export function selectedRow(rows: DefinitionRows, sel: Selector): DefinitionRow | undefined {
  if (sel.kind === "def") return rowIn(rows, sel.def);
  const r = rows.shownAs(sel.layer!, sel.pattern);
  return isRow(r) && r[1] === sel.layer && r[2] === sel.pattern && r[3] && r[4] ? r : undefined;
}

/** What a row's head says, checked. */
export interface Head {
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  readonly alive: boolean;
  readonly visible: boolean;
  readonly at: RowHead;
}

/** Every row's head, checked; undefined when one does not read. */
export function headsOf(rows: DefinitionRows): Head[] | undefined {
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
export function nameIn(rows: DefinitionRows): (id: DefId) => string | undefined {
  return (id) => rowIn(rows, id)?.[2];
}

/** The row of the definition `id`, checked; undefined when the table holds none that reads. */
export function rowIn(rows: DefinitionRows, id: DefId): DefinitionRow | undefined {
  const r = rows.rowOf(id);
  return isRow(r) && r[0] === id ? r : undefined;
}

/** True when `r` has a row's shape (what a file holds is anything until this says so). */
export function isRow(r: unknown): r is DefinitionRow {
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
