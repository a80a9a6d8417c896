import { corpusProgram, corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { ContentHashSchema } from "../../src/lang/hash.js";
import { parseDefinition, parseProgram } from "../../src/lang/parser.js";
import { referenceSites } from "../../src/lang/references.js";
import { renderDefinition } from "../../src/lang/render.js";
import { hashProgram, resolveProgram } from "../../src/lang/resolve.js";

function hashes(source: string, identity?: (qname: string) => string): Map<string, string> {
  const r = hashProgram(source, identity);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** Renames definition `from` (a qualified name) to `to` everywhere, through the resolved references:
 * each definition is re-parsed from its own text and rendered, as the store shows it. */
function renameEverywhere(source: string, from: string, to: string): string {
  const parsed = parseProgram(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const [, newName] = to.split(".") as [string, string];
  let out = "";
  let at = 0;
  for (const r of resolveProgram(parsed.value)) {
    const text = source.slice(r.def.span.offset, r.def.span.end);
    const alone = parseDefinition(text);
    if (!alone.ok) throw new Error(alone.error.message);
    const rendered = renderDefinition(text, alone.value, referenceSites(alone.value), {
      self: r.id === from ? newName : r.def.name.name,
      refs: r.targets.map((t) => (t === from ? newName : undefined)),
    });
    out += source.slice(at, r.def.span.offset) + rendered;
    at = r.def.span.end;
  }
  return out + source.slice(at);
}

const SMALL = `type TodoId = nominal Text where uuid
type Todo = {id: TodoId, text: Text, done: Bool}
slot todos : Map(TodoId, Todo) = {}
slot draft : Text = ""
fn count(ts: Map(TodoId, Todo)) -> Int = ts.size
tile Input = input(bind=draft)
tile Counter = text(count(todos).show)
reducer clear on=ui.click(ClearBtn) do= draft := ""
tile ClearBtn = button(text="clear", onClick=clear)
tile App = column(Input, Counter, ClearBtn)
`;

describe("content hashes", () => {
  it("are h: plus 64 hex digits of blake3, one per definition", () => {
    const h = hashes(SMALL);
    expect([...h.keys()].sort()).toEqual(
      [
        "fn.count",
        "reducer.clear",
        "slot.draft",
        "slot.todos",
        "tile.App",
        "tile.ClearBtn",
        "tile.Counter",
        "tile.Input",
        "type.Todo",
        "type.TodoId",
      ].sort(),
    );
    for (const v of h.values()) expect(ContentHashSchema.safeParse(v).success).toBe(true);
  });

  it("do not change with whitespace or comments", () => {
    const spaced = SMALL.replaceAll(" = ", "   =\n    ")
      .replaceAll(", ", " ,\t")
      .replace(/\n/g, "\n# a comment\n\n");
    expect(hashes(spaced)).toEqual(hashes(SMALL));
  });

  it("do not change when any definition is renamed (every reference follows it)", () => {
    const before = hashes(SMALL);
    for (const [from, to] of [
      ["slot.draft", "slot.scratch"],
      ["type.TodoId", "type.Key"],
      ["reducer.clear", "reducer.wipe"],
      ["tile.ClearBtn", "tile.WipeBtn"],
      ["fn.count", "fn.total"],
    ] as const) {
      const renamed = renameEverywhere(SMALL, from, to);
      expect(renamed).not.toBe(SMALL);
      // The renamed definition keeps its identity, as it does in the store (its definition id);
      // a nominal type's identity is part of its hash.
      const after = hashes(renamed, (q) => (q === to ? from : q));
      for (const [id, h] of before) expect(after.get(id), `${id} after renaming ${from}`).toBe(h);
    }
  });

  it("change for a changed body and for every dependent, and for nothing else", () => {
    const before = hashes(SMALL);
    const after = hashes(SMALL.replace('slot draft : Text = ""', 'slot draft : Text = "x"'));
    const changed = [...before.keys()].filter((k) => before.get(k) !== after.get(k)).sort();
    // reducer.clear and tile.ClearBtn reach each other (a cycle), and tile.App reaches both.
    expect(changed).toEqual(["reducer.clear", "slot.draft", "tile.App", "tile.ClearBtn", "tile.Input"]);
  });

  it("are alike for structurally identical types, field order aside, unless nominal", () => {
    const h = hashes(`type A = {x: Int, y: Text}
type B = {y: Text, x: Int}
type C = {x: Int, y: Bool}
type N = nominal Text
type M = nominal Text
`);
    expect(h.get("type.A")).toBe(h.get("type.B"));
    expect(h.get("type.A")).not.toBe(h.get("type.C"));
    expect(h.get("type.N")).not.toBe(h.get("type.M"));
    const refined = hashes("type N = nominal Text where uuid\ntype M = nominal Text where uuid\n");
    expect(refined.get("type.N")).not.toBe(refined.get("type.M"));
  });

  it("tell a slot and a tile of one name apart (layer-aware resolution)", () => {
    const base = `slot Box : Int = 0
tile Box = text("box")
tile App = column(Box, text(Box.show))
`;
    const h1 = hashes(base);
    const tileChanged = hashes(base.replace('text("box")', 'text("BOX")'));
    const slotChanged = hashes(base.replace("= 0", "= 1"));
    expect(tileChanged.get("tile.App")).not.toBe(h1.get("tile.App"));
    expect(slotChanged.get("tile.App")).not.toBe(h1.get("tile.App"));
    expect(tileChanged.get("tile.App")).not.toBe(slotChanged.get("tile.App"));
  });

  it("hash a cycle (a tile and the reducer it triggers) together, order-independently", () => {
    const a = `tile Btn = button(text="go", onClick=go)
reducer go on=ui.click(Btn) do= n := n + 1
slot n : Int = 0
`;
    const b = `slot n : Int = 0
reducer go on=ui.click(Btn) do= n := n + 1
tile Btn = button(text="go", onClick=go)
`;
    const ha = hashes(a);
    expect(ha).toEqual(hashes(b));
    expect(ha.get("tile.Btn")).not.toBe(ha.get("reducer.go"));
    const hc = hashes(a.replace('text="go"', 'text="run"'));
    expect(hc.get("reducer.go")).not.toBe(ha.get("reducer.go"));
  });
});

/**
 * Hashes are a stored contract: ops record them, so an implementation change (a faster writer, a
 * different blake3) must reproduce them bit for bit. These were computed by the first
 * implementation; the program covers a nominal type, a cycle, a shorthand field, a test's slot keys,
 * an unresolved name, a motion name in a string, non-ASCII and escaped string contents, and a
 * definition whose canonical form spans several blake3 chunks.
 */
const PINNED = `type ItemId = nominal Text where uuid
type Item = {label: Text, id: ItemId}
slot count : Int = 0
slot items : Map(ItemId, Item) = {}
slot draft : Text = "héllo \\"q\\" 🎉"
effect persist cap=storage.write in=Map(ItemId, Item) out=Result(Unit, Text)
reducer inc on=ui.click(IncBtn) do= count := count + 1
reducer addItem on=ui.submit(AddForm) do=
    let id = ItemId.fresh()
    items[id] := {id, label=draft}
    emit persist(items)
fn twice(n: Int) -> Int = n * 2 + missing
tile IncBtn = button(text="+1", onClick=inc)
tile AddForm = form(input(bind=draft))
tile App = column(heading("Count: " + twice(count).show), IncBtn, AddForm) {pad: "lg", motion: "Spin"}
motion Spin = {from: {opacity: 0}, to: {opacity: 1}, duration: "200ms"}
test inc-increments =
    reducer-test inc
        given  = {slots: {count: 0, draft: ""}, event: {type: ui.click, target: IncBtn}}
        expect = {slots: {count: 1}, effects: []}
tile Long = column(${Array.from({ length: 120 }, (_, i) => `text("line ${i}")`).join(", ")})
`;

describe("pinned content hashes", () => {
  it("are what they have always been", () => {
    expect(Object.fromEntries([...hashes(PINNED)].sort())).toEqual({
      "effect.persist": "h:a26f7e031b2536f1ea9fdb2c8c017e38b5697f2fc19f5502fabf74c0a61c41b8",
      "fn.twice": "h:7a83e84f015e0b0b463dc5065bdc3b5d5abe4c9276541fc655a793c128606635",
      "motion.Spin": "h:64621eef5036b593f83ed4b8fb26ff8ebdf67baddd41e165229cfcb57a416821",
      "reducer.addItem": "h:4c4f7c8858c1fc25dad0042027fbc79c58745a4284279ba39b2fad2639489573",
      "reducer.inc": "h:e76150ea785c9bfdec9fc7dd39ca79104c42d4592942c3d3992022b52a55cb5f",
      "slot.count": "h:e23f49bb4ad015d6d791f555aa1c29839f4ceeb01045719c07a1051b781e1baf",
      "slot.draft": "h:75d3331c71cb7e8173584099c29bd09da98644fdb62ca03f4509a378fd005502",
      "slot.items": "h:ad218eeeb7947d0f479515887a986b0aa1e9ac4dd3fe99821708eb2c8e79f584",
      "test.inc-increments": "h:a48a7276a38e3156a7db0f96c88f940c5d17c67e441e32777519751dbbdc695f",
      "tile.AddForm": "h:f3aa4f88fdfcc7e936b03af180972fd13a9f5bf6bef90f020e0e868176e3815b",
      "tile.App": "h:6ea5efd922d5f80be3ad689a74ace12c8b0235ce4ad734f011f4176d181175e8",
      "tile.IncBtn": "h:0616c0c2189abbfe29e1cc716d7d36dad2a96516083585f9636129873eca919c",
      "tile.Long": "h:21f6fa13454a456d774c0482b781a752ad642bd3e4e1ac852e359c7dccb3632e",
      "type.Item": "h:1794c645059065da680818024c7b49d27e8a99fc423f7761b5def414ce99834a",
      "type.ItemId": "h:1fc9e37690fcafeee7b8f3c05d3d0db6858249aca66ca62fd3ae7daf4e0b77cd",
    });
  });
});

describe.skipIf(!hasCorpus)("content hashes on the conformance corpus", () => {
  for (const program of corpusPrograms()) {
    it(`${program.id}: every definition hashes, deterministically`, () => {
      const h = hashes(program.source);
      expect(h.size).toBeGreaterThan(0);
      expect(hashes(program.source)).toEqual(h);
    });
  }

  it("apps/02-todomvc: renaming slot.draft and tile.TodoRow changes no hash", () => {
    const source = corpusProgram("apps/02-todomvc/app.kumiki")!.source;
    const before = hashes(source);
    const renamed = renameEverywhere(
      renameEverywhere(source, "slot.draft", "slot.newText"),
      "tile.TodoRow",
      "tile.Row",
    );
    expect(renamed).toContain("input(bind=newText");
    expect(renamed).toContain("Row(id) {key: id.show}");
    const after = hashes(renamed, (q) =>
      q === "slot.newText" ? "slot.draft" : q === "tile.Row" ? "tile.TodoRow" : q,
    );
    for (const [id, h] of before) expect(after.get(id), id).toBe(h);
  });
});

describe("renderDefinition", () => {
  it("keeps a shorthand field's name when the slot it reads is renamed", () => {
    const source = `slot todos : Int = 0
reducer r on=ui.click(B) do= emit save({todos, other=1})
reducer q on=ui.click(B) do= emit save({todos, key: "x"})
tile B = button(text="b")
effect save cap=storage.write in=Int out=Result(Unit, Text)
`;
    const renamed = renameEverywhere(source, "slot.todos", "slot.items");
    expect(renamed).toContain("emit save({todos=items, other=1})");
    expect(renamed).toContain('emit save({todos: items, key: "x"})');
    expect(hashes(renamed, (q) => (q === "slot.items" ? "slot.todos" : q))).toEqual(hashes(source));
  });
});
