/**
 * `GraphReader` (what `Store.read()` gives): each definition as `view` shows it — text with the
 * current names, reference sites, content hash — computed on demand and cached.
 */
import type { ContentHash } from "../lang/hash.js";
import type { Layer } from "../lang/layers.js";
import type { ReferenceSite } from "../lang/references.js";
import { isStandardReference } from "../lang/stdlib.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { RefBindings, RefKey } from "../ops/op.js";
import { bodyLineOf } from "../ops/source.js";
import type { DefinitionState, Graph } from "./graph.js";
import { compareDefinitions, Materializer, parseText, qualified, type ShownSite } from "./materialize.js";

/** A definition as a reader sees it. */
export interface DefinitionView {
  /** Its identity (`def_…`): what ops, list entries, referrers and histories call `def`. */
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  /** `slot.todos`. */
  readonly qname: string;
  readonly alive: boolean;
  /** True when it shows under its name (live, and not hidden by a name conflict). */
  readonly visible: boolean;
  /** The text with current names: what `view` shows. */
  readonly text: string;
  /** The text as stored (names as its author wrote them). */
  readonly source: string;
  /** Reference key → identity, as stored. */
  readonly refs: RefBindings;
  /** The op that produced the current text. */
  readonly version: OpId;
}

/** A reference site that points nowhere live. */
export interface BrokenSite {
  readonly name: string;
  readonly layers: readonly Layer[];
  readonly key: RefKey;
  /** `unresolved`: bound to nothing; `dangling`: bound to a definition that is removed or absent. */
  readonly kind: "unresolved" | "dangling";
  readonly target: DefId | null;
  /** The line as `body:N` counts it (the layer keyword's line is 1). */
  readonly line: number;
  readonly column: number;
}

/**
 * A read-only view of one graph: definitions with their rendered text, name lookup, referrers and
 * broken references. The store's reads go through it, and a {@link WriteValidator} gets one for the
 * graph before a write and one for the graph after it.
 */
export class GraphReader {
  readonly materializer: Materializer;

  constructor(readonly graph: Graph) {
    this.materializer = new Materializer(graph);
  }

  private toView(s: DefinitionState): DefinitionView {
    return {
      def: s.def,
      layer: s.layer,
      name: s.name,
      qname: qualified(s.layer, s.name),
      alive: s.alive,
      visible: this.graph.isVisible(s.def),
      text: this.materializer.render(s),
      source: s.body.text,
      refs: s.body.refs,
      version: s.body.version,
    };
  }

  /** A definition by identity (live, removed, or hidden by a name conflict). */
  get(id: DefId): DefinitionView | undefined {
    const s = this.graph.definition(id);
    return s === undefined ? undefined : this.toView(s);
  }

  /** The definition that shows under `layer.name`. */
  lookup(layer: Layer, name: string): DefinitionView | undefined {
    const id = this.graph.lookup(layer, name);
    return id === undefined ? undefined : this.get(id);
  }

  /** Every live definition (hidden ones included), in listing order. */
  definitions(): DefinitionView[] {
    return [...this.graph.definitions()]
      .filter((s) => s.alive)
      .sort(compareDefinitions)
      .map((s) => this.toView(s));
  }

  /** The whole graph as one program text: every live definition, in listing order. */
  program(): string {
    return this.definitions()
      .map((d) => (d.text.endsWith("\n") ? d.text : `${d.text}\n`))
      .join("");
  }

  /** The live definitions that reference `id`, with the lines of their text that do. */
  referrers(id: DefId): { readonly view: DefinitionView; readonly lines: readonly number[] }[] {
    return this.graph
      .referrersOf(id)
      .map((r) => this.graph.definition(r)!)
      .sort(compareDefinitions)
      .map((s) => ({ view: this.toView(s), lines: this.materializer.linesReferencing(s, id) }))
      .filter((r) => r.lines.length > 0);
  }

  /** The sites of a definition with their targets; undefined when its text does not parse. */
  sites(id: DefId): ShownSite[] | undefined {
    const s = this.graph.definition(id);
    return s === undefined ? undefined : this.materializer.sites(s);
  }

  /**
   * The reference sites of a definition that point nowhere live: bound to nothing (except a
   * capitalized name in a value, which is a union variant when nothing of that name exists), or to
   * a definition that is removed or absent.
   */
  brokenSites(id: DefId): BrokenSite[] {
    const s = this.graph.definition(id);
    if (s === undefined) return [];
    const p = parseText(s.body.text);
    if (!p.ok) return [];
    const out: BrokenSite[] = [];
    for (const shown of this.materializer.sites(s) ?? []) {
      const site: ReferenceSite = shown.site;
      const base = {
        name: site.name,
        layers: site.layers,
        key: shown.key,
        line: bodyLineOf(s.body.text, site.span.line),
        column: site.span.column,
      };
      if (shown.target === null) {
        if (!isStandardReference(site)) out.push({ ...base, kind: "unresolved", target: null });
      } else if (this.graph.definition(shown.target)?.alive !== true) {
        out.push({ ...base, kind: "dangling", target: shown.target });
      }
    }
    return out;
  }

  /** The content hash of a live definition. */
  hash(id: DefId): ContentHash | undefined {
    return this.materializer.hashes([id]).get(id);
  }

  /** A person-readable name: `slot.todos`, with the identity when it does not show under that name. */
  label(id: DefId): string {
    return this.graph.label(id);
  }
}
