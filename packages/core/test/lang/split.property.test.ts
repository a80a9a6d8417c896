import { corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDefinition } from "../../src/lang/parser.js";
import { joinPieces, splitProgram } from "../../src/lang/split.js";

function split(source: string) {
  const r = splitProgram(source);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

describe("splitProgram", () => {
  it("gives each definition its exact text, with the comment lines directly above it", () => {
    const source = [
      "# Header of the file",
      "",
      "# About count",
      "# (two lines)",
      "slot count : Int = 0   # trailing",
      "",
      "# ====== Tiles ======",
      "",
      "tile App = column(",
      "    text(count.show))",
      "",
    ].join("\n");
    const pieces = split(source);
    expect(pieces.map((p) => p.kind)).toEqual(["trivia", "definition", "trivia", "definition"]);
    expect(pieces[1]).toMatchObject({
      kind: "definition",
      layer: "slot",
      name: "count",
      line: 3,
      text: "# About count\n# (two lines)\nslot count : Int = 0   # trailing\n",
    });
    expect(pieces[3]).toMatchObject({
      layer: "tile",
      name: "App",
      line: 9,
      text: "tile App = column(\n    text(count.show))\n",
    });
    expect(joinPieces(pieces)).toBe(source);
  });

  it("keeps a file with no trailing newline and no comments byte for byte", () => {
    const source = "type A = Int\ntype B = Text";
    const pieces = split(source);
    expect(pieces.map((p) => p.text)).toEqual(["type A = Int\n", "type B = Text"]);
    expect(joinPieces(pieces)).toBe(source);
  });

  it("keeps CRLF line endings and tabs", () => {
    const source = "# c\r\nslot a : Int = 1\r\n\r\n\tslot b : Int = 2\r\n";
    const pieces = split(source);
    expect(joinPieces(pieces)).toBe(source);
    expect(pieces.filter((p) => p.kind === "definition").map((p) => p.text)).toEqual([
      "# c\r\nslot a : Int = 1\r\n",
      "\tslot b : Int = 2\r\n",
    ]);
  });

  it("refuses a file that does not parse, with the position", () => {
    const r = splitProgram("slot a : Int = 1\ntile = button()\n");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/at 2:\d+$/);
  });

  it("round-trips any sequence of definitions, blank lines and comments (property)", () => {
    const def = fc.constantFrom(
      "slot a : Int = 0",
      "type T = {x: Int, y: Text}",
      "fn f(x: Int) -> Int = x + 1",
      'tile B = button(text="b")',
      "reducer r on=ui.click(B) do= a := a + 1",
    );
    const gap = fc.constantFrom("\n", "\n\n", "\n# note\n", "\n\n# banner\n\n", "   # tail\n", "\n\t\n");
    fc.assert(
      fc.property(
        fc.array(fc.tuple(def, gap), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (items, header) => {
          const source = (header ? "# head\n\n" : "") + items.map(([d, g]) => d + g).join("");
          const pieces = split(source);
          expect(joinPieces(pieces)).toBe(source);
          expect(pieces.filter((p) => p.kind === "definition")).toHaveLength(items.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe.skipIf(!hasCorpus)("splitProgram on the conformance corpus", () => {
  for (const program of corpusPrograms()) {
    it(`${program.id} splits and re-joins byte for byte, each piece parsing alone`, () => {
      const pieces = split(program.source);
      expect(joinPieces(pieces)).toBe(program.source);
      for (const piece of pieces) {
        if (piece.kind !== "definition") continue;
        const r = parseDefinition(piece.text);
        expect(r.ok, `${piece.layer}.${piece.name}: ${r.ok ? "" : r.error.message}`).toBe(true);
        if (r.ok) expect([r.value.layer, r.value.name.name]).toEqual([piece.layer, piece.name]);
      }
    });
  }
});
