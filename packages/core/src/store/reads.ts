/**
 * The store's reads, as functions of the graph and its reader: definitions as text (`view`), the
 * list, referrers, content hashes and histories. The Store takes in other writers' ops, then asks
 * these.
 */
import type { DefinitionState, Graph } from "../graph/graph.js";
import { compareDefinitions, qualified } from "../graph/materialize.js";
import type { DefinitionView, GraphReader } from "../graph/reader.js";
import type { ContentHash } from "../lang/hash.js";
import { isLayer, type Layer } from "../lang/layers.js";
import { commentBlockStart } from "../lang/split.js";
import type { DefId } from "../ops/ids.js";
import { decomposeSource } from "../ops/source.js";
import { historyOf } from "./history.js";
import { clip, ok, quoted, reject, type StoreResult } from "./result.js";
import { matchesPattern, parseSelector } from "./selector.js";
import type { DefinitionHistory, ListEntry, Referrer, RefsResult, ViewResult } from "./store-types.js";
import { resolveTarget } from "./target.js";

/**
 * Definitions as text (`kumiki view`): one (`slot.todos`, or `def_…` for a definition hidden by a
 * name conflict or removed), or a pattern (`slot.*`, `tile.Todo*`); with `withDeps`, everything
 * they reference, transitively, after them.
 */
export function viewOf(
  graph: Graph,
  reader: GraphReader,
  selector: string,
  withDeps: boolean,
): StoreResult<ViewResult> {
  const selected = selectIds(graph, selector);
  if (!selected.ok) return selected;
  const ids = [...selected.value];
  if (withDeps) {
    const start = ids.map((id) => graph.definition(id)!);
    const deps = dependencyClosure(start, (s) =>
      reader.materializer.dependencies(s).map((d) => graph.definition(d)!),
    );
    ids.push(...deps!.map((s) => s.def));
  }
  return ok(viewResultOf(ids.map((id) => reader.get(id)!)));
}

/**
 * What `start` references, transitively (`view --with-deps`), in listing order after them: each
 * once, none of `start`. From a graph or a table's rows (table-reads.ts): `depsOf` gives what
 * one references directly, undefined when it cannot say (then so does this).
 */
export function dependencyClosure<T extends Pick<DefinitionState, "layer" | "name" | "def">>(
  start: readonly T[],
  depsOf: (t: T) => readonly T[] | undefined,
): T[] | undefined {
  const seen = new Set(start.map((t) => t.def));
  const deps: T[] = [];
  const stack = [...start];
  while (stack.length > 0) {
    const direct = depsOf(stack.pop()!);
    if (direct === undefined) return undefined;
    for (const d of direct) {
      if (seen.has(d.def)) continue;
      seen.add(d.def);
      deps.push(d);
      stack.push(d);
    }
  }
  return deps.sort(compareDefinitions);
}

/** `definitions` as `view` shows them: each text from its doc comment, one after another, and where each starts. */
export function viewResultOf(definitions: DefinitionView[]): ViewResult {
  const shown = definitions.map((d) => {
    const t = withoutLeadingTrivia(d.text);
    return t.endsWith("\n") ? t : `${t}\n`;
  });
  const lines: number[] = [];
  let line = 1;
  for (const t of shown) {
    lines.push(line);
    for (let i = t.indexOf("\n"); i !== -1; i = t.indexOf("\n", i + 1)) line++;
  }
  return { definitions, text: shown.join(""), lines };
}

/** The definitions that show under their names (`kumiki list`), in one layer or all. */
export function listOf(graph: Graph, layer?: string): StoreResult<ListEntry[]> {
  if (layer !== undefined && !isLayer(layer)) {
    return reject(
      "invalid-layer",
      `unknown layer ${quoted(layer)}: one of type, slot, effect, reducer, tile, fn, app, test, theme, motion`,
    );
  }
  const shadowed = graph.shadowed();
  const out = [...graph.definitions()]
    .filter((s) => (layer === undefined || s.layer === layer) && s.alive && !shadowed.has(s.def))
    .sort(compareDefinitions)
    .map((s) => ({ layer: s.layer, name: s.name, qname: qualified(s.layer, s.name), def: s.def }));
  return ok(out);
}

/** The live definitions that reference a definition, with the lines that do (`kumiki view --refs`). */
export function refsOf(graph: Graph, reader: GraphReader, qname: string): StoreResult<RefsResult> {
  const src: ReferrerSource = { label: (id) => graph.label(id), referrers: (id) => reader.referrers(id) };
  const sel = parseSelector(qname);
  if (!("error" in sel) && sel.kind === "name" && (sel.wildcard || sel.layer === undefined)) {
    const matched = selectIds(graph, qname);
    if (!matched.ok) return matched;
    if (matched.value.length === 0) return reject("not-found", `no definition matches ${quoted(qname)}`);
    return ok(patternRefsOf(src, qname, matched.value));
  }
  const t = resolveTarget(graph, qname, { live: false });
  if (!t.ok) return t;
  return ok(targetRefsOf(src, t.value.def));
}

/**
 * What `refs` reads of a graph, or of a table of every definition (table-reads.ts): a
 * definition's label, and the live definitions that reference it, in listing order, with the
 * lines of their text that do (none left out: a referrer without such a line is not one).
 */
export interface ReferrerSource {
  label(id: DefId): string;
  referrers(id: DefId): readonly {
    readonly view: Pick<DefinitionView, "qname" | "def" | "layer" | "visible">;
    readonly lines: readonly number[];
  }[];
}

/** `refs` of one definition, from `src`. */
export function targetRefsOf(src: ReferrerSource, id: DefId): RefsResult {
  const referrers = src.referrers(id).map(referrerOf);
  return { target: src.label(id), referrers, byLayer: byLayerOf(referrers) };
}

/** A referrer as `refs` answers it: labelled by name, or by name and identity when hidden. */
function referrerOf(r: ReturnType<ReferrerSource["referrers"]>[number]): Referrer {
  return {
    qname: r.view.visible ? r.view.qname : `${r.view.qname} (${r.view.def})`,
    def: r.view.def,
    layer: r.view.layer,
    lines: r.lines,
  };
}

/** How many referrers per layer. */
function byLayerOf(referrers: readonly Referrer[]): Partial<Record<Layer, number>> {
  const byLayer: Partial<Record<Layer, number>> = {};
  for (const r of referrers) byLayer[r.layer] = (byLayer[r.layer] ?? 0) + 1;
  return byLayer;
}

/**
 * The referrers of every definition a pattern matched (`refs slot.*`; `matched`, at least one):
 * each referrer once, with the lines that reference any of them and which of them it references
 * (`refersTo`); `matched` lists what the pattern matched.
 */
export function patternRefsOf(src: ReferrerSource, pattern: string, matched: readonly DefId[]): RefsResult {
  const byDef = new Map<DefId, { referrer: Referrer; lines: Set<number>; refersTo: string[] }>();
  for (const id of matched) {
    for (const r of src.referrers(id)) {
      let x = byDef.get(r.view.def);
      if (x === undefined) {
        x = { referrer: referrerOf(r), lines: new Set(), refersTo: [] };
        byDef.set(r.view.def, x);
      }
      for (const l of r.lines) x.lines.add(l);
      x.refersTo.push(src.label(id));
    }
  }
  const referrers = [...byDef.values()]
    .map((x) => ({ ...x.referrer, lines: [...x.lines].sort((a, b) => a - b), refersTo: x.refersTo }))
    .sort((a, b) => (a.qname < b.qname ? -1 : a.qname > b.qname ? 1 : 0));
  return {
    target: pattern,
    referrers,
    byLayer: byLayerOf(referrers),
    matched: matched.map((id) => src.label(id)),
  };
}

/** A live definition's content hash (`kumiki view --hash`). */
export function hashOf(graph: Graph, reader: GraphReader, qname: string): StoreResult<ContentHash> {
  const t = resolveTarget(graph, qname, { live: true });
  if (!t.ok) return t;
  const h = reader.hash(t.value.def);
  if (h === undefined) return reject("not-found", `${qname} has no content hash: it is not live`);
  return ok(h);
}

/**
 * The history of the definitions that have had a name (`kumiki view --history`): the one that
 * shows under it now and every one that ever had it (renamed away, removed, or a same-name add
 * that lost), each across all its renames; or of one definition by identity.
 */
export function historyByName(graph: Graph, qname: string): StoreResult<DefinitionHistory[]> {
  const sel = parseSelector(qname);
  if ("error" in sel) return reject("invalid-selector", sel.error);
  let ids: DefId[];
  if (sel.kind === "def") ids = graph.definition(sel.def) === undefined ? [] : [sel.def];
  else {
    if (sel.wildcard || sel.layer === undefined)
      return reject(
        "invalid-selector",
        `history takes one layer.name or a definition id, not ${quoted(qname)}`,
      );
    const now = graph.lookup(sel.layer, sel.pattern);
    ids = [
      ...new Set([...(now === undefined ? [] : [now]), ...graph.everNamed(sel.layer, sel.pattern)]),
    ].filter((id) => graph.definition(id) !== undefined || graph.opsOf(id).length > 0);
  }
  if (ids.length === 0) return reject("not-found", `no definition has ever been named ${clip(qname)}`);
  return ok(ids.flatMap((id) => historyOf(graph, id)));
}

/** The ids a selector names: live, shown definitions for names and patterns; any for an identity. */
function selectIds(graph: Graph, selector: string): StoreResult<DefId[]> {
  const sel = parseSelector(selector);
  if ("error" in sel) return reject("invalid-selector", sel.error);
  if (sel.kind === "def") {
    if (graph.definition(sel.def) === undefined) return reject("not-found", `no definition ${sel.def}`);
    return ok([sel.def]);
  }
  if (!sel.wildcard && sel.layer !== undefined) {
    const t = resolveTarget(graph, selector, { live: true });
    return t.ok ? ok([t.value.def]) : t;
  }
  const ids = [...graph.definitions()]
    .filter(
      (s) =>
        (sel.layer === undefined || s.layer === sel.layer) &&
        matchesPattern(sel.pattern, s.name) &&
        graph.isVisible(s.def),
    )
    .sort(compareDefinitions)
    .map((s) => s.def);
  return ok(ids);
}

/**
 * A definition's text as `view` shows it: from the comment lines directly above its keyword line
 * (its doc comment), without the blank lines and section banners an import kept above those (they
 * stay in the store and in `export`; anchors in what is shown still match).
 */
function withoutLeadingTrivia(text: string): string {
  const head = decomposeSource(text)?.head;
  return head === undefined ? text : text.slice(commentBlockStart(text, head.lastIndexOf("\n") + 1));
}
