import { LAYERS, type Layer } from "./layers.js";
import type { ParseError, ParseResult } from "./parse-error.js";
import { parseDefinition, parseProgram } from "./parser.js";

/** One piece of a split .kumiki file: a definition with its exact text, or text between definitions. */
export type Piece =
  | {
      readonly kind: "definition";
      readonly layer: Layer;
      readonly name: string;
      /** The definition's exact source: the comment lines directly above it, the definition, and the
       * rest of its last line (a trailing comment, the newline). */
      readonly text: string;
      /** 1-based line in the file where `text` starts. */
      readonly line: number;
      /**
       * Set only by `splitProgramTolerant`: the text does not parse (layer and name are read
       * off its first line), and why, relative to `text`.
       */
      readonly unparsed?: ParseError;
    }
  | {
      /** Blank lines and comments that belong to no definition (a file header, a section banner). */
      readonly kind: "trivia";
      readonly text: string;
      readonly line: number;
    };

/**
 * Splits a .kumiki file into its definitions, in file order, each with its exact source text;
 * comment lines directly above a definition (no blank line between) belong to it. The pieces
 * partition the file: {@link joinPieces} gives the original back byte for byte. A file that does
 * not parse is refused with the parse error.
 */
export function splitProgram(source: string): ParseResult<Piece[]> {
  const parsed = parseProgram(source);
  if (!parsed.ok) return parsed;
  const lineStarts = computeLineStarts(source);
  const pieces: Piece[] = [];
  let at = 0;
  const defs = parsed.value.definitions;
  defs.forEach((def, i) => {
    const defLine = def.span.line;
    let startLine = defLine;
    // Attach the run of comment lines right above the definition, but never reach back past text
    // already taken (the end of the previous definition's last line).
    while (startLine > 1) {
      const prev = startLine - 1;
      const lineStart = lineStarts[prev - 1]!;
      if (lineStart < at) break;
      const text = source.slice(lineStart, lineStarts[prev] ?? source.length);
      if (!/^[ \t]*#/.test(text)) break;
      startLine = prev;
    }
    let start = startLine === defLine ? lineStartOf(def.span.offset, source) : lineStarts[startLine - 1]!;
    if (start < at) start = def.span.offset;
    const nextStart = defs[i + 1]?.span.offset ?? source.length;
    const end = endOfLastLine(source, def.span.end, nextStart);
    if (start > at)
      pieces.push({ kind: "trivia", text: source.slice(at, start), line: lineOf(lineStarts, at) });
    pieces.push({
      kind: "definition",
      layer: def.layer,
      name: def.name.name,
      text: source.slice(start, end),
      line: lineOf(lineStarts, start),
    });
    at = end;
  });
  if (at < source.length)
    pieces.push({ kind: "trivia", text: source.slice(at), line: lineOf(lineStarts, at) });
  return { ok: true, value: pieces };
}

/**
 * Where the comment lines directly above the line that starts at `lineStart` begin (no blank line
 * between): the comment a definition's text carries, by the rule {@link splitProgram} attaches it.
 * `lineStart` itself when the line above is not a comment.
 */
export function commentBlockStart(source: string, lineStart: number): number {
  let start = lineStart;
  while (start > 0) {
    const prev = source.lastIndexOf("\n", start - 2) + 1;
    if (!/^[ \t]*#/.test(source.slice(prev, start - 1))) break;
    start = prev;
  }
  return start;
}

/** The file the pieces came from: their texts, concatenated. */
export function joinPieces(pieces: readonly Piece[]): string {
  let out = "";
  for (const p of pieces) out += p.text;
  return out;
}

function computeLineStarts(source: string): number[] {
  const starts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function lineOf(lineStarts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** The start of the line holding `offset`, when only whitespace precedes it there. */
function lineStartOf(offset: number, source: string): number {
  let i = offset;
  while (i > 0) {
    const c = source.charCodeAt(i - 1);
    if (c === 10) break;
    if (c !== 32 && c !== 9) return offset;
    i--;
  }
  return i;
}

/**
 * Where a definition's piece ends: after the newline of its last line when the rest of that line
 * is blank or a comment, else right after its last token (another definition follows on the line).
 */
function endOfLastLine(source: string, end: number, limit: number): number {
  let i = end;
  while (i < limit) {
    const c = source.charCodeAt(i);
    if (c === 10) return i + 1;
    if (c === 35) {
      const nl = source.indexOf("\n", i);
      const eol = nl === -1 ? source.length : nl + 1;
      return eol <= limit ? eol : end;
    }
    if (c !== 32 && c !== 9 && c !== 13) return end;
    i++;
  }
  return i === source.length ? i : end;
}

/** A line that starts a definition: a layer keyword at column 1, then a name. */
const HEADER_RE = new RegExp(`^(${LAYERS.join("|")})[ \\t]+([A-Za-z][A-Za-z0-9_-]*)`);

/**
 * Like {@link splitProgram}, but a file that does not parse is still split, so that nothing in it
 * is lost (a faithful import): every line that starts with a layer keyword and a name at column 1
 * starts a definition, which runs to the next such line (its trailing blank and comment lines go
 * between, as trivia). A definition whose text parses is a definition piece as usual; one that does
 * not is a definition piece with `unparsed` set, its layer and name read off its first line. A file
 * that parses gives exactly what {@link splitProgram} gives. Refused (the file's parse error) only
 * when text other than blank and comment lines comes before the first definition, or there is none.
 */
export function splitProgramTolerant(source: string): ParseResult<Piece[]> {
  const whole = splitProgram(source);
  if (whole.ok) return whole;
  const lineStarts = computeLineStarts(source);
  const headers: { line: number; layer: Layer; name: string }[] = [];
  for (let i = 0; i < lineStarts.length; i++) {
    const start = lineStarts[i]!;
    const end = lineStarts[i + 1] ?? source.length;
    const m = HEADER_RE.exec(source.slice(start, Math.min(end, start + 80)));
    if (m !== null) headers.push({ line: i + 1, layer: m[1] as Layer, name: m[2]! });
  }
  const first = headers[0];
  if (first === undefined) return whole;
  // Line by line (a single regular expression over the span backtracks exponentially).
  const isTrivia = (from: number, to: number): boolean =>
    source
      .slice(from, to)
      .split("\n")
      .every((line) => /^[ \t\r]*(#.*)?$/.test(line));
  // Comment lines directly above a header belong to it (commentBlockStart).
  const startOf = (h: { line: number }): number => commentBlockStart(source, lineStarts[h.line - 1]!);
  if (!isTrivia(0, startOf(first))) return whole;
  const pieces: Piece[] = [];
  let at = 0;
  const trivia = (to: number): void => {
    if (to > at) pieces.push({ kind: "trivia", text: source.slice(at, to), line: lineOf(lineStarts, at) });
    at = to;
  };
  headers.forEach((h, i) => {
    const next = headers[i + 1];
    const start = startOf(h);
    trivia(start);
    const limit = next === undefined ? source.length : Math.max(start, startOf(next));
    // The definition ends after its last line that is neither blank nor a comment.
    let end = limit;
    while (end > start) {
      const lineStart = source.lastIndexOf("\n", end - 2) + 1;
      if (lineStart <= lineStarts[h.line - 1]! || !isTrivia(lineStart, end)) break;
      end = lineStart;
    }
    const text = source.slice(start, end);
    const alone = splitProgram(text);
    if (alone.ok && alone.value.some((p) => p.kind === "definition")) {
      // It parses (several definitions on one line included): pieces as usual, lines shifted.
      const shift = lineOf(lineStarts, start) - 1;
      for (const p of alone.value) pieces.push({ ...p, line: p.line + shift });
    } else {
      const parsed = parseDefinition(text);
      pieces.push({
        kind: "definition",
        layer: h.layer,
        name: h.name,
        text,
        line: lineOf(lineStarts, start),
        ...(parsed.ok ? {} : { unparsed: parsed.error }),
      });
    }
    at = end;
  });
  trivia(source.length);
  return { ok: true, value: pieces };
}
