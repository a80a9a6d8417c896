import type { Definition } from "./ast.js";
import { ByteWriter } from "./byte-writer.js";
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
 * `tokens[i]` replaces `sites[i]`; the sites must be those `referenceSites(def)` returned. The
 * form is written as UTF-8 (that is what is hashed) and returned decoded.
 */
export function canonicalForm(
  def: Definition,
  sites: readonly ReferenceSite[],
  tokens: readonly string[],
): string {
  const out = new ByteWriter();
  const keys = writeCanonicalStructure(out, def, sites, tokens);
  out.byte(NEWLINE);
  writeLines(out, keys);
  return decoder.decode(out.view());
}

/**
 * Writes the structure part of the canonical form to `out` as UTF-8 (in which reference `i` is
 * written `@i`) and returns the distinct reference keys in order of first use. `keys[i]` stands
 * for `sites[i]` (a target's identity, say): sites with one key share one `@i`. The canonical form
 * is the structure, a newline, and one token per returned key, newline-separated. A caller that
 * hashes a cycle writes the structure once and appends different tokens for the same keys (see
 * hash.ts).
 */
export function writeCanonicalStructure(
  out: ByteWriter,
  def: Definition,
  sites: readonly ReferenceSite[],
  keys: readonly string[],
): readonly string[] {
  const bySiteOffset = new Map<number, string>();
  const shorthand = new Set<number>();
  for (let i = 0; i < sites.length; i++) {
    const site = sites[i]!;
    const key = keys[i];
    if (key !== undefined) bySiteOffset.set(site.span.offset, key);
    if (site.role === "shorthand") shorthand.add(site.span.offset);
  }
  const w = new Writer(out, { tokens: bySiteOffset, shorthand });
  w.node(def as unknown as JsonObject, true);
  return w.used;
}

/** Writes `lines` separated by newlines (the token part of a canonical form). */
export function writeLines(out: ByteWriter, lines: readonly string[]): void {
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) out.byte(NEWLINE);
    out.text(lines[i]!);
  }
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

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

/**
 * A node shape: its own keys in enumeration order, the keys the form writes (sorted), and what is
 * written before each value (`,` and the short name and `=`).
 */
interface Shape {
  readonly all: readonly string[];
  readonly root: boolean;
  readonly keys: readonly string[];
  readonly labels: readonly string[];
}

/** The shapes of one node kind, and what the form opens a node of that kind with. */
interface KindShapes {
  readonly head: string;
  readonly shapes: Shape[];
}

/**
 * Shapes seen so far, by kind: most nodes of a kind share one or two shapes, so a node's sorted
 * keys are found by comparing its keys (interned strings, compared by reference) with the shapes'
 * rather than by listing and sorting them.
 */
const kinds = new Map<unknown, KindShapes>();

function kindShapes(kind: unknown): KindShapes {
  let k = kinds.get(kind);
  if (k === undefined) {
    k = { head: `${typeof kind === "string" ? short(kind) : ""}(`, shapes: [] };
    kinds.set(kind, k);
  }
  return k;
}

function shapeOf(node: JsonObject, isRoot: boolean, kind: KindShapes): Shape {
  next: for (const shape of kind.shapes) {
    if (shape.root !== isRoot) continue;
    const all = shape.all;
    let i = 0;
    // for-in walks the same own keys as Object.keys (AST nodes are plain objects) without
    // allocating the array.
    for (const key in node) if (all[i++] !== key) continue next;
    if (i === all.length) return shape;
  }
  const all = Object.keys(node);
  const keys = all.filter((k) => k !== "kind" && !isSpanKey(k) && !(isRoot && k === "name")).sort();
  const labels = keys.map((k, i) => `${i > 0 ? "," : ""}${short(k)}=`);
  const shape = { all, root: isRoot, keys, labels };
  kind.shapes.push(shape);
  return shape;
}

// Character codes of what the form is made of.
const APOSTROPHE = 0x27; // '
const RPAREN = 0x29; // )
const COMMA = 0x2c; // ,
const COLON = 0x3a; // :
const AT = 0x40; // @
const UPPER_F = 0x46; // F
const UPPER_T = 0x54; // T
const LBRACKET = 0x5b; // [
const RBRACKET = 0x5d; // ]
const LOWER_F = 0x66; // f
const LOWER_N = 0x6e; // n
const LOWER_T = 0x74; // t
const TILDE = 0x7e; // ~

class Writer {
  readonly used: string[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly out: ByteWriter,
    private readonly sites: Sites,
  ) {}

  node(json: Json, isRoot = false): void {
    const out = this.out;
    if (json === null) {
      out.byte(LOWER_N);
      return;
    }
    switch (typeof json) {
      case "string":
        out.jsonString(json);
        return;
      case "number":
        out.text(String(json));
        return;
      case "boolean":
        out.byte(json ? LOWER_T : LOWER_F);
        return;
    }
    if (Array.isArray(json)) {
      out.byte(LBRACKET);
      for (let i = 0; i < json.length; i++) {
        if (i > 0) out.byte(COMMA);
        this.node(json[i] as Json);
      }
      out.byte(RBRACKET);
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
      out.byte(AT);
      out.text(String(i));
      return;
    }
    // The commonest leaves get short forms of their own; each starts with a character no other
    // form starts with, so the form stays unambiguous.
    switch (node.kind) {
      case "Ident":
        out.byte(APOSTROPHE);
        out.text(node.name as string);
        return;
      case "String":
        out.jsonString(node.value as string);
        return;
      case "Number":
        out.byte(TILDE);
        out.text(node.raw as string);
        return;
      case "Bool":
        out.byte(node.value ? UPPER_T : UPPER_F);
        return;
      case "DollarRef":
        out.text(node.name as string);
        return;
      case "Field":
        this.node(node.key as Json);
        if (node.value !== undefined) {
          out.byte(COLON);
          this.node(node.value as Json);
        }
        return;
    }
    const kind = kindShapes(node.kind);
    out.text(kind.head);
    const { keys, labels } = shapeOf(node, isRoot, kind);
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      out.text(labels[k]!);
      const value = node[key] as Json;
      if (key === "fields" && Array.isArray(value)) this.node(this.sortedFields(value));
      else this.node(value);
    }
    out.byte(RPAREN);
  }

  /**
   * Fields by key. Stable: two fields with one key keep their source order (a duplicate key is the
   * checker's business, and must not make two different bodies hash alike).
   */
  private sortedFields(fields: Json[]): Json[] {
    if (fields.length < 2) return fields;
    const keys = fields.map((f) => fieldKey(f, this.sites));
    let sorted = true;
    for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! <= keys[i]!;
    if (sorted) return fields;
    const order = keys.map((_, i) => i);
    order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
    return order.map((i) => fields[i]!);
  }
}
