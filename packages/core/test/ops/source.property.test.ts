import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LAYERS } from "../../src/lang/layers.js";
import { composeSource, decomposeSource } from "../../src/ops/source.js";

describe("definition source", () => {
  it("accepts the bodies a CLI user types (ai-edit.md §9.2.2)", () => {
    expect(composeSource({ layer: "slot", name: "todos", body: "Map(TodoId, Todo) = {}" })).toBe(
      "slot todos : Map(TodoId, Todo) = {}",
    );
    expect(composeSource({ layer: "slot", name: "todos", body: ": Map(TodoId, Todo) = {}" })).toBe(
      "slot todos : Map(TodoId, Todo) = {}",
    );
    expect(composeSource({ layer: "type", name: "Todo", body: "{id: TodoId, text: Text}" })).toBe(
      "type Todo = {id: TodoId, text: Text}",
    );
    expect(composeSource({ layer: "type", name: "Todo", body: "= {id: TodoId}" })).toBe(
      "type Todo = {id: TodoId}",
    );
    expect(composeSource({ layer: "type", name: "Box", body: "(T) = {value: T}" })).toBe(
      "type Box(T) = {value: T}",
    );
    expect(composeSource({ layer: "tile", name: "App", body: "column(Input)" })).toBe(
      "tile App = column(Input)",
    );
    expect(composeSource({ layer: "tile", name: "Row", body: "in=Todo = text($in.text)" })).toBe(
      "tile Row in=Todo = text($in.text)",
    );
    expect(
      composeSource({ layer: "reducer", name: "clear", body: 'on=ui.click(ClearBtn) do= draft := ""' }),
    ).toBe('reducer clear on=ui.click(ClearBtn) do= draft := ""');
    expect(composeSource({ layer: "fn", name: "count", body: "(ts: List(Int)) -> Int = ts.size" })).toBe(
      "fn count(ts: List(Int)) -> Int = ts.size",
    );
    expect(
      composeSource({ layer: "effect", name: "persist", body: "cap=storage.write in=Text out=Unit" }),
    ).toBe("effect persist cap=storage.write in=Text out=Unit");
  });

  it("cuts a definition at its name; the body is what follows the name", () => {
    expect(decomposeSource("slot todos : Map(TodoId, Todo) = {}")).toEqual({
      layer: "slot",
      name: "todos",
      body: " : Map(TodoId, Todo) = {}",
    });
    expect(decomposeSource("# the list\n# of todos\nslot  todos: T = {}\n")).toEqual({
      layer: "slot",
      name: "todos",
      body: ": T = {}\n",
      head: "# the list\n# of todos\nslot  ",
    });
    expect(decomposeSource("nonsense here")).toBeUndefined();
    expect(decomposeSource("slot")).toBeUndefined();
  });

  it("composeSource(decomposeSource(s)) gives s back byte for byte", () => {
    const layer = fc.constantFrom(...LAYERS);
    const name = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_-]{0,8}$/);
    const spacing = fc.constantFrom(" ", "  ", "\t", " \n ");
    const rest = fc.string({
      unit: fc.constantFrom("a", " ", ":", "=", "(", ")", "\n", "#", "\t", "{", "}"),
    });
    const comments = fc.array(fc.constantFrom("# c\n", "\n", "  # x\n"), { maxLength: 3 });
    fc.assert(
      fc.property(comments, layer, spacing, name, rest, (cs, l, sp, n, r) => {
        // A body that continues the name (a letter, digit, _ or -) would make a longer name.
        const tail = /^[a-zA-Z0-9_-]/.test(r) ? ` ${r}` : r;
        const src = `${cs.join("")}${l}${sp}${n}${tail}`;
        const parts = decomposeSource(src);
        expect(parts).toBeDefined();
        expect(composeSource(parts!)).toBe(src);
        expect(parts!.name).toBe(n);
        expect(parts!.layer).toBe(l);
      }),
    );
  });
});
