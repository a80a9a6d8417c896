import { describe, expect, it } from "vitest";
import { MAX_IDENTIFIER_LENGTH, type Token, tokenize } from "../../src/lang/lexer.js";

function tokens(source: string): Token[] {
  const r = tokenize(source);
  if (r.error !== undefined) throw new Error(r.error.message);
  return r.tokens;
}

/** `kind:text` per token, without the final eof. */
function shapes(source: string): string[] {
  return tokens(source)
    .filter((t) => t.kind !== "eof")
    .map((t) => `${t.kind}:${t.text}`);
}

describe("tokenize", () => {
  it("reads names, keywords, numbers, strings and operators", () => {
    expect(shapes('slot draft : Text = "hi"')).toEqual([
      "keyword:slot",
      "ident:draft",
      "punct::",
      "ident:Text",
      "punct:=",
      "string:hi",
    ]);
    expect(shapes("a := b == c != d <= e >= f -> g ->> h || i && j")).toEqual([
      "ident:a",
      "punct::=",
      "ident:b",
      "punct:==",
      "ident:c",
      "punct:!=",
      "ident:d",
      "punct:<=",
      "ident:e",
      "punct:>=",
      "ident:f",
      "punct:->",
      "ident:g",
      "punct:->>",
      "ident:h",
      "punct:||",
      "ident:i",
      "punct:&&",
      "ident:j",
    ]);
    expect(shapes("+ - * / % < > = | & ! ( ) { } [ ] , ; : . @")).toHaveLength(22);
  });

  it("keeps hyphenated identifiers whole, but a spaced minus is subtraction", () => {
    expect(shapes("xs.sort-by(get-or) translate-y max-w app.http-401")).toEqual([
      "ident:xs",
      "punct:.",
      "ident:sort-by",
      "punct:(",
      "ident:get-or",
      "punct:)",
      "ident:translate-y",
      "ident:max-w",
      "keyword:app",
      "punct:.",
      "ident:http-401",
    ]);
    expect(shapes("count - 1")).toEqual(["ident:count", "punct:-", "number:1"]);
    expect(shapes("a->b")).toEqual(["ident:a", "punct:->", "ident:b"]);
    expect(shapes("-x")).toEqual(["punct:-", "ident:x"]);
  });

  it("reads durations as their own tokens, and numbers keep their source text", () => {
    const [d1, d2, d3, n1, n2] = tokens("300ms 1s 5m 1.50 42");
    expect([d1?.kind, d1?.value, d1?.unit, d1?.text]).toEqual(["duration", 300, "ms", "300ms"]);
    expect([d2?.kind, d2?.value, d2?.unit]).toEqual(["duration", 1, "s"]);
    expect([d3?.kind, d3?.value, d3?.unit]).toEqual(["duration", 5, "m"]);
    expect([n1?.kind, n1?.text, n1?.value]).toEqual(["number", "1.50", 1.5]);
    expect([n2?.kind, n2?.value]).toEqual(["number", 42]);
    // A unit glued to more name characters is not a unit.
    expect(shapes("3px 2mx")).toEqual(["number:3", "ident:px", "number:2", "ident:mx"]);
    expect(shapes("1.show")).toEqual(["number:1", "punct:.", "ident:show"]);
  });

  it("reads `$` bindings", () => {
    expect(shapes("$1 $2.done $el.todoId $event $route")).toEqual([
      "dollar:$1",
      "dollar:$2",
      "punct:.",
      "ident:done",
      "dollar:$el",
      "punct:.",
      "ident:todoId",
      "dollar:$event",
      "dollar:$route",
    ]);
  });

  it("treats `#` as a comment, except between a name and a name (`Tile#id`)", () => {
    expect(shapes("ui.submit(NewForm#new) # the new form\nx")).toEqual([
      "ident:ui",
      "punct:.",
      "ident:submit",
      "punct:(",
      "ident:NewForm",
      "punct:#",
      "ident:new",
      "punct:)",
      "ident:x",
    ]);
    expect(shapes("# only a comment")).toEqual([]);
    expect(shapes("a #b")).toEqual(["ident:a"]);
    expect(shapes('{color: "#fff"}')).toEqual([
      "punct:{",
      "ident:color",
      "punct::",
      "string:#fff",
      "punct:}",
    ]);
  });

  it("decodes string escapes and keeps the span over the quotes", () => {
    const [s] = tokens('"a\\n\\t\\r\\"\\\\\\u{1F600}b"');
    expect(s?.text).toBe('a\n\t\r"\\\u{1F600}b');
    expect([s?.offset, s?.end]).toEqual([0, 23]);
  });

  it("gives every token its offsets and 1-based line and column (CRLF and tabs too)", () => {
    const ts = tokens("slot a\r\n\tslot  b");
    expect(ts.map((t) => [t.text, t.offset, t.end, t.line, t.column])).toEqual([
      ["slot", 0, 4, 1, 1],
      ["a", 5, 6, 1, 6],
      ["slot", 9, 13, 2, 2],
      ["b", 15, 16, 2, 8],
      ["", 16, 16, 2, 9],
    ]);
    // Lines inside a multi-line string count.
    const after = tokens('"x\ny" z');
    expect([after[1]?.text, after[1]?.line, after[1]?.column]).toEqual(["z", 2, 4]);
  });

  it("pairs opening brackets with their closing ones", () => {
    const ts = tokens("f(a, [b], {c: (d)})");
    const open = ts[1]!;
    expect(ts[open.pair]?.text).toBe(")");
    expect(open.pair).toBe(ts.length - 2);
    expect(tokens("(")[0]?.pair).toBe(-1);
  });

  it("reports lexical errors with their position and stops with an error token", () => {
    const cases: [string, string][] = [
      ['slot a : Text = "abc', "unterminated string at 1:17"],
      ["tile A = text(`x`)", 'unexpected character "`" at 1:15'],
      ["tile A = text(\u00a7)", "unexpected character `\u00a7` at 1:15"],
      ['x = "\\q"', 'unknown escape `\\q` in a string (use \\n, \\t, \\r, \\", \\\\ or \\u{hex}) at 1:6'],
      ['x = "\\u{110000}"', "`\\u{110000}` is not a Unicode scalar value at 1:6"],
      ["a $ b", "`$` must be followed by a position or a name (`$1`, `$el`, `$event`) at 1:3"],
      ["\n\n  x\u0001", "unexpected character U+0001 at 3:4"],
    ];
    for (const [source, message] of cases) {
      const r = tokenize(source);
      expect(r.error?.message, source).toBe(message);
      const last = r.tokens[r.tokens.length - 1]!;
      const errorTok = r.tokens[r.tokens.length - 2]!;
      expect(last.kind).toBe("eof");
      expect(errorTok.kind).toBe("error");
      expect(errorTok.offset).toBe(r.error?.span.offset);
    }
  });

  it("refuses identifiers longer than 32 characters", () => {
    const ok = "a".repeat(MAX_IDENTIFIER_LENGTH);
    expect(tokenize(ok).error).toBeUndefined();
    expect(tokenize(`x ${ok}b`).error?.message).toMatch(/^identifier `a+b` is 33 characters long .* at 1:3$/);
  });

  it("ignores a byte order mark and all kinds of blank", () => {
    expect(shapes("\uFEFFslot\u000b\u000c a")).toEqual(["keyword:slot", "ident:a"]);
  });
});
