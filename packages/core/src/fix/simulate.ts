/**
 * The check inputs a fix's bundle would give, bound as the store binds, so that a fix is judged
 * before it is written.
 */
import type { CheckInput } from "../check/graph.js";
import { parseText } from "../graph/materialize.js";
import type { GraphReader } from "../graph/reader.js";
import { isLayer, type Layer } from "../lang/layers.js";
import { applyPatch, describePatchFailure } from "../ops/patch.js";
import { composeSource, decomposeSource } from "../ops/source.js";
import type { BundleItem } from "../store/inputs.js";
import { patchAnchors } from "../store/line-patch.js";
import { ok, reject, type StoreResult } from "../store/result.js";

/** A definition as a bundle would leave it, before any check input is made of it. */
interface Pending {
  readonly id: string;
  readonly layer: Layer;
  readonly name: string;
  readonly text: string;
}

function split(qname: string): { layer: Layer; name: string } | undefined {
  const dot = qname.indexOf(".");
  const layer = qname.slice(0, dot);
  return dot > 0 && isLayer(layer) ? { layer, name: qname.slice(dot + 1) } : undefined;
}

/** What a bundle's items did so far to the graph a fix is judged on (see {@link foreseeBundle}). */
class Foresight {
  readonly pending = new Map<string, Pending>();
  /** `layer:name` → the id it reads as now (a removed duplicate's name goes to the one it hid). */
  readonly byName = new Map<string, string>();
  readonly removed = new Set<string>();
  /** Per definition, the references a `link` binds: `layer:name` → target id. */
  readonly links = new Map<string, Map<string, string>>();

  constructor(private readonly reader: GraphReader) {}

  byId(id: string): Pending | undefined {
    const p = this.pending.get(id);
    if (p !== undefined) return p;
    const view = this.reader.get(id as Parameters<GraphReader["get"]>[0]);
    return view === undefined || this.removed.has(id)
      ? undefined
      : { id, layer: view.layer, name: view.name, text: view.text };
  }

  current(layer: Layer, name: string): Pending | undefined {
    const id = this.byName.get(`${layer}:${name}`) ?? this.reader.graph.lookup(layer, name);
    return id === undefined ? undefined : this.byId(id);
  }

  /** A target as items name it: `layer.name`, or a definition id (what E0007's patch uses). */
  resolve(qname: string): Pending | undefined {
    if (qname.startsWith("def_")) return this.byId(qname);
    const q = split(qname);
    return q === undefined ? undefined : this.current(q.layer, q.name);
  }

  /** One item taken in, or why the store would refuse it. */
  take(item: BundleItem, where: string): StoreResult<void> {
    if (item.op === "add") return this.add(item, where);
    if (item.op === "remove" || item.op === "link") return this.removeOrLink(item, where);
    if (item.op !== "edit" && item.op !== "replace")
      return reject(
        "invalid-input",
        `${where}: a fix is made of add, replace, edit, link and remove items only`,
      );
    return this.rewrite(item, where);
  }

  private add(item: Extract<BundleItem, { op: "add" }>, where: string): StoreResult<void> {
    const text =
      item.source ??
      (item.layer !== undefined && item.name !== undefined && item.body !== undefined && isLayer(item.layer)
        ? composeSource({ layer: item.layer, name: item.name, body: item.body })
        : undefined);
    const parts = text === undefined ? undefined : decomposeSource(text);
    if (text === undefined || parts === undefined)
      return reject("invalid-input", `${where}: not a definition`);
    if (this.current(parts.layer, parts.name) !== undefined)
      return reject("duplicate-name", `${where}: ${parts.layer}.${parts.name} already exists`);
    const id = `pending:${parts.layer}.${parts.name}`;
    this.pending.set(id, { id, layer: parts.layer, name: parts.name, text });
    this.byName.set(`${parts.layer}:${parts.name}`, id);
    return ok(undefined);
  }

  private removeOrLink(
    item: Extract<BundleItem, { op: "remove" | "link" }>,
    where: string,
  ): StoreResult<void> {
    const target = this.resolve(item.qname);
    if (target === undefined) return reject("not-found", `${where}: no definition ${item.qname}`);
    if (item.op === "link") {
      const to = this.resolve(item.to);
      if (to === undefined) return reject("not-found", `${where}: no definition ${item.to}`);
      const bound = this.links.get(target.id) ?? new Map<string, string>();
      this.links.set(target.id, bound.set(item.ref, to.id));
      this.pending.set(target.id, target);
      return ok(undefined);
    }
    this.removed.add(target.id);
    this.pending.delete(target.id);
    const key = `${target.layer}:${target.name}`;
    const next = this.reader.graph
      .claimants(target.layer, target.name)
      .find((id) => !this.removed.has(id) && this.reader.graph.definition(id)?.alive === true);
    if (next !== undefined) this.byName.set(key, next);
    else this.byName.delete(key);
    return ok(undefined);
  }

  private rewrite(item: Extract<BundleItem, { op: "edit" | "replace" }>, where: string): StoreResult<void> {
    const target = this.resolve(item.qname);
    if (target === undefined) return reject("not-found", `${where}: no definition ${item.qname}`);
    let text: string;
    if (item.op === "replace") {
      text =
        item.source ??
        (item.body === undefined
          ? target.text
          : composeSource({ layer: target.layer, name: target.name, body: item.body }));
    } else {
      const anchors = patchAnchors(target.text, item.qname, item.patch);
      if (!anchors.ok) return reject(anchors.failure.code, `${where}: ${anchors.failure.message}`);
      const r = applyPatch(target.text, anchors.anchors);
      if (!r.ok)
        return reject(
          r.failure.code,
          `${where}: cannot edit ${item.qname}: ${describePatchFailure(r.failure)}`,
        );
      text = r.text;
    }
    this.pending.set(target.id, { ...target, text });
    return ok(undefined);
  }

  /** The check input of a definition as the bundle leaves it, its references bound as the store binds. */
  input(p: Pending): StoreResult<CheckInput> {
    const parsed = parseText(p.text);
    if (!parsed.ok)
      return reject("parse-error", `${p.layer}.${p.name} would not parse: ${parsed.error.message}`);
    if (parsed.def.layer !== p.layer || parsed.def.name.name !== p.name)
      return reject(
        "definition-mismatch",
        `the text defines ${parsed.def.layer}.${parsed.def.name.name}, not ${p.layer}.${p.name}`,
      );
    const linked = this.links.get(p.id);
    const targets = parsed.sites.map((site) => {
      for (const layer of site.layers) {
        const to = linked?.get(`${layer}:${site.name}`);
        if (to !== undefined) return to;
        if (layer === p.layer && site.name === p.name) return p.id;
        const id = this.byName.get(`${layer}:${site.name}`) ?? this.reader.graph.lookup(layer, site.name);
        if (id !== undefined && !this.removed.has(id)) return id;
      }
      return null;
    });
    return ok({ id: p.id, def: parsed.def, sites: parsed.sites, targets, source: p.text });
  }
}

/**
 * The check inputs the store's graph would hold after `items` — the definitions they add, replace
 * or edit, with every reference bound by name the way the store binds a written text (the first
 * candidate layer that has a definition of the name; the definition's own name is itself) — so the
 * regression gate can check a fix before anything is written. Definitions an item adds get the id
 * `pending:layer.name`; a definition the bundle removes maps to undefined. Only the item kinds
 * auto-patches produce (add, replace, edit, and E0007's link and remove, whose targets may be
 * definition ids) can be foreseen; anything else, or an item the store would refuse outright, is
 * refused here too.
 */
export function foreseeBundle(
  reader: GraphReader,
  items: readonly BundleItem[],
): StoreResult<Map<string, CheckInput | undefined>> {
  const f = new Foresight(reader);
  for (const [i, item] of items.entries()) {
    const taken = f.take(item, `bundle item ${i + 1} (${item.op})`);
    if (!taken.ok) return taken;
  }
  const out = new Map<string, CheckInput | undefined>();
  for (const id of f.removed) out.set(id, undefined);
  for (const p of f.pending.values()) {
    const input = f.input(p);
    if (!input.ok) return input;
    out.set(p.id, input.value);
  }
  return ok(out);
}
