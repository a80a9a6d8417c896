import { corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ParseResult } from "../../src/lang/parse-error.js";
import { parseDefinition, parseProgram } from "../../src/lang/parser.js";
import { referenceSites } from "../../src/lang/references.js";

/** A hang or a quadratic blow-up shows as a call far slower than this (a corpus program takes ~5 ms). */
const CALL_BUDGET_MS = 2_000;

function lineColumn(source: string, offset: number): [number, number] {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return [line, offset - lineStart + 1];
}

/** Parses with both entry points and checks everything a caller relies on, whatever the input. */
function checkTotal(source: string): void {
  for (const parse of [parseProgram, parseDefinition] as ((s: string) => ParseResult<unknown>)[]) {
    const t0 = performance.now();
    let result: ParseResult<unknown> | undefined;
    expect(() => {
      result = parse(source);
    }).not.toThrow();
    expect(performance.now() - t0).toBeLessThan(CALL_BUDGET_MS);
    if (result === undefined) return;
    if (result.ok) {
      // Plain data: a JSON round trip changes nothing.
      expect(JSON.parse(JSON.stringify(result.value))).toEqual(result.value);
      continue;
    }
    const { message, span } = result.error;
    expect(message.startsWith("internal")).toBe(false);
    expect(span.offset).toBeGreaterThanOrEqual(0);
    expect(span.offset).toBeLessThanOrEqual(source.length);
    expect(span.end).toBeGreaterThanOrEqual(span.offset);
    expect(span.end).toBeLessThanOrEqual(source.length);
    expect([span.line, span.column]).toEqual(lineColumn(source, span.offset));
    expect(message.endsWith(` at ${span.line}:${span.column}`)).toBe(true);
  }
  const program = parseProgram(source);
  if (program.ok) {
    for (const def of program.value.definitions) {
      for (const site of referenceSites(def)) {
        expect(site.span.offset).toBeGreaterThanOrEqual(def.span.offset);
        expect(site.span.end).toBeLessThanOrEqual(def.span.end);
      }
    }
  }
}

const KUMIKI_ALPHABET = [
  "type",
  "slot",
  "effect",
  "reducer",
  "tile",
  "fn",
  "app",
  "test",
  "theme",
  "motion",
  "nominal",
  "where",
  "when",
  "for",
  "in",
  "let",
  "if",
  "then",
  "else",
  "match",
  "with",
  "on",
  "do",
  "emit",
  "cap",
  "out",
  "policy",
  "retry",
  "true",
  "false",
  "now",
  "null",
  "self",
  "fresh",
  "x",
  "Foo",
  "todos",
  "sort-by",
  "ui",
  "click",
  "$1",
  "$el",
  "_",
  "0",
  "1.5",
  "300ms",
  '"s"',
  '"',
  "\\",
  ":=",
  "=",
  "==",
  "!=",
  "<",
  ">",
  "<=",
  ">=",
  "->",
  "->>",
  "+",
  "-",
  "*",
  "/",
  "%",
  "&&",
  "||",
  "&",
  "|",
  "!",
  "(",
  ")",
  "{",
  "}",
  "[",
  "]",
  ",",
  ";",
  ":",
  ".",
  "#",
  "@",
  "\n",
  "# comment\n",
  "<any-id>",
  "<slots.",
];

const soup = fc
  .tuple(fc.array(fc.constantFrom(...KUMIKI_ALPHABET), { maxLength: 80 }), fc.constantFrom(" ", "", "\n"))
  .map(([parts, sep]) => parts.join(sep));

describe("parsing is total", () => {
  it("on random strings (any code units)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => checkTotal(s)),
      { numRuns: 300 },
    );
  });

  it("on token soups of the Kumiki alphabet", () => {
    fc.assert(
      fc.property(soup, (s) => checkTotal(s)),
      { numRuns: 300 },
    );
  });

  it("on soups that open with a definition head", () => {
    const head = fc.constantFrom(
      "tile A = ",
      "reducer r on=ui.click(B) do= ",
      "fn f(x: Int) -> Int = ",
      "slot s : Map(K, V) = ",
      "type T = ",
      "effect e cap=http.get in=Unit out=Unit ",
      "app A caps = [] routes = ",
      "test t = reducer-test r given = ",
      "theme T = ",
    );
    fc.assert(
      fc.property(head, soup, (h, s) => checkTotal(h + s)),
      { numRuns: 300 },
    );
  });
});

describe.skipIf(!hasCorpus)("parsing is total on mutated corpus programs", () => {
  const sources = corpusPrograms().map((p) => p.source);

  type Mutation = (s: string) => string;
  const at = (s: string, f: number) => Math.floor(f * (s.length + 1));
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 40 })).map(
      ([f, n]): Mutation =>
        (s) =>
          s.slice(0, at(s, f)) + s.slice(at(s, f) + n),
    ),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...KUMIKI_ALPHABET)).map(
      ([f, tok]): Mutation =>
        (s) =>
          s.slice(0, at(s, f)) + tok + s.slice(at(s, f)),
    ),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.string({ unit: "binary", maxLength: 4 })).map(
      ([f, junk]): Mutation =>
        (s) =>
          s.slice(0, at(s, f)) + junk + s.slice(at(s, f)),
    ),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 200 })).map(
      ([f, n]): Mutation =>
        (s) => {
          const i = at(s, f);
          return s.slice(0, i) + s.slice(i, i + n) + s.slice(i);
        },
    ),
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })).map(
      ([f, g]): Mutation =>
        (s) => {
          const i = Math.min(at(s, f), s.length - 1);
          const j = Math.min(at(s, g), s.length - 1);
          if (i < 0 || j < 0 || i === j) return s;
          const [a, b] = i < j ? [i, j] : [j, i];
          return s.slice(0, a) + s[b] + s.slice(a + 1, b) + s[a] + s.slice(b + 1);
        },
    ),
    fc.double({ min: 0, max: 1, noNaN: true }).map(
      (f): Mutation =>
        (s) =>
          s.slice(0, at(s, f)),
    ),
  );

  it("(delete, insert tokens or junk, duplicate, swap, truncate)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (source, ms) => {
          checkTotal(ms.reduce((s, m) => m(s), source));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("on single definitions cut out of the corpus and mutated", () => {
    const pieces: string[] = [];
    for (const source of sources) {
      const r = parseProgram(source);
      if (r.ok) for (const d of r.value.definitions) pieces.push(source.slice(d.span.offset, d.span.end));
    }
    fc.assert(
      fc.property(fc.constantFrom(...pieces), mutation, (piece, m) => checkTotal(m(piece))),
      { numRuns: 300 },
    );
  });

  it("and deterministic: every corpus program parses to the same JSON twice", () => {
    for (const source of sources) {
      const a = JSON.stringify(parseProgram(source));
      const b = JSON.stringify(parseProgram(source));
      expect(a).toBe(b);
      expect(JSON.parse(a).ok).toBe(true);
    }
  });
});
