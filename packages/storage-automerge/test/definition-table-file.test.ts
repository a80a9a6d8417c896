import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DefinitionTableFile } from "../src/read.js";
import { tempWorkspacePaths } from "./support.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

const paths = () => tempWorkspacePaths(roots, "kumiki-definition-table-");

/** Rows as core's definitionRows makes them; one text holds what a row's bytes look like, quoted. */
const ROWS = [
  ["def_a", "slot", "todos", true, true, "op_a", "slot todos : Int = 0", {}],
  ["def_b", "slot", "draft", true, false, "op_b", "slot draft : Int = 0", {}],
  [
    "def_c",
    "slot",
    "draft",
    true,
    true,
    "op_c",
    'slot draft : Text = ",\\"slot\\",\\"todos\\",true,true,"',
    {},
  ],
  ["def_d", "tile", "Field", false, false, "op_d", "tile Field = draft", { "slot:draft": "def_c" }],
];

describe("DefinitionTableFile", () => {
  it("finds the row that shows under a name and a row by identity, parsing only those", () => {
    const p = paths();
    new DefinitionTableFile(p, "s1", "stamp").put(ROWS);
    const rows = new DefinitionTableFile(p, "s1", "stamp").rows();
    expect(rows?.shownAs("slot", "todos")).toEqual(ROWS[0]);
    // The one that shows, not the one a name conflict hides; a text quoting a row's bytes is no row.
    expect(rows?.shownAs("slot", "draft")).toEqual(ROWS[2]);
    expect(rows?.shownAs("tile", "Field")).toBeUndefined();
    expect(rows?.shownAs("slot", "none")).toBeUndefined();
    expect(rows?.rowOf("def_d")).toEqual(ROWS[3]);
    expect(rows?.rowOf("def_z")).toBeUndefined();
  });

  it("lists every definition's latest row by its head, reading a whole row only when asked", () => {
    const p = paths();
    new DefinitionTableFile(p, "s1", "stamp").put(ROWS);
    const changed = [["def_c", "slot", "text", true, true, "op_c2", 'slot text : Text = ","', {}]];
    expect(new DefinitionTableFile(p, "s1", "stamp").append("s2", changed)).toBe(true);
    const every = new DefinitionTableFile(p, "s2", "stamp").rows()?.every();
    // The head stops at the fifth comma outside a string: def_c's text (commas, quotes) is not read.
    expect(every?.map((r) => r.head)).toEqual([
      ROWS[0]!.slice(0, 5),
      ROWS[1]!.slice(0, 5),
      changed[0]!.slice(0, 5),
      ROWS[3]!.slice(0, 5),
    ]);
    expect(every?.map((r) => r.row())).toEqual([ROWS[0], ROWS[1], changed[0], ROWS[3]]);
    // The latest rows holding an identity's bytes: def_d's, which binds def_c; def_c's own latest
    // row (its first value), not its row before the append.
    const table = new DefinitionTableFile(p, "s2", "stamp").rows();
    expect(table?.referencing("def_c")).toEqual([ROWS[3], changed[0]]);
    expect(table?.referencing("def_z")).toEqual([]);
    // A line that is not a row's start: the table cannot say what there is.
    const file = path.join(p.cache, "definitions.jsonl");
    const lines = fs.readFileSync(file, "utf8").split("\n");
    lines[2] = '["def_b","slot"';
    fs.writeFileSync(file, lines.join("\n"));
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()?.every()).toBeUndefined();
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()?.referencing("def_c")).toBeUndefined();
    lines[2] = '"def_b"';
    fs.writeFileSync(file, lines.join("\n"));
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()?.every()).toBeUndefined();
  });

  it("takes a write's rows as the next state's table, each in place of its definition's rows before", () => {
    const p = paths();
    new DefinitionTableFile(p, "s1", "stamp").put(ROWS);
    // draft is renamed away (its row now names it "text"), todos hidden, a new slot shows.
    const changed = [
      ["def_c", "slot", "text", true, true, "op_c2", 'slot text : Text = ""', {}],
      ["def_a", "slot", "todos", true, false, "op_a", "slot todos : Int = 0", {}],
      ["def_e", "slot", "fresh", true, true, "op_e", "slot fresh : Int = 1", {}],
    ];
    expect(new DefinitionTableFile(p, "s1", "stamp").append("s2", changed)).toBe(true);
    expect(new DefinitionTableFile(p, "s1", "stamp").rows()).toBeUndefined();
    const rows = new DefinitionTableFile(p, "s2", "stamp").rows();
    expect(rows?.shownAs("slot", "draft")).toBeUndefined();
    expect(rows?.shownAs("slot", "text")).toEqual(changed[0]);
    expect(rows?.shownAs("slot", "todos")).toBeUndefined();
    expect(rows?.shownAs("slot", "fresh")).toEqual(changed[2]);
    expect(rows?.rowOf("def_a")).toEqual(changed[1]);
    expect(rows?.rowOf("def_d")).toEqual(ROWS[3]);
    // Only onto the state it was made from; a cut append reads as no table.
    expect(new DefinitionTableFile(p, "s1", "stamp").append("s3", changed)).toBe(false);
    const file = path.join(p.cache, "definitions.jsonl");
    fs.appendFileSync(file, JSON.stringify(changed[0]).slice(0, 9));
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()).toBeUndefined();
    expect(new DefinitionTableFile(p, "s2", "stamp").append("s3", changed)).toBe(false);
  });

  it("keeps a status with each state's trailer, a put's and an append's", () => {
    const p = paths();
    new DefinitionTableFile(p, "s1", "stamp").put(ROWS, { ops: 4 });
    expect(new DefinitionTableFile(p, "s1", "stamp").rows()?.status()).toEqual({ ops: 4 });
    expect(new DefinitionTableFile(p, "s1", "stamp").append("s2", [ROWS[0]], { ops: 5 })).toBe(true);
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()?.status()).toEqual({ ops: 5 });
    // The earlier trailer, status and all, is not a row.
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()?.every()).toHaveLength(4);
    new DefinitionTableFile(p, "s3", "stamp").put(ROWS);
    expect(new DefinitionTableFile(p, "s3", "stamp").rows()?.status()).toBeUndefined();
  });

  it("stops taking appends after 256, until a whole table is kept again", () => {
    const p = paths();
    new DefinitionTableFile(p, "s0", "stamp").put(ROWS);
    for (let i = 0; i < 256; i++)
      expect(new DefinitionTableFile(p, `s${i}`, "stamp").append(`s${i + 1}`, [ROWS[0]])).toBe(true);
    expect(new DefinitionTableFile(p, "s256", "stamp").rows()?.shownAs("slot", "todos")).toEqual(ROWS[0]);
    expect(new DefinitionTableFile(p, "s256", "stamp").append("s257", [ROWS[0]])).toBe(false);
    new DefinitionTableFile(p, "s256", "stamp").put(ROWS);
    expect(new DefinitionTableFile(p, "s256", "stamp").append("s257", [ROWS[0]])).toBe(true);
  });

  it("answers nothing for another state, another build, no file or a file that is not a table", () => {
    const p = paths();
    expect(new DefinitionTableFile(p, "s1", "stamp").rows()).toBeUndefined();
    new DefinitionTableFile(p, "s1", "stamp").put(ROWS);
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()).toBeUndefined();
    expect(new DefinitionTableFile(p, "s1", "other").rows()).toBeUndefined();
    // A put for a new state replaces the table.
    new DefinitionTableFile(p, "s2", "stamp").put(ROWS.slice(0, 1));
    expect(new DefinitionTableFile(p, "s1", "stamp").rows()).toBeUndefined();
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()?.shownAs("slot", "draft")).toBeUndefined();
    const file = path.join(p.cache, "definitions.jsonl");
    fs.writeFileSync(file, "garbage\n");
    expect(new DefinitionTableFile(p, "s2", "stamp").rows()).toBeUndefined();
    // The header right, a row cut: that row reads as nothing, the others still do.
    const text = `${JSON.stringify({ v: 1, stamp: "stamp" })}\n${JSON.stringify(ROWS[0]).slice(0, 20)}\n${JSON.stringify(ROWS[3])}\n${JSON.stringify({ state: "s3", n: 0 })}\n`;
    fs.writeFileSync(file, text);
    const cut = new DefinitionTableFile(p, "s3", "stamp").rows();
    expect(cut?.shownAs("slot", "todos")).toBeUndefined();
    expect(cut?.rowOf("def_d")).toEqual(ROWS[3]);
  });
});
