import type { Definition } from "../lang/ast.js";
import { blake3HexOfText } from "../lang/blake3.js";
import { type ContentHash, computeHashes, type HashNode } from "../lang/hash.js";
import { LAYERS, type Layer } from "../lang/layers.js";
import type { ParseError } from "../lang/parse-error.js";
import { parseDefinition } from "../lang/parser.js";
import { type ReferenceSite, referenceSites } from "../lang/references.js";
import { renderDefinition } from "../lang/render.js";
import type { DefId } from "../ops/ids.js";
import type { RefBindings, RefKey } from "../ops/op.js";
import { sourceName } from "../ops/source.js";
import type { DefinitionState, Graph } from "./graph.js";

/** A definition's text, parsed: the AST and its reference sites, or why it does not parse. */
export type Parsed =
  | { readonly ok: true; readonly def: Definition; readonly sites: readonly ReferenceSite[] }
  | { readonly ok: false; readonly error: ParseError };

/**
 * Parsed texts kept: two generations of at most {@link PARSE_GENERATION} texts each. A text read is
 * kept in the young one; when that fills, it becomes the old one and the oldest goes — every text
 * read in the last generation stays, in O(1) per read. (An LRU over one Map, refreshed by delete and
 * set and trimmed through `keys().next()`, walked past its deleted entries at every trim: a rename
 * of a type 16,000 slots reference spent 0.7 s there.) At most 20,000 texts, as that LRU held: a
 * parsed definition of apps/05 is about 4 KB, so 84 MB at most in a long-running process.
 */
const PARSE_GENERATION = 10_000;
let youngParses = new Map<string, Parsed>();
let oldParses = new Map<string, Parsed>();

function keepParsed(text: string, parsed: Parsed): void {
  youngParses.set(text, parsed);
  if (youngParses.size >= PARSE_GENERATION) {
    oldParses = youngParses;
    youngParses = new Map();
  }
}

/**
 * Parses a definition's text, with a cache keyed by the text (texts are immutable, and the same
 * text is parsed again for every read, render and hash of it).
 */
export function parseText(text: string): Parsed {
  const young = youngParses.get(text);
  if (young !== undefined) return young;
  const old = oldParses.get(text);
  if (old !== undefined) {
    keepParsed(text, old);
    return old;
  }
  const r = parseDefinition(text);
  const parsed: Parsed = r.ok
    ? { ok: true, def: r.value, sites: referenceSites(r.value) }
    : { ok: false, error: r.error };
  keepParsed(text, parsed);
  return parsed;
}

/** The identity a reference site is bound to: its first candidate layer with a binding for its name. */
export function siteTarget(site: ReferenceSite, refs: RefBindings): DefId | null {
  for (const key of keysOf(site)) {
    const t = refs[key];
    if (t !== undefined) return t;
  }
  return null;
}

/**
 * A site's binding keys (`layer:name` per candidate layer), made once per site: sites are cached
 * with their parsed text, and rendering asks for them on every read (building the strings anew
 * each time was most of export's garbage at 10,000 definitions).
 */
const siteKeys = new WeakMap<ReferenceSite, readonly RefKey[]>();
function keysOf(site: ReferenceSite): readonly RefKey[] {
  let keys = siteKeys.get(site);
  if (keys === undefined) {
    keys = site.layers.map((layer) => `${layer}:${site.name}` as RefKey);
    siteKeys.set(site, keys);
  }
  return keys;
}

/** The binding key a site uses: the layer it is bound in, or its first candidate when unbound. */
export function siteKey(site: ReferenceSite, refs: RefBindings): RefKey {
  for (const layer of site.layers) {
    const k = `${layer}:${site.name}` as RefKey;
    if (refs[k] !== undefined) return k;
  }
  return `${site.layers[0] ?? "slot"}:${site.name}` as RefKey;
}

/** One reference site of a definition as shown: where, what it names now, and to what it is bound. */
export interface ShownSite {
  readonly site: ReferenceSite;
  readonly target: DefId | null;
  /** The name the rendered text shows at the site. */
  readonly shown: string;
  /** The binding key in the stored text (`slot:draft`), as the ops record it. */
  readonly key: RefKey;
}

/** What {@link renderStored} reads of a definition: its name, and its text and bindings as stored. */
export interface StoredText {
  readonly name: string;
  readonly body: { readonly text: string; readonly refs: RefBindings };
}

/**
 * A definition's text as a person sees it, its own and its targets' current names given by
 * `nameOf` (undefined: a target the graph does not hold shows as written). What `view` shows: from
 * a graph ({@link Materializer.render}) or from a table of every definition's name (a process that
 * did not fold the ops, store/definition-table.ts).
 */
export function renderStored(s: StoredText, nameOf: (id: DefId) => string | undefined): string {
  if (showsAsStored(s, nameOf)) return s.body.text;
  const p = parseText(s.body.text);
  if (!p.ok) return s.body.text;
  // Most texts show as stored: nothing is allocated for them (export renders every definition).
  let refs: (string | undefined)[] | undefined;
  p.sites.forEach((site, i) => {
    const target = siteTarget(site, s.body.refs);
    if (target === null) return;
    const name = nameOf(target);
    if (name === undefined || name === site.name) return;
    refs ??= p.sites.map(() => undefined);
    refs[i] = name;
  });
  if (s.name === p.def.name.name && refs === undefined) return s.body.text;
  return renderDefinition(s.body.text, p.def, p.sites, {
    self: s.name,
    refs: refs ?? p.sites.map(() => undefined),
  });
}

/** The definitions a text as stored (its bindings with it) references through its sites that `alive` says live. */
export function dependenciesOf(s: Pick<StoredText, "body">, alive: (id: DefId) => boolean): DefId[] {
  const p = parseText(s.body.text);
  if (!p.ok) return [];
  const out = new Set<DefId>();
  for (const site of p.sites) {
    const t = siteTarget(site, s.body.refs);
    if (t !== null && alive(t)) out.add(t);
  }
  return [...out];
}

/** The 1-based lines of a text as stored (its bindings with it) where it references `target`. */
export function linesReferencing(s: Pick<StoredText, "body">, target: DefId): number[] {
  const p = parseText(s.body.text);
  if (!p.ok) return [];
  // One numbering everywhere an agent reads or writes a line (check's body:N, edit's body:N):
  // line 1 is the line of the layer keyword; comment lines above it are not counted.
  const first = p.def.span.line;
  const lines = new Set<number>();
  for (const site of p.sites)
    if (siteTarget(site, s.body.refs) === target) lines.add(site.span.line - first + 1);
  return [...lines].sort((a, b) => a - b);
}

/**
 * True when `s`'s text shows exactly as stored, decided without parsing it (export renders every
 * definition, and parsing them all was most of its cost and garbage: 236 of 795 ms of `kumiki
 * export` at 5,000 definitions): its own name is the one the text was written with, and every
 * reference key still names its target by the key's name. Then no site shows another name,
 * whichever sites the text has, so {@link renderStored} would return the text as it is.
 */
function showsAsStored(s: StoredText, nameOf: (id: DefId) => string | undefined): boolean {
  const refs = s.body.refs;
  for (const key in refs) {
    const name = nameOf(refs[key as RefKey]!);
    // A key is `layer:name` with one colon: it names its target still iff it ends in `:name`.
    if (name === undefined) continue;
    const at = key.length - name.length - 1;
    if (at < 0 || key.charCodeAt(at) !== 58 || !key.endsWith(name)) return false;
  }
  return sourceName(s.body.text) === s.name;
}

/**
 * Reads the graph as text: renders definitions with their current names (ai-edit.md §9.5.3),
 * resolves sites, finds referrers with their lines, and keeps content hashes up to date.
 */
export class Materializer {
  constructor(private readonly graph: Graph) {}

  /** The sites of a definition with their targets and shown names; undefined when its text does not parse. */
  sites(s: DefinitionState): ShownSite[] | undefined {
    const p = parseText(s.body.text);
    if (!p.ok) return undefined;
    return p.sites.map((site) => {
      const target = siteTarget(site, s.body.refs);
      const shown = target === null ? site.name : (this.graph.definition(target)?.name ?? site.name);
      return { site, target, shown, key: siteKey(site, s.body.refs) };
    });
  }

  /** A definition's text as a person sees it: its own and its targets' current names. */
  render(s: DefinitionState): string {
    return renderStored(s, this.nameOf);
  }

  private readonly nameOf = (id: DefId): string | undefined => this.graph.definition(id)?.name;

  /** The 1-based lines of `s`'s rendered text where it references `target`. */
  linesReferencing(s: DefinitionState, target: DefId): number[] {
    return linesReferencing(s, target);
  }

  /** The live definitions `s` references, through its sites. */
  dependencies(s: DefinitionState): DefId[] {
    return dependenciesOf(s, (t) => this.graph.definition(t)?.alive === true);
  }

  /**
   * Content hashes of live definitions, computing what is not cached: the requested definitions'
   * dependency closure, less what is known. (The graph forgets a hash whenever the definition or
   * anything it depends on changes, so what is cached is current.)
   */
  hashes(ids: Iterable<DefId>): Map<DefId, ContentHash> {
    const g = this.graph;
    const nodes: HashNode[] = [];
    const raw = new Map<DefId, ContentHash>();
    const seen = new Set<DefId>();
    const stack = [...ids];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      if (g.cachedHash(id) !== undefined) continue;
      const s = g.definition(id);
      if (s === undefined || !s.alive) continue;
      const p = parseText(s.body.text);
      if (!p.ok) {
        // A merge can leave a text that does not parse (a rebased edit); it still has an identity
        // and a hash, over its bytes, so everything that references it hashes deterministically.
        raw.set(id, `h:${blake3HexOfText(`unparsed:${s.layer}\n${s.body.text}`)}` as ContentHash);
        continue;
      }
      const targets = p.sites.map((site) => {
        const t = siteTarget(site, s.body.refs);
        return t !== null && g.definition(t)?.alive === true ? t : null;
      });
      nodes.push({ id, def: p.def, sites: p.sites, targets });
      for (const t of targets) if (t !== null) stack.push(t);
    }
    g.storeHashes(raw);
    if (nodes.length > 0) g.storeHashes(computeHashes(nodes, (id) => g.cachedHash(id as DefId)));
    const out = new Map<DefId, ContentHash>();
    for (const id of ids) {
      const h = g.cachedHash(id);
      if (h !== undefined) out.set(id, h);
    }
    return out;
  }
}

/** Orders definitions as listings show them: by layer (language order), then by name, then identity. */
export function compareDefinitions(
  a: Pick<DefinitionState, "layer" | "name" | "def">,
  b: Pick<DefinitionState, "layer" | "name" | "def">,
): number {
  const la = LAYERS.indexOf(a.layer);
  const lb = LAYERS.indexOf(b.layer);
  if (la !== lb) return la - lb;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.def < b.def ? -1 : a.def > b.def ? 1 : 0;
}

/** `layer.name`. */
export function qualified(layer: Layer, name: string): string {
  return `${layer}.${name}`;
}
