import type { Definition, Program } from "./ast.js";
import { type ContentHash, computeHashes, type HashNode } from "./hash.js";
import { type Layer, qualifiedName } from "./layers.js";
import type { ParseResult } from "./parse-error.js";
import { parseProgram } from "./parser.js";
import { type ReferenceSite, referenceSites } from "./references.js";

/** A definition of a loose program with its references resolved by name, layer-aware. */
export interface ResolvedDefinition extends HashNode {
  /** The definition's identity: its qualified name (`slot.todos`) unless mapped otherwise. */
  readonly id: string;
}

/**
 * Resolves a name against the definitions there are: the first of the site's candidate layers
 * that holds a definition of that name (a slot and a tile with one name are different targets).
 */
export function resolveSite(
  site: ReferenceSite,
  has: (layer: Layer, name: string) => boolean,
): Layer | undefined {
  for (const layer of site.layers) if (has(layer, site.name)) return layer;
  return undefined;
}

/**
 * Resolves every reference of every definition of a program to the identity of its target (null
 * when there is none). A loose program has no history, so a definition's identity is its qualified
 * name unless `identity` maps it to another (a caller that knows a definition was renamed passes
 * the old name, as the store does with definition ids). When a program defines one name twice in a
 * layer, references go to the first; the duplicate is the checker's business.
 */
export function resolveProgram(
  program: Program,
  identity: (qname: string) => string = (qname) => qname,
): ResolvedDefinition[] {
  // Per layer, the identity each name resolves to: looked up per site without building a string.
  const targets = new Map<Layer, Map<string, string>>();
  for (const d of program.definitions) {
    let names = targets.get(d.layer);
    if (names === undefined) {
      names = new Map();
      targets.set(d.layer, names);
    }
    if (!names.has(d.name.name)) names.set(d.name.name, identity(qualifiedName(d.layer, d.name.name)));
  }
  const seen = new Set<string>();
  const out: ResolvedDefinition[] = [];
  for (const def of program.definitions) {
    const first = identity(qualifiedName(def.layer, def.name.name));
    let id = first;
    // A second definition of one name still needs an identity of its own to be hashed.
    for (let n = 2; seen.has(id); n++) id = `${first}#${n}`;
    seen.add(id);
    out.push(resolveDefinition(id, def, targets));
  }
  return out;
}

function resolveDefinition(
  id: string,
  def: Definition,
  targets: ReadonlyMap<Layer, ReadonlyMap<string, string>>,
): ResolvedDefinition {
  const sites = referenceSites(def);
  const has = (layer: Layer, name: string): boolean => targets.get(layer)?.has(name) === true;
  const resolved = new Array<string | null>(sites.length);
  for (let i = 0; i < sites.length; i++) {
    const site = sites[i]!;
    const layer = resolveSite(site, has);
    resolved[i] = layer === undefined ? null : targets.get(layer)!.get(site.name)!;
  }
  return { id, def, sites, targets: resolved };
}

/** Parses, resolves and hashes a whole program: content hash per identity (see {@link resolveProgram}). */
export function hashProgram(
  source: string,
  identity?: (qname: string) => string,
): ParseResult<Map<string, ContentHash>> {
  const parsed = parseProgram(source);
  if (!parsed.ok) return parsed;
  return { ok: true, value: computeHashes(resolveProgram(parsed.value, identity)) };
}
