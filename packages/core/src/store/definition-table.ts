/**
 * Every definition of a graph as a table that a process of its own answers `view <layer.name>`
 * from without reading or folding the ops (issue 42): what a writer keeps beside its check, under
 * the state of the ops it was made from (the CLI keeps it in `.kumiki/cache/`). Texts are kept as
 * stored, with their bindings and every definition's name, and the one definition shown is
 * rendered from them: rendering all 5,031 of a 5,000-definition program took 64 ms in a fresh
 * process, a walk that keeps them as stored a few.
 */
import { qualified, renderStored } from "../graph/materialize.js";
import type { DefinitionView } from "../graph/reader.js";
import type { Layer } from "../lang/layers.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { RefBindings } from "../ops/op.js";
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
  const { graph } = store.read();
  const rows: DefinitionRow[] = [];
  for (const s of graph.definitions())
    rows.push([
      s.def,
      s.layer,
      s.name,
      s.alive,
      graph.isVisible(s.def),
      s.body.version,
      s.body.text,
      s.body.refs,
    ]);
  return { v: 1, rows };
}

/**
 * `view` of `selector` as the store answers it, from `table` (read from a file: anything): for
 * one name (`layer.name`) that shows. Undefined for anything else — a pattern, a `def_…`, a name
 * nothing shows under (the store's refusal says why and suggests), a table not of this shape —
 * and then the store is asked.
 */
export function viewFromTable(table: unknown, selector: string): ViewResult | undefined {
  const sel = parseSelector(selector);
  if ("error" in sel || sel.kind !== "name" || sel.wildcard || sel.layer === undefined) return undefined;
  const rows = (table as Partial<DefinitionTable> | null)?.rows;
  if ((table as Partial<DefinitionTable> | null)?.v !== 1 || !Array.isArray(rows)) return undefined;
  const row = rows.find(
    (r) => Array.isArray(r) && r[1] === sel.layer && r[2] === sel.pattern && r[3] && r[4],
  );
  if (!isRow(row)) return undefined;
  let names: Map<string, string> | undefined;
  const nameOf = (id: DefId): string | undefined => {
    if (names === undefined) {
      names = new Map();
      for (const r of rows) if (Array.isArray(r) && typeof r[2] === "string") names.set(r[0], r[2]);
    }
    return names.get(id);
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
