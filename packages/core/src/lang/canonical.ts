import type { Definition } from "./ast.js";
import type { ReferenceSite } from "./references.js";

/**
 * The canonical form of a definition: what its content hash is taken over (ai-edit.md §9.5.1).
 * Whitespace and comments are gone (they are not in the AST), spans are dropped, order-insensitive
 * `fields` collections are sorted by key, the definition's own name is left out, and every
 * reference site is replaced by the token the caller gives for it (the target's content hash, or
 * a position inside a strongly connected component). Locals keep their names.
 *
 * The form is compact: a node is `Kind(key=value,…)` with keys in sorted order (common kinds and
 * keys abbreviated), an identifier that
 * is not a reference is `'name`, strings, numbers, booleans, `$1` and fields have short forms of
 * their own, and a reference is `@i`, the position of its token among the
 * definition's distinct tokens in order of first use; those tokens follow the structure, one per
 * line. So each dependency's hash is written once however often it is referenced, and where it is
 * referenced stays part of what is hashed (`f(a, b)` and `f(b, a)` differ).
 *
 * `tokens[i]` replaces `sites[i]`; the sites must be those `referenceSites(def)` returned.
 */
export function canonicalForm(
  def: Definition,
  sites: readonly ReferenceSite[],
  tokens: readonly string[],
): string {
  const { structure, keys } = canonicalStructure(def, sites, tokens);
  return `${structure}\n${keys.join("\n")}`;
}

/**
 * The canonical form in two parts: the structure, in which reference `i` is written `@i`, and the
 * distinct reference keys in order of first use. `keys[i]` stands for `sites[i]` (a target's
 * identity, say): sites with one key share one `@i`. A caller that hashes a cycle computes the
 * structure once and appends different tokens for the same keys (see hash.ts).
 */
export function canonicalStructure(
  def: Definition,
  sites: readonly ReferenceSite[],
  keys: readonly string[],
): { readonly structure: string; readonly keys: readonly string[] } {
  const bySiteOffset = new Map<number, string>();
  const shorthand = new Set<number>();
  sites.forEach((site, i) => {
    const key = keys[i];
    if (key !== undefined) bySiteOffset.set(site.span.offset, key);
    if (site.role === "shorthand") shorthand.add(site.span.offset);
  });
  const w = new Writer({ tokens: bySiteOffset, shorthand });
  w.node(def as unknown as JsonObject, true);
  return { structure: w.out, keys: w.used };
}

/**
 * Short codes for the commonest node kinds and property names. Every code starts with `!`, which
 * no kind or property name contains (outside strings, which are quoted), so the form stays
 * unambiguous; names not listed are written in full. The table is part of the hash: changing it
 * changes every hash, so it only ever grows at the end.
 */
const SHORT: ReadonlyMap<string, string> = new Map(
  [
    "args",
    "body",
    "callee",
    "fields",
    "layer",
    "name",
    "object",
    "pattern",
    "property",
    "props",
    "target",
    "value",
    "Call",
    "Member",
    "Props",
    "TileCall",
    "TypeRef",
    "VariantPattern",
    "MatchArm",
    "Binary",
    "Record",
    "Index",
    "AssignStmt",
    "right",
    "left",
    "op",
    "variant",
    "returnType",
    "params",
    "Param",
  ].map((name, i) => [name, `!${i.toString(36)}`]),
);

function short(name: string): string {
  return SHORT.get(name) ?? name;
}

interface Sites {
  /** Reference token by the offset of the site's name. */
  readonly tokens: ReadonlyMap<number, string>;
  /** Offsets of shorthand fields' keys (`{todos}`), which are a field name and a reference at once. */
  readonly shorthand: ReadonlySet<number>;
}

type Json = string | number | boolean | null | Json[] | JsonObject;
interface JsonObject {
  [key: string]: Json;
}
interface SpanLike {
  offset: number;
  end: number;
}

function isSpanKey(key: string): boolean {
  return key === "span" || key.endsWith("Span");
}

function spanOf(node: JsonObject): SpanLike | undefined {
  const s = node.span as unknown;
  return s !== null && typeof s === "object" && typeof (s as SpanLike).offset === "number"
    ? (s as SpanLike)
    : undefined;
}

/** The reference token standing for `node`, when `node` is a reference site. */
function siteToken(node: JsonObject, sites: Sites): string | undefined {
  const span = spanOf(node);
  if (span === undefined) return undefined;
  if (node.kind === "Ident") return sites.tokens.get(span.offset);
  // A reference held in a string literal (a motion name such as {motion: "Spin"}) is reported
  // with the span of the string's contents, one past the opening quote.
  if (typeof node.value === "string") return sites.tokens.get(span.offset + 1);
  return undefined;
}

/**
 * `{todos}` means `{todos=todos}`: written out that way so that it hashes like the `{todos=items}`
 * it renders as once the slot is renamed.
 */
function expandShorthand(node: JsonObject, sites: Sites): JsonObject {
  if (node.kind !== "Field" || node.value !== undefined) return node;
  const key = node.key;
  if (key === null || typeof key !== "object" || Array.isArray(key)) return node;
  const span = spanOf(key);
  if (span === undefined || !sites.shorthand.has(span.offset)) return node;
  return { ...node, key: { kind: "Ident", name: key.name as Json }, value: key };
}

/** A field's sort key: its name, or the reference token when the key itself is a reference (a
 * test's `{slots: {count: 0}}`), so renaming the target cannot reorder the fields. */
function fieldKey(f: Json, sites: Sites): string {
  if (f !== null && typeof f === "object" && !Array.isArray(f)) {
    const key = f.key;
    if (key !== null && typeof key === "object" && !Array.isArray(key) && typeof key.name === "string") {
      const span = spanOf(key);
      const token =
        span !== undefined && sites.shorthand.has(span.offset) ? undefined : siteToken(key, sites);
      return token === undefined ? `~${key.name}` : `@${token}`;
    }
  }
  return "";
}

/** Sorted, span-free key lists, cached per shape: most nodes of a kind share one shape. */
const keyOrder = new Map<string, readonly string[]>();

function keysOf(node: JsonObject, isRoot: boolean): readonly string[] {
  const all = Object.keys(node);
  const shape = isRoot ? `^${all.join(",")}` : all.join(",");
  let keys = keyOrder.get(shape);
  if (keys === undefined) {
    keys = all.filter((k) => k !== "kind" && !isSpanKey(k) && !(isRoot && k === "name")).sort();
    keyOrder.set(shape, keys);
  }
  return keys;
}

class Writer {
  out = "";
  readonly used: string[] = [];
  private readonly index = new Map<string, number>();

  constructor(private readonly sites: Sites) {}

  node(json: Json, isRoot = false): void {
    if (json === null) {
      this.out += "n";
      return;
    }
    switch (typeof json) {
      case "string":
        this.out += JSON.stringify(json);
        return;
      case "number":
        this.out += String(json);
        return;
      case "boolean":
        this.out += json ? "t" : "f";
        return;
    }
    if (Array.isArray(json)) {
      this.out += "[";
      for (let i = 0; i < json.length; i++) {
        if (i > 0) this.out += ",";
        this.node(json[i] as Json);
      }
      this.out += "]";
      return;
    }
    const node = expandShorthand(json, this.sites);
    const token = siteToken(node, this.sites);
    if (token !== undefined) {
      let i = this.index.get(token);
      if (i === undefined) {
        i = this.used.length;
        this.used.push(token);
        this.index.set(token, i);
      }
      this.out += `@${i}`;
      return;
    }
    // The commonest leaves get short forms of their own; each starts with a character no other
    // form starts with, so the form stays unambiguous.
    switch (node.kind) {
      case "Ident":
        this.out += `'${node.name as string}`;
        return;
      case "String":
        this.out += JSON.stringify(node.value);
        return;
      case "Number":
        this.out += `~${node.raw as string}`;
        return;
      case "Bool":
        this.out += node.value ? "T" : "F";
        return;
      case "DollarRef":
        this.out += node.name as string;
        return;
      case "Field":
        this.node(node.key as Json);
        if (node.value !== undefined) {
          this.out += ":";
          this.node(node.value as Json);
        }
        return;
    }
    this.out += `${typeof node.kind === "string" ? short(node.kind) : ""}(`;
    const keys = keysOf(node, isRoot);
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      if (k > 0) this.out += ",";
      this.out += `${short(key)}=`;
      const value = node[key] as Json;
      if (key === "fields" && Array.isArray(value)) {
        // Stable sort: two fields with one key keep their source order (a duplicate key is the
        // checker's business, and must not make two different bodies hash alike).
        const sorted = value
          .map((f, idx) => ({ f, idx, k: fieldKey(f, this.sites) }))
          .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.idx - b.idx))
          .map((e) => e.f);
        this.node(sorted);
      } else {
        this.node(value);
      }
    }
    this.out += ")";
  }
}
