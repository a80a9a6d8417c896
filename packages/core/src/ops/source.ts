import { isLayer, type Layer } from "../lang/layers.js";

/** A definition's text cut at its name: what an op carries (`head` only when it is not `<layer> `). */
export interface SourceParts {
  readonly layer: Layer;
  readonly name: string;
  /** Everything after the name, byte for byte. */
  readonly body: string;
  /** Everything before the name (leading comments, the keyword, the space), when it is not `<layer> `. */
  readonly head?: string;
}

/** Layers whose definitions read `<layer> <name> = <expression>` when the body gives no clause. */
const EQUALS_LAYERS: ReadonlySet<Layer> = new Set<Layer>(["type", "tile", "fn", "test", "theme", "motion"]);

/** A body that already starts as the text after a name does: whitespace or a parameter list. */
function isVerbatim(body: string): boolean {
  if (body.length === 0) return true;
  const c = body.charCodeAt(0);
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 40; // space, tab, LF, CR, (
}

/** `on=…`, `cap=…`, `in=…`: a body that starts with a definition clause, not an expression. */
const CLAUSE_RE = /^[a-z][a-zA-Z0-9-]*\s*=(?!=)/;

/**
 * A definition's full source from its parts. `body` is either what follows the name byte for byte
 * (as {@link decomposeSource} returns it: starting with whitespace or `(`), or one of the forms a
 * CLI user types after `kumiki add <layer> <name>` (ai-edit.md §9.2.2), which get the separator
 * the layer needs:
 *
 * - `slot`: `Map(TodoId, Todo) = {}` → `slot todos : Map(TodoId, Todo) = {}` (`: T` → `slot x : T`);
 * - `type`, `tile`, `fn`, `test`, `theme`, `motion`: `{id: TodoId}` → `type Todo = {id: TodoId}`,
 *   `= …` → `type Todo = …`, and a clause (`in=Props = …`) → `tile Row in=Props = …`;
 * - `reducer`, `effect`, `app`: `on=ui.click(Add) do= …` → `reducer add on=ui.click(Add) do= …`.
 *
 * With `head` the parts are joined verbatim: `head + name + body`.
 */
export function composeSource(parts: SourceParts): string {
  const { layer, name, body, head } = parts;
  if (head !== undefined) return head + name + body;
  return `${layer} ${name}${normalizeBody(layer, body)}`;
}

/** The text after the name that {@link composeSource} produces for `body`. */
export function normalizeBody(layer: Layer, body: string): string {
  if (isVerbatim(body)) return body;
  if (layer === "slot") return body.startsWith(":") ? ` ${body}` : ` : ${body}`;
  if (body.startsWith("=")) return ` ${body}`;
  if (EQUALS_LAYERS.has(layer) && !CLAUSE_RE.test(body)) return ` = ${body}`;
  return ` ${body}`;
}

/**
 * Cuts a definition's source at its name: the inverse of {@link composeSource}, byte for byte
 * (`composeSource(decomposeSource(s)) === s`). Leading comment lines and blank lines before the
 * keyword go into `head`. Undefined when `source` does not start (after comments) with a layer
 * keyword and a name; whether the rest parses is the parser's business.
 */
export function decomposeSource(source: string): SourceParts | undefined {
  const at = nameAt(source);
  if (at === undefined) return undefined;
  const name = source.slice(at.start, at.end);
  const body = source.slice(at.end);
  const head = source.slice(0, at.start);
  if (head === `${at.layer} ` && isVerbatim(body)) return { layer: at.layer, name, body };
  return { layer: at.layer, name, body, head };
}

/**
 * The name a definition's source was written with (the identifier after its layer keyword), read
 * without parsing it; undefined where {@link decomposeSource} is. What rendering compares with the
 * definition's current name to know, without a parse, that its text shows as stored.
 */
export function sourceName(source: string): string | undefined {
  const at = nameAt(source);
  return at === undefined ? undefined : source.slice(at.start, at.end);
}

/** Where a source's name is: after blank and comment lines, the layer keyword and a space. */
function nameAt(source: string): { layer: Layer; start: number; end: number } | undefined {
  let i = 0;
  // Skip blank lines and comment lines before the keyword.
  for (;;) {
    while (i < source.length && isSpace(source.charCodeAt(i))) i++;
    if (source.charCodeAt(i) !== 35) break; // #
    const nl = source.indexOf("\n", i);
    if (nl === -1) return undefined;
    i = nl + 1;
  }
  const kwStart = i;
  while (i < source.length && isIdentChar(source.charCodeAt(i))) i++;
  const keyword = source.slice(kwStart, i);
  if (!isLayer(keyword)) return undefined;
  const afterKeyword = i;
  while (i < source.length && isSpace(source.charCodeAt(i))) i++;
  if (i === afterKeyword) return undefined;
  const start = i;
  if (!isLetter(source.charCodeAt(i))) return undefined;
  while (i < source.length && isIdentChar(source.charCodeAt(i))) i++;
  return { layer: keyword, start, end: i };
}

/**
 * Line `line` of a definition's text as `body:N` counts it: the line of the layer keyword is 1, so
 * the comment and blank lines kept above a definition are not counted (at least 1). The one
 * position convention of refusals, diagnostics (`location` and `span.line`), `refs` and `edit`
 * (docs/errors.md, Positions); columns are the text's own, 1-based.
 */
export function bodyLineOf(text: string, line: number): number {
  const head = decomposeSource(text)?.head;
  const keyword = head === undefined ? 1 : head.split("\n").length;
  return Math.max(1, line - keyword + 1);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isIdentChar(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57) || c === 95 || c === 45; // _ -
}
