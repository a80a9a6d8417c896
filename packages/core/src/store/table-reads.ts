/**
 * `view`, `list`, `refs` and `status` answered from a table of every definition
 * (definition-table.ts) as the store answers them, for a process that did not read or fold the
 * ops (issue 42); undefined for whatever the table does not answer, and then the store is asked.
 */

import { z } from "zod";
import { definitionLabel } from "../graph/graph.js";
import {
  compareDefinitions,
  dependenciesOf,
  linesReferencing,
  qualified,
  renderStored,
} from "../graph/materialize.js";
import type { DefinitionView } from "../graph/reader.js";
import { isLayer } from "../lang/layers.js";
import { type DefId, OpIdSchema } from "../ops/ids.js";
import { CONFLICT_POLICIES } from "../ops/op.js";
import type { DefinitionRow, DefinitionRows } from "./definition-table.js";
import {
  dependencyClosure,
  patternRefsOf,
  type ReferrerSource,
  targetRefsOf,
  viewResultOf,
} from "./reads.js";
import { parseSelector } from "./selector.js";
import type { ListEntry, RefsResult, StoreStatus, ViewResult } from "./store-types.js";
import {
  headsOf,
  isPattern,
  isRow,
  matching,
  nameIn,
  type Picked,
  pick,
  rowIn,
  selectedRow,
} from "./table-rows.js";

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
        const r = rowIn(rows, id);
        label = r === undefined ? id : definitionLabel(id, r[1], r[2], r[3], r[4]);
        labels.set(id, label);
      }
      return label;
    },
    referrers: (id) => byTarget.get(id) ?? [],
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

/**
 * `status` as the store answers it, from the status kept with a table's `rows` and the caller's
 * `author`; undefined when none is kept or it is not of this shape (a file edited by hand).
 */
export function statusFromTable(rows: DefinitionRows, author: string): StoreStatus | undefined {
  const kept = KEPT_STATUS.safeParse(rows.status());
  return kept.success ? { ...kept.data, author } : undefined;
}

const COUNT = z.number().int().nonnegative();

/** A kept {@link GraphStatus}, as {@link statusOfState} keeps it. */
const KEPT_STATUS = z
  .object({
    ops: COUNT,
    pending: COUNT,
    quarantined: z.array(z.object({ opId: z.string(), code: z.string(), message: z.string() }).strict()),
    definitions: COUNT,
    heads: z.array(OpIdSchema),
    conflicts: COUNT,
    policy: z.enum(CONFLICT_POLICIES),
    locks: COUNT,
  })
  .strict();
