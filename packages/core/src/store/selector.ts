/**
 * Selectors (`slot.todos`, `slot.*`, `def_…`) and qualified names: the one parser of each.
 */
import { isLayer, type Layer } from "../lang/layers.js";
import { type DefId, isDefId } from "../ops/ids.js";
import { quoted } from "./result.js";

export { matchesPattern } from "../ops/glob.js";

/** What a selector names: one definition by identity, or definitions by layer and name pattern. */
export type Selector =
  | { readonly kind: "def"; readonly def: DefId }
  | {
      readonly kind: "name";
      /** undefined: any layer (`*.name`). */
      readonly layer: Layer | undefined;
      readonly pattern: string;
      /** True when the pattern has a `*`. */
      readonly wildcard: boolean;
    };

const PATTERN_RE = /^[a-zA-Z*][a-zA-Z0-9_*-]*$/;

/**
 * Parses a selector: `slot.todos`, `slot.*`, `tile.Todo*`, `*.draft`, `*` (every definition), or a definition identity
 * (`def_…`, how a definition hidden by a name conflict is reached). `*` matches any run of
 * characters, and is the only special character: no regex, no character classes.
 */
export function parseSelector(input: string): Selector | { readonly error: string } {
  const s = input.trim();
  if (isDefId(s)) return { kind: "def", def: s };
  // `*` alone: every definition (as `*.*`).
  if (s === "*") return { kind: "name", layer: undefined, pattern: "*", wildcard: true };
  const dot = s.indexOf(".");
  if (dot <= 0) {
    return {
      error: `selector ${quoted(input)} is not layer.name (slot.todos), a pattern (slot.*, tile.Todo*, *.draft, *) or a definition id (def_…)`,
    };
  }
  const layer = s.slice(0, dot);
  const pattern = s.slice(dot + 1);
  if (layer !== "*" && !isLayer(layer)) {
    return { error: `unknown layer ${quoted(layer)} in selector ${quoted(input)}` };
  }
  if (!PATTERN_RE.test(pattern)) {
    return {
      error: `name ${quoted(pattern)} in selector ${quoted(input)} is not a name or a pattern of letters, digits, _, - and *`,
    };
  }
  return { kind: "name", layer: layer === "*" ? undefined : layer, pattern, wildcard: pattern.includes("*") };
}

/** What a qualified name names: a definition identity, or a layer and a name. */
export type QualifiedName =
  | { readonly kind: "def"; readonly def: DefId }
  | { readonly kind: "name"; readonly layer: Layer; readonly name: string };

/**
 * Parses `layer.name` (`slot.todos`) or a definition identity (`def_…`): the one parser of a
 * qualified name (the store's lookups and the CLI's argument check use it). The name is what
 * follows the first dot, unchecked: whether a definition has it is the lookup's answer.
 */
export function parseQualifiedName(input: string): QualifiedName | { readonly error: string } {
  const q = input.trim();
  if (isDefId(q)) return { kind: "def", def: q };
  const dot = q.indexOf(".");
  const layer = q.slice(0, dot);
  if (dot <= 0 || !isLayer(layer)) {
    return { error: `${quoted(input)} is not layer.name (e.g. slot.todos) or a definition id (def_…)` };
  }
  return { kind: "name", layer, name: q.slice(dot + 1) };
}
