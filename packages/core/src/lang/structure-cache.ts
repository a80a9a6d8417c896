import type { Definition } from "./ast.js";
import { ByteWriter } from "./byte-writer.js";
import { writeCanonicalStructure } from "./canonical.js";
import type { ReferenceSite } from "./references.js";

/** A definition's canonical structure as UTF-8, and its distinct reference keys in order of first use. */
export interface Structure {
  readonly bytes: Uint8Array;
  readonly keys: readonly string[];
}

interface Entry extends Structure {
  readonly sites: readonly ReferenceSite[];
  readonly targets: readonly (string | null)[];
}

/**
 * Structures by definition. The store parses a text once and keeps its AST and sites (see
 * store/materialize.ts), and after an edit rehashes the edited definition's dependents, whose
 * structures have not changed (their targets' identities are the same; only the hashes written
 * after the structure are new), so they are written once and reused. Weak: an entry lives as long
 * as its AST.
 */
const cache = new WeakMap<Definition, Entry>();
const scratch = new ByteWriter();

/**
 * The canonical structure of `def` (see {@link writeCanonicalStructure}), each site keyed by its
 * target's identity (or, unresolved, by what it names), so the structure does not depend on what
 * its targets' hashes are. `sites` must be `referenceSites(def)`; the result is reused while `def`,
 * `sites` (the same array) and the targets are the same.
 */
export function canonicalStructure(
  def: Definition,
  sites: readonly ReferenceSite[],
  targets: readonly (string | null)[],
): Structure {
  const hit = cache.get(def);
  if (hit !== undefined && hit.sites === sites && sameTargets(hit.targets, targets, sites.length)) return hit;
  const keys = new Array<string>(sites.length);
  const copied = new Array<string | null>(sites.length);
  for (let i = 0; i < sites.length; i++) {
    const t = targets[i] ?? null;
    const site = sites[i]!;
    copied[i] = t;
    keys[i] = t === null ? `?${site.layers.join("|")}:${site.name}` : `=${t}`;
  }
  scratch.reset();
  const used = writeCanonicalStructure(scratch, def, sites, keys);
  const entry: Entry = { bytes: scratch.view().slice(), keys: used, sites, targets: copied };
  cache.set(def, entry);
  return entry;
}

function sameTargets(
  cached: readonly (string | null)[],
  targets: readonly (string | null)[],
  count: number,
): boolean {
  for (let i = 0; i < count; i++) if (cached[i] !== (targets[i] ?? null)) return false;
  return true;
}
