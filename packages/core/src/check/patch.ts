/**
 * Auto-patches (ai-edit.md §9.6): the `body:N` edits a diagnostic carries, anchored in the text
 * `view` shows.
 */
import type { AppDef } from "../lang/ast.js";
import type { Span } from "../lang/span.js";
import { commentBlockStart } from "../lang/split.js";
import type { AutoPatch, AutoPatchOp } from "./diagnostic.js";
import type { CheckInput } from "./graph.js";

/** Line of `span` counted from the definition's first line (the `body:N` of an edit patch). */
export function bodyLine(node: CheckInput, span: Span): number {
  return Math.max(1, span.line - node.def.span.line + 1);
}

function countOf(haystack: string, needle: string): number {
  if (needle.length === 0) return 0;
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
}

/** Every `{kind: "Ident"|"Capability", name, span}` of the definition that starts on `line`. */
function namesOnLine(node: CheckInput, line: number): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (v === null || typeof v !== "object") return;
    const o = v as { kind?: unknown; name?: unknown; span?: Span };
    if (
      (o.kind === "Ident" || o.kind === "Capability") &&
      typeof o.name === "string" &&
      o.span?.line === line
    )
      out.push(o.name);
    for (const [k, x] of Object.entries(o)) if (k !== "span") walk(x);
  };
  walk(node.def);
  return out;
}

/**
 * A definition's text as the store holds it: the comment lines directly above it, the definition,
 * and the rest of its last line (the same rule splitProgram uses).
 */
function definitionText(source: string, span: Span): string {
  const start = commentBlockStart(source, source.lastIndexOf("\n", span.offset - 1) + 1);
  let end = source.indexOf("\n", span.end);
  if (end < 0) end = source.length;
  return source.slice(start, end);
}

/**
 * An edit replacing the text at `span` with `replacement`, anchored so that the anchor occurs
 * exactly once on its line. With the definition's source the anchor is widened until it is unique;
 * without it, the name itself is the anchor, and only when no other name on that line contains it.
 * Undefined when no unique anchor can be found (then there is no auto-patch rather than a wrong one).
 */
export function replaceAt(
  node: CheckInput,
  span: Span,
  written: string,
  replacement: string,
): AutoPatchOp | undefined {
  const line = bodyLine(node, span);
  const edit = (anchor: string, to: string): AutoPatchOp | undefined =>
    anchor.includes("'") || to.includes("'")
      ? undefined
      : {
          op: "edit",
          layer: node.def.layer,
          name: node.def.name.name,
          patch: { [`body:${line}`]: `replace '${anchor}' -> '${to}'` },
        };
  const source = node.source;
  if (source === undefined || source.slice(span.offset, span.end) !== written) {
    const others = namesOnLine(node, span.line).filter((n) => n.includes(written));
    if (others.length !== 1) return undefined;
    return edit(written, replacement);
  }
  const lineStart = source.lastIndexOf("\n", span.offset - 1) + 1;
  let lineEnd = source.indexOf("\n", span.offset);
  if (lineEnd < 0) lineEnd = source.length;
  const text = source.slice(lineStart, lineEnd);
  const from = span.offset - lineStart;
  const to = Math.min(span.end, lineEnd) - lineStart;
  let a = from;
  let b = to;
  // Widen until unique on its line and in the whole definition (the op model's edit matches an
  // anchor against the definition's text); an anchor never ends in whitespace, which anchor
  // matching may drop.
  const region = definitionText(source, node.def.span);
  const settled = (): boolean => {
    const anchor = text.slice(a, b);
    return countOf(text, anchor) === 1 && countOf(region, anchor) === 1 && !/\s$/.test(anchor);
  };
  while (!settled()) {
    if (b < text.length) b++;
    else if (a > 0) a--;
    else return undefined;
  }
  return edit(text.slice(a, b), text.slice(a, from) + replacement + text.slice(to, b));
}

/** The §9.6 one-name repair: `replace 'usres' -> 'users'` at the name written at `span`. */
export function renamePatch(
  node: CheckInput,
  span: Span,
  written: string,
  to: string,
): AutoPatch | undefined {
  return replaceAt(node, span, written, to);
}

/**
 * Adds `caps` to the app's `caps = [...]` in one edit (E0301): every capability the program's
 * effects need and the app does not declare, so that the one repair of all of an app's E0301
 * diagnostics adds each capability once, whichever of them it is applied from.
 */
export function appendCapsPatch(app: CheckInput, caps: readonly string[]): AutoPatch | undefined {
  const def = app.def as AppDef;
  const declared = def.caps ?? [];
  const last = declared[declared.length - 1];
  const added = caps.join(", ");
  if (last !== undefined) return replaceAt(app, last.span, last.name, `${last.name}, ${added}`);
  // An empty list has no token to anchor on but its brackets: only the source can say how they
  // are written.
  const source = app.source;
  if (source === undefined) return undefined;
  const text = source.slice(def.span.offset, def.span.end);
  const m = /caps[ \t]*=[ \t]*\[[ \t]*\]/.exec(text);
  if (m === null) return undefined;
  const offset = def.span.offset + m.index;
  const before = source.slice(def.span.offset, offset);
  const newlines = before.split("\n").length - 1;
  const span: Span = { offset, end: offset + m[0].length, line: def.span.line + newlines, column: 1 };
  return replaceAt(app, span, m[0], m[0].replace(/\[[ \t]*\]/, `[${added}]`));
}

/**
 * E0001's repair: a `NotFound` tile (when the program has no tile of that name) and a
 * `"/404" -> NotFound` route after the app's last route, applied together.
 */
export function notFoundPatch(app: CheckInput, tileName: string, addTile: boolean): AutoPatch | undefined {
  const def = app.def as AppDef;
  const last = def.routes?.[def.routes.length - 1];
  if (last === undefined) return undefined;
  const tail = last.kind === "Route" ? last.target : last.to;
  const written = last.kind === "Route" ? last.target.name : JSON.stringify(last.to.value);
  const route = replaceAt(app, tail.span, written, `${written}, "/404" -> ${tileName}`);
  if (route === undefined) return undefined;
  if (!addTile) return route;
  const tile: AutoPatchOp = {
    op: "add",
    layer: "tile",
    name: tileName,
    body: 'page(heading("404"), link(to="/", text="Back"))',
  };
  return { op: "bundle", ops: [tile, route] };
}
