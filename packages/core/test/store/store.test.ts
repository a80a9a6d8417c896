import { describe, expect, it } from "vitest";
import { createStore, openStore } from "../../src/integrity/checked-store.js";
import { checkStore } from "../../src/integrity/store-check.js";
import { defIdOf, type OpId } from "../../src/ops/ids.js";
import type { Op } from "../../src/ops/op.js";
import type { StoreResult } from "../../src/store/result.js";
import type { Store } from "../../src/store/store.js";
import type { WriteReceipt } from "../../src/store/store-types.js";
import type { WriteValidator } from "../../src/store/validate.js";

/** An op as JSON: its op-id, and fields the tests change. */
type OpJson = Record<string, unknown> & { "op-id": string };

import { TestLog } from "../ops/memory-log.js";

let clock = 1_779_884_546_000;
function newStore(
  log = new TestLog(),
  author = "agent:a",
  validators?: WriteValidator[],
): { store: Store; log: TestLog } {
  const r = openStore({
    log,
    author,
    now: () => clock++,
    ...(validators === undefined ? {} : { validators }),
  });
  if (!r.ok) throw new Error(r.error.message);
  return { store: r.value, log };
}

function okValue<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

async function must(p: Promise<StoreResult<WriteReceipt>>): Promise<WriteReceipt> {
  return okValue(await p);
}

function text(store: Store, selector: string): string {
  return okValue(store.view(selector)).text;
}

/** A store with a small todo program. */
async function todoStore(log?: TestLog) {
  const { store, log: l } = newStore(log);
  await must(store.add({ layer: "type", name: "TodoId", body: "nominal Text where uuid" }));
  await must(store.add({ layer: "type", name: "Todo", body: "{id: TodoId, text: Text, done: Bool}" }));
  await must(store.add({ layer: "slot", name: "todos", body: "Map(TodoId, Todo) = {}" }));
  await must(store.add({ layer: "slot", name: "draft", body: 'Text = ""' }));
  await must(store.add({ layer: "fn", name: "count", body: "(ts: Map(TodoId, Todo)) -> Int = ts.size" }));
  await must(store.add({ layer: "tile", name: "Input", body: "input(bind=draft)" }));
  await must(store.add({ layer: "tile", name: "Counter", body: "text(count(todos).show)" }));
  return { store, log: l };
}

/** Asserts a write was refused with `code` and left the log exactly as it was. */
async function refused(log: TestLog, p: Promise<StoreResult<WriteReceipt>>, code: string): Promise<string> {
  const before = JSON.stringify(log.all());
  const appends = log.appends;
  const r = await p;
  expect(r.ok, r.ok ? "accepted" : r.error.message).toBe(false);
  if (r.ok) return "";
  expect(r.error.code).toBe(code);
  expect(JSON.stringify(log.all())).toBe(before);
  expect(log.appends).toBe(appends);
  return r.error.message;
}

describe("opening", () => {
  it("createStore refuses a log that already holds ops; openStore folds it", async () => {
    const { log, store } = await todoStore();
    expect(createStore({ log, author: "agent:b" })).toMatchObject({
      ok: false,
      error: { code: "store-not-empty" },
    });
    const again = okValue(openStore({ log, author: "agent:b" }));
    expect(okValue(again.view("*.*")).text).toBe(okValue(store.view("*.*")).text);
  });

  it("refuses an author id that is not one", () => {
    expect(openStore({ log: new TestLog(), author: "agent one" })).toMatchObject({
      ok: false,
      error: { code: "invalid-author" },
    });
  });
});

describe("add", () => {
  it("takes the body forms a CLI user types, and stores the §9.3.2 wire format", async () => {
    const { store, log } = await todoStore();
    expect(text(store, "slot.todos")).toBe("slot todos : Map(TodoId, Todo) = {}\n");
    const op = log.all().find((o) => (o as Op).name === "todos") as Op & { op: "add" };
    expect(op).toMatchObject({
      op: "add",
      layer: "slot",
      name: "todos",
      body: " : Map(TodoId, Todo) = {}",
      author: "agent:a",
    });
    expect(op.def).toBe(defIdOf(op["op-id"]));
    expect(Object.keys(op.refs).sort()).toEqual(["type:Todo", "type:TodoId"]);
    expect(op["depends-on"]).toHaveLength(2);
    for (const d of op["depends-on"]) expect(d).toMatch(/^type:(Todo|TodoId)@h:[0-9a-f]{64}$/);
    expect(op["parent-ops"]).toHaveLength(1);
  });

  it("takes a whole source, comments included, and keeps it byte for byte", async () => {
    const { store } = newStore();
    const source = '# the draft of a new todo\nslot  draft:Text   = ""  # empty at first';
    await must(store.add({ source }));
    expect(text(store, "slot.draft")).toBe(`${source}\n`);
    expect(okValue(store.view("slot.draft")).definitions[0]?.source).toBe(source);
  });

  it("refuses a body that does not parse, with the position", async () => {
    const { store, log } = await todoStore();
    const message = await refused(
      log,
      store.add({ layer: "slot", name: "x", body: "Map(TodoId, Todo = {}" }),
      "parse-error",
    );
    expect(message).toMatch(/slot\.x does not parse at body:1, column \d+: /);
    const r = await store.add({ layer: "slot", name: "x", body: "Map(TodoId, Todo = {}" });
    expect(!r.ok && r.error.details).toMatchObject({ line: 1 });
  });

  it("refuses a reference to an undefined definition, naming the candidate layers and near names", async () => {
    const { store, log } = await todoStore();
    const message = await refused(
      log,
      store.add({ layer: "tile", name: "Bad", body: "input(bind=drafts)" }),
      "undefined-reference",
    );
    expect(message).toContain("drafts at body:1, column ");
    expect(message).toContain("no slot of that name");
    expect(message).toContain("did you mean draft");
    const r = await store.add({ layer: "tile", name: "Bad", body: "text(countt(todos).show)" });
    expect(!r.ok && r.error.details?.missing).toMatchObject([{ name: "countt", layers: ["fn"] }]);
  });

  it("refuses a duplicate name, an unknown layer, a bad or reserved name, and a mismatched source", async () => {
    const { store, log } = await todoStore();
    await refused(log, store.add({ layer: "slot", name: "draft", body: "Int = 0" }), "duplicate-name");
    await refused(log, store.add({ layer: "slots" as never, name: "x", body: "Int = 0" }), "invalid-layer");
    await refused(log, store.add({ layer: "slot", name: "1x", body: "Int = 0" }), "invalid-name");
    await refused(log, store.add({ layer: "slot", name: "type", body: "Int = 0" }), "invalid-name");
    await refused(
      log,
      store.add({ layer: "slot", name: "x", source: "slot y : Int = 0" }),
      "definition-mismatch",
    );
    await refused(
      log,
      store.add({ layer: "slot", name: "x", body: "Int = 0", source: "slot x : Int = 0" }),
      "invalid-input",
    );
    await refused(
      log,
      store.add({ layer: "slot", name: "x", body: "Int = 0\nslot y : Int = 1" }),
      "parse-error",
    );
    await refused(
      log,
      store.add({ layer: "slot", name: "x", body: "Int = 0", colour: "blue" } as never),
      "invalid-input",
    );
  });

  it("adds mutually recursive definitions together in one bundle", async () => {
    const { store, log } = await todoStore();
    await refused(
      log,
      store.add({ layer: "reducer", name: "clear", body: 'on=ui.click(ClearBtn) do= draft := ""' }),
      "undefined-reference",
    );
    const r = await must(
      store.apply([
        { op: "add", layer: "reducer", name: "clear", body: 'on=ui.click(ClearBtn) do= draft := ""' },
        { op: "add", layer: "tile", name: "ClearBtn", body: 'button(text="clear", onClick=clear)' },
      ]),
    );
    // The forward reference is bound by a link once ClearBtn exists: no op references what is not there.
    expect(r.ops.map((o) => o.op)).toEqual(["add", "add", "link"]);
    expect(r.ops[0]).toMatchObject({ refs: { "slot:draft": expect.any(String) } });
    expect(Object.keys((r.ops[0] as Op & { refs: object }).refs)).toEqual(["slot:draft"]);
    expect(r.ops[1]?.["parent-ops"]).toEqual([r.opIds[0]]);
    expect(r.ops[2]?.["parent-ops"]).toEqual([r.opIds[1]]);
    const h1 = okValue(store.hash("reducer.clear"));
    const h2 = okValue(store.hash("tile.ClearBtn"));
    expect(h1).not.toBe(h2);
    expect(okValue(store.refs("tile.ClearBtn")).referrers.map((x) => x.qname)).toEqual(["reducer.clear"]);
  });
});

describe("replace and edit", () => {
  it("replace sets the whole text, body or source", async () => {
    const { store } = await todoStore();
    await must(store.replace({ qname: "slot.draft", body: 'Text where len-lt(280) = ""' }));
    expect(text(store, "slot.draft")).toBe('slot draft : Text where len-lt(280) = ""\n');
    await must(store.replace({ qname: "slot.draft", source: 'slot draft : Text = "hi"' }));
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "hi"\n');
  });

  it("replace refuses a text that renames or parses badly, and an unknown target", async () => {
    const { store, log } = await todoStore();
    const m = await refused(
      log,
      store.replace({ qname: "slot.draft", source: 'slot other : Text = ""' }),
      "definition-mismatch",
    );
    expect(m).toContain("use rename");
    await refused(log, store.replace({ qname: "slot.draft", body: "Text = (" }), "parse-error");
    const nf = await refused(log, store.replace({ qname: "slot.drafts", body: 'Text = ""' }), "not-found");
    expect(nf).toContain("did you mean slot.draft");
    await refused(log, store.replace({ qname: "draft", body: 'Text = ""' }), "invalid-selector");
  });

  it("edit applies several anchors at once, all or nothing", async () => {
    const { store, log } = await todoStore();
    await must(
      store.edit({
        qname: "type.Todo",
        patch: [
          { find: "text: Text", replace: "title: Text" },
          { find: "done: Bool", replace: "done: Bool, due: Time" },
        ],
      }),
    );
    expect(text(store, "type.Todo")).toBe("type Todo = {id: TodoId, title: Text, done: Bool, due: Time}\n");
    await refused(
      log,
      store.edit({
        qname: "type.Todo",
        patch: [
          { find: "title", replace: "name" },
          { find: "nope", replace: "x" },
        ],
      }),
      "anchor-not-found",
    );
    expect(text(store, "type.Todo")).toBe("type Todo = {id: TodoId, title: Text, done: Bool, due: Time}\n");
  });

  it("edit refuses an anchor that matches nothing or twice, and tolerates trailing whitespace", async () => {
    const { store, log } = await todoStore();
    await must(
      store.add({
        layer: "reducer",
        name: "reset",
        body: 'on=app.start do=\n  draft := ""   \n  todos := {}',
      }),
    );
    const zero = await refused(
      log,
      store.edit({ qname: "reducer.reset", patch: [{ find: "items :=", replace: "x" }] }),
      "anchor-not-found",
    );
    expect(zero).toContain("matches nothing");
    const two = await refused(
      log,
      store.edit({ qname: "reducer.reset", patch: [{ find: " := ", replace: "x" }] }),
      "anchor-ambiguous",
    );
    expect(two).toContain("matches 2 times (lines 2, 3)");
    await must(
      store.edit({ qname: "reducer.reset", patch: [{ find: 'draft := ""\n', replace: 'draft := "y"\n' }] }),
    );
    expect(text(store, "reducer.reset")).toBe(
      'reducer reset on=app.start do=\n  draft := "y"\n  todos := {}\n',
    );
  });

  it("edit refuses a result that does not parse or references what is not defined", async () => {
    const { store, log } = await todoStore();
    await refused(
      log,
      store.edit({ qname: "tile.Input", patch: [{ find: "bind=draft)", replace: "bind=draft" }] }),
      "parse-error",
    );
    await refused(
      log,
      store.edit({ qname: "tile.Input", patch: [{ find: "draft", replace: "nothing" }] }),
      "undefined-reference",
    );
    await refused(
      log,
      store.edit({ qname: "tile.Input", patch: [{ find: "tile Input", replace: "tile Other" }] }),
      "definition-mismatch",
    );
  });
});

describe("rename", () => {
  it("keeps every hash, writes no op for dependents, and every dependent shows the new name", async () => {
    const { store, log } = await todoStore();
    const names = okValue(store.list()).map((e) => e.qname);
    const before = new Map(names.map((q) => [q, okValue(store.hash(q))]));
    const ops = log.all().length;
    await must(store.rename({ qname: "slot.draft", newName: "scratch" }));
    await must(store.rename({ qname: "type.TodoId", newName: "Key" }));
    expect(log.all().length).toBe(ops + 2);
    expect(text(store, "tile.Input")).toBe("tile Input = input(bind=scratch)\n");
    expect(text(store, "slot.todos")).toBe("slot todos : Map(Key, Todo) = {}\n");
    expect(text(store, "type.Todo")).toBe("type Todo = {id: Key, text: Text, done: Bool}\n");
    expect(text(store, "fn.count")).toBe("fn count(ts: Map(Key, Todo)) -> Int = ts.size\n");
    const renamed = (q: string) =>
      q === "slot.draft" ? "slot.scratch" : q === "type.TodoId" ? "type.Key" : q;
    for (const [q, h] of before) expect(okValue(store.hash(renamed(q))), q).toBe(h);
    expect(store.view("slot.draft")).toMatchObject({ ok: false, error: { code: "not-found" } });
  });

  it("edits written against the shown text work after a rename", async () => {
    const { store } = await todoStore();
    await must(store.rename({ qname: "slot.draft", newName: "scratch" }));
    await must(
      store.edit({
        qname: "tile.Input",
        patch: [{ find: "input(bind=scratch)", replace: "column(input(bind=scratch))" }],
      }),
    );
    expect(text(store, "tile.Input")).toBe("tile Input = column(input(bind=scratch))\n");
  });

  it("refuses a taken name, a bad name, the same name, and a name that would read as another definition", async () => {
    const { store, log } = await todoStore();
    await refused(log, store.rename({ qname: "slot.draft", newName: "todos" }), "duplicate-name");
    await refused(log, store.rename({ qname: "slot.draft", newName: "let" }), "invalid-name");
    await refused(log, store.rename({ qname: "slot.draft", newName: "draft" }), "no-change");
    await must(store.add({ layer: "fn", name: "double", body: "(x: Int) -> Int = x * 2" }));
    await must(
      store.add({ layer: "fn", name: "doubled", body: "(xs: List(Int)) -> List(Int) = xs.map(double)" }),
    );
    // A bare name prefers a slot: shown as `xs.map(draft)`, the text would read as slot.draft.
    const slot = await refused(
      log,
      store.rename({ qname: "fn.double", newName: "draft" }),
      "projection-mismatch",
    );
    expect(slot).toContain("fn.doubled");
    // `xs` is doubled's parameter: shown as `xs.map(xs)`, the reference would read as the parameter.
    await refused(log, store.rename({ qname: "fn.double", newName: "xs" }), "projection-mismatch");
    await must(store.rename({ qname: "fn.double", newName: "twice" }));
    expect(text(store, "fn.doubled")).toBe("fn doubled(xs: List(Int)) -> List(Int) = xs.map(twice)\n");
  });
});

describe("remove", () => {
  it("is refused while referenced, listing every referrer with its line and the count by layer", async () => {
    const { store, log } = await todoStore();
    await must(
      store.add({
        layer: "reducer",
        name: "submitNew",
        body: 'on=app.start do=\n  draft := ""',
      }),
    );
    const m = await refused(log, store.remove({ qname: "slot.draft" }), "referenced");
    expect(m).toBe(
      "cannot remove slot.draft (referenced by 1 reducer, 1 tile)\n  reducer.submitNew:2\n  tile.Input:1\nremove it with cascade to remove all dependents too, or with force to leave their references dangling",
    );
    const r = await store.remove({ qname: "slot.draft" });
    expect(!r.ok && r.error.details?.byLayer).toEqual({ tile: 1, reducer: 1 });
  });

  it("removes what nothing references; history still shows it, across its renames", async () => {
    const { store } = await todoStore();
    await must(store.rename({ qname: "tile.Counter", newName: "Total" }));
    const rm = await must(store.remove({ qname: "tile.Total" }));
    expect(store.view("tile.Total")).toMatchObject({ ok: false, error: { code: "not-found" } });
    expect(okValue(store.list("tile")).map((e) => e.name)).toEqual(["Input"]);
    for (const q of ["tile.Counter", "tile.Total"]) {
      const [h] = okValue(store.history(q));
      expect(h).toMatchObject({ alive: false, names: ["Counter", "Total"] });
      expect(h?.entries.map((e) => [e.op, e.status])).toEqual([
        ["add", "applied"],
        ["rename", "applied"],
        ["remove", "applied"],
      ]);
      expect(h?.entries[2]?.opId).toBe(rm.opIds[0]);
    }
  });
});

describe("revert", () => {
  it("revert of a remove brings the definition back, and reverting that removes it again", async () => {
    const { store, log } = await todoStore();
    const counter = okValue(store.view("tile.Counter")).text;
    const rm = await must(store.remove({ qname: "tile.Counter" }));
    const back = await must(store.revert(rm.opIds[0]!));
    expect(back.ops[0]).toMatchObject({ op: "replace", reverts: rm.opIds[0] });
    expect(text(store, "tile.Counter")).toBe(counter);
    const again = await must(store.revert(back.opIds[0]!));
    expect(again.ops[0]).toMatchObject({ op: "remove", reverts: back.opIds[0] });
    expect(store.view("tile.Counter")).toMatchObject({ ok: false });
    // The first remove is no longer what removed it.
    await refused(log, store.revert(rm.opIds[0]!), "revert-diverged");
    await refused(log, store.revert(back.opIds[0]!), "not-revertable");
  });

  it("revert of a replace or an edit restores the text before it; of a rename, the name before it", async () => {
    const { store } = await todoStore();
    const r = await must(store.replace({ qname: "slot.draft", body: 'Text = "x"' }));
    const e = await must(store.edit({ qname: "slot.draft", patch: [{ find: '"x"', replace: '"y"' }] }));
    const undo = await must(store.revert(e.opIds[0]!));
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "x"\n');
    const redo = await must(store.revert(undo.opIds[0]!));
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "y"\n');
    await must(store.revert(redo.opIds[0]!));
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "x"\n');
    // Reverting the first replace now would undo the later changes too: refused.
    expect((await store.revert(r.opIds[0]!)).ok).toBe(false);
    const rn = await must(store.rename({ qname: "slot.draft", newName: "scratch" }));
    await must(store.revert(rn.opIds[0]!));
    expect(okValue(store.list("slot")).map((x) => x.name)).toEqual(["draft", "todos"]);
  });

  it("refuses when the definition changed since, or the op is unknown", async () => {
    const { store, log } = await todoStore();
    const r = await must(store.replace({ qname: "slot.draft", body: 'Text = "x"' }));
    await must(store.replace({ qname: "slot.draft", body: 'Text = "z"' }));
    const m = await refused(log, store.revert(r.opIds[0]!), "revert-diverged");
    expect(m).toContain("changed since");
    await refused(log, store.revert(`op_${"0".repeat(26)}`), "unknown-op");
    await refused(log, store.revert("op_nope"), "invalid-op-id");
  });

  it("refuses to revert an add that is still referenced", async () => {
    const { store, log } = await todoStore();
    const add = log.all().find((o) => (o as Op).name === "draft") as Op;
    await refused(log, store.revert(add["op-id"]), "referenced");
  });
});

describe("link and unlink", () => {
  it("link points a shown reference at another definition of its layer; unlink of a live binding is refused", async () => {
    const { store, log } = await todoStore();
    await must(store.add({ layer: "slot", name: "scratch", body: 'Text = "s"' }));
    const before = okValue(store.hash("tile.Input"));
    await must(store.link({ qname: "tile.Input", ref: "slot:draft", to: "slot.scratch" }));
    expect(text(store, "tile.Input")).toBe("tile Input = input(bind=scratch)\n");
    expect(okValue(store.hash("tile.Input"))).not.toBe(before);
    expect(okValue(store.refs("slot.draft")).referrers).toEqual([]);
    await refused(
      log,
      store.link({ qname: "tile.Input", ref: "slot:scratch", to: "slot.scratch" }),
      "no-change",
    );
    await refused(
      log,
      store.link({ qname: "tile.Input", ref: "slot:nothing", to: "slot.scratch" }),
      "ref-not-in-text",
    );
    await refused(
      log,
      store.link({ qname: "tile.Input", ref: "slot:scratch", to: "type.Todo" }),
      "invalid-ref",
    );
    await refused(log, store.link({ qname: "tile.Input", ref: "scratch", to: "slot.draft" }), "invalid-ref");
    // Unbinding a live reference would leave it pointing at nothing: a new error.
    await refused(log, store.unlink({ qname: "tile.Input", ref: "slot:scratch" }), "undefined-reference");
  });
});

describe("bundles", () => {
  it("are all or nothing: one bad item refuses every item", async () => {
    const { store, log } = await todoStore();
    const m = await refused(
      log,
      store.apply({
        ops: [
          { op: "add", layer: "slot", name: "a", body: "Int = 0" },
          { op: "rename", qname: "slot.a", newName: "b" },
          { op: "add", layer: "slot", name: "c", body: "Int = (" },
        ],
      }),
      "parse-error",
    );
    expect(m).toMatch(/^bundle item 3 \(add\): /);
    expect(store.view("slot.a")).toMatchObject({ ok: false });
    await refused(log, store.apply([]), "bundle-empty");
    // Not a kind: refused by the type, and at run time for what a JSON file holds.
    await refused(log, store.apply([{ op: "merge", qname: "x" }] as never), "invalid-input");
  });

  it("a malformed bundle is refused naming the item and the field (was: '(input): Invalid input')", async () => {
    const { store, log } = await todoStore();
    const good = { op: "add", layer: "slot", name: "a", body: "Int = 0" };
    for (const [bundle, says] of [
      [42, /give \{"ops": \[item, …\]\} or the array of items, not number/],
      [{ items: [] }, /not an object without ops/],
      [[good, { op: "add", layer: 3 }], /^invalid bundle: item 2 \(add\): layer: /],
      [{ ops: [good, { op: "add", layer: 3 }] }, /^invalid bundle: item 2 \(add\): layer: /],
      [
        [{ op: "frob" }],
        /^invalid bundle: item 1: "op" must be one of add, replace, edit, rename, remove, link, unlink \(got "frob"\)$/,
      ],
      [
        [{ op: "replace", qname: "slot.a", bdy: "x" }],
        /^invalid bundle: item 1 \(replace\): unknown field "bdy"$/,
      ],
    ] as const) {
      // Malformed on purpose: what a JSON file may hold, cast as a caller casts JSON.
      const m = await refused(log, store.apply(bundle as never), "invalid-input");
      expect(m).toMatch(says);
      expect(m).not.toContain("(input)");
    }
  });

  it("see the items before them", async () => {
    const { store } = await todoStore();
    await must(
      store.apply([
        { op: "add", layer: "slot", name: "a", body: "Int = 0" },
        { op: "rename", qname: "slot.a", newName: "b" },
        { op: "add", layer: "tile", name: "B", body: "text(b.show)" },
        { op: "remove", qname: "tile.Counter" },
      ]),
    );
    expect(text(store, "tile.B")).toBe("tile B = text(b.show)\n");
    expect(okValue(store.list("tile")).map((x) => x.name)).toEqual(["B", "Input"]);
  });
});

describe("ops from elsewhere (ingest)", () => {
  async function withOp(mutate: (op: Record<string, unknown>) => void, code: string) {
    const { store, log } = await todoStore();
    const other = newStore(new TestLog(), "agent:b");
    for (const op of log.all()) other.log.deliver([op]);
    await new Promise((r) => setTimeout(r, 0));
    const written = await must(other.store.add({ layer: "slot", name: "extra", body: "Int = 1" }));
    const op = JSON.parse(JSON.stringify(written.ops[0])) as OpJson;
    mutate(op);
    return refused(log, store.ingest([op]), code);
  }

  it("accept a well-formed op and refuse malformed ones, each with its own code, changing nothing", async () => {
    await withOp((o) => {
      delete o.author;
    }, "invalid-op");
    await withOp((o) => {
      o.op = "merge";
    }, "unknown-op-kind");
    await withOp((o) => {
      o["op-id"] = "op_123";
    }, "invalid-op-id");
    // A text that does not parse binds nothing: an op that says it binds something is malformed.
    const { store: held } = await todoStore();
    const types = held.list("type");
    const todoId = types.ok ? types.value.find((e) => e.name === "TodoId")?.def : undefined;
    expect(todoId).toBeDefined();
    await withOp((o) => {
      o.body = " : Map(TodoId = {}";
      o.refs = { "type:TodoId": todoId };
    }, "parse-error");
    await withOp((o) => {
      o.body = " : Map(TodoId, Todo) = {}";
      o.refs = { "type:TodoId": `def_${"7".repeat(26)}`, "type:Todo": `def_${"7".repeat(26)}` };
    }, "undefined-reference");
    await withOp((o) => {
      o["parent-ops"] = [`op_${"7".repeat(26)}`];
    }, "unknown-parent");
    await withOp((o) => {
      o.op = "replace";
      o.def = `def_${"7".repeat(26)}`;
    }, "unknown-definition");
  });

  it("hold a replica's text that does not parse, or a reference bound to nothing, as a faithful import does", async () => {
    for (const [body, code] of [
      [" : Map(TodoId = {}", "E0008"],
      [" : Map(Nowhere, Int) = {}", "E0117"],
    ] as const) {
      const { store, log } = await todoStore();
      const other = newStore(new TestLog(), "agent:b");
      other.log.deliver(log.all());
      await new Promise((r) => setTimeout(r, 0));
      const w = await must(other.store.add({ layer: "slot", name: "extra", body: "Int = 1" }));
      const op = { ...(JSON.parse(JSON.stringify(w.ops[0])) as OpJson), body, refs: {} };
      await must(store.ingest([op]));
      expect(text(store, "slot.extra")).toBe(`slot extra${body}\n`);
      const found = checkStore(store, { requireApp: false }).diagnostics.filter((d) =>
        d.location.startsWith("slot.extra"),
      );
      expect(found.map((d) => d.code)).toEqual([code]);
    }
  });

  it("take a peer's ops and show them", async () => {
    const { store, log } = await todoStore();
    const other = newStore(new TestLog(), "agent:b");
    other.log.deliver(log.all());
    await new Promise((r) => setTimeout(r, 0));
    const w = await must(other.store.add({ layer: "slot", name: "extra", body: "Int = 1" }));
    const r = await must(store.ingest(w.ops));
    expect(r.opIds).toEqual(w.opIds);
    expect(text(store, "slot.extra")).toBe("slot extra : Int = 1\n");
    // Again: nothing new.
    expect(okValue(await store.ingest(w.ops)).opIds).toEqual([]);
  });

  it("refuse an op that reuses a held op-id with other content (a forged rewrite), naming the fields", async () => {
    const { store, log } = await todoStore();
    const held = JSON.parse(JSON.stringify(log.all()[0])) as OpJson;
    const forged = { ...held, body: `${String(held.body)} ` };
    const message = await refused(log, store.ingest([forged]), "op-id-reused");
    expect(message).toContain(`${String(held["op-id"])} is already held with other content (body differ)`);
    // Twice in one batch, with different content: refused as well; the same op twice is fine.
    const other = newStore(new TestLog(), "agent:b");
    other.log.deliver(log.all());
    await new Promise((res) => setTimeout(res, 0));
    const w = await must(other.store.add({ layer: "slot", name: "extra", body: "Int = 1" }));
    const op = JSON.parse(JSON.stringify(w.ops[0])) as OpJson;
    await refused(log, store.ingest([op, { ...op, ts: Number(op.ts) + 1 }]), "op-id-reused");
    expect(okValue(await store.ingest([op, op])).opIds).toEqual([op["op-id"]]);
  });
});

describe("the write gate", () => {
  it("runs plugged-in validators after the built-in one, with the graph before and after", async () => {
    const seen: string[] = [];
    const noTodo: WriteValidator = {
      validate: ({ before, after, touched }) => {
        seen.push(`${before.definitions().length}->${after.definitions().length}:${touched.length}`);
        return after.program().includes("TODO")
          ? [{ code: "validation-failed", message: "no TODO in programs" }]
          : [];
      },
    };
    const { store, log } = newStore(new TestLog(), "agent:a", [noTodo]);
    await must(store.add({ layer: "slot", name: "a", body: "Int = 0" }));
    await refused(log, store.add({ layer: "slot", name: "b", body: 'Text = "TODO"' }), "validation-failed");
    expect(seen).toEqual(["0->1:1", "1->2:1"]);
  });

  it("a write that fails to be stored is reported and changes nothing", async () => {
    const { store, log } = await todoStore();
    log.failNext = new Error("disk full");
    const before = text(store, "*.*");
    const m = await refused(log, store.add({ layer: "slot", name: "x", body: "Int = 0" }), "storage-failed");
    expect(m).toContain("disk full");
    expect(text(store, "*.*")).toBe(before);
    await must(store.add({ layer: "slot", name: "x", body: "Int = 0" }));
  });

  it("a closed store refuses writes", async () => {
    const { store, log } = await todoStore();
    await store.close();
    await refused(log, store.add({ layer: "slot", name: "x", body: "Int = 0" }), "store-closed");
  });
});

describe("reads", () => {
  it("view takes one name, a pattern, or an identity; with deps, what it references after it", async () => {
    const { store } = await todoStore();
    expect(okValue(store.view("tile.*")).definitions.map((d) => d.qname)).toEqual([
      "tile.Counter",
      "tile.Input",
    ]);
    expect(okValue(store.view("type.Todo*")).definitions.map((d) => d.qname)).toEqual([
      "type.Todo",
      "type.TodoId",
    ]);
    expect(okValue(store.view("*.draft")).definitions.map((d) => d.qname)).toEqual(["slot.draft"]);
    expect(okValue(store.view("tile.Counter", { withDeps: true })).definitions.map((d) => d.qname)).toEqual([
      "tile.Counter",
      "type.Todo",
      "type.TodoId",
      "slot.todos",
      "fn.count",
    ]);
    const id = okValue(store.view("slot.todos")).definitions[0]!.def;
    expect(okValue(store.view(id)).text).toBe(text(store, "slot.todos"));
    expect(store.view("slots.x")).toMatchObject({ ok: false, error: { code: "invalid-selector" } });
    expect(okValue(store.view("tile.Nothing*")).definitions).toEqual([]);
  });

  it("list, refs and hash", async () => {
    const { store } = await todoStore();
    expect(okValue(store.list("slot")).map((e) => e.qname)).toEqual(["slot.draft", "slot.todos"]);
    expect(okValue(store.list()).map((e) => e.qname)).toEqual([
      "type.Todo",
      "type.TodoId",
      "slot.draft",
      "slot.todos",
      "tile.Counter",
      "tile.Input",
      "fn.count",
    ]);
    // Not a layer: refused by the type, and at run time for what a person typed (cast as an edge casts it).
    expect(store.list("slots" as never)).toMatchObject({ ok: false, error: { code: "invalid-layer" } });
    expect(okValue(store.refs("type.TodoId"))).toMatchObject({
      referrers: [
        { qname: "type.Todo", lines: [1] },
        { qname: "slot.todos", lines: [1] },
        { qname: "fn.count", lines: [1] },
      ],
      byLayer: { type: 1, slot: 1, fn: 1 },
    });
    expect(okValue(store.hash("slot.todos"))).toMatch(/^h:[0-9a-f]{64}$/);
  });

  it("status says where the store stands", async () => {
    const { store } = await todoStore();
    expect(store.status()).toMatchObject({
      ops: 7,
      pending: 0,
      definitions: 7,
      conflicts: 0,
      author: "agent:a",
    });
    expect(store.status().heads).toHaveLength(1);
  });
});

describe("concurrent writers", () => {
  async function pair() {
    const a = await todoStore();
    const b = newStore(new TestLog(), "agent:b");
    b.log.deliver(a.log.all());
    await new Promise((r) => setTimeout(r, 0));
    const exchange = async () => {
      const fromA = a.log.all();
      const fromB = b.log.all();
      a.log.deliver(fromB);
      b.log.deliver(fromA);
      await new Promise((r) => setTimeout(r, 0));
    };
    return { a: a.store, b: b.store, exchange };
  }

  it("a same-name add: the greater op-id shows; the loser is a conflict, recoverable by renaming it", async () => {
    const { a, b, exchange } = await pair();
    const wa = await must(a.add({ layer: "slot", name: "x", body: "Int = 1" }));
    const wb = await must(b.add({ layer: "slot", name: "x", body: "Int = 2" }));
    await exchange();
    expect(text(a, "slot.x")).toBe(text(b, "slot.x"));
    const [winner, loser] = wa.opIds[0]! > wb.opIds[0]! ? [wa, wb] : [wb, wa];
    expect(okValue(a.view("slot.x")).definitions[0]?.def).toBe(defIdOf(winner.opIds[0]!));
    const conflicts = a.conflicts();
    expect(conflicts).toEqual(b.conflicts());
    expect(conflicts).toMatchObject([
      { kind: "name-taken", definitions: [defIdOf(loser.opIds[0]!), defIdOf(winner.opIds[0]!)] },
    ]);
    const loserId = defIdOf(loser.opIds[0]!);
    expect(okValue(a.view(loserId)).definitions[0]).toMatchObject({ alive: true, visible: false });
    await must(a.rename({ qname: loserId, newName: "x2" }));
    await exchange();
    expect(a.conflicts()).toEqual([]);
    expect(b.conflicts()).toEqual([]);
    expect(okValue(b.list("slot")).map((e) => e.name)).toEqual(["draft", "todos", "x", "x2"]);
  });

  it("remove vs a concurrent reference: strict policy rolls both back, on both replicas, and says how to retry", async () => {
    const { a, b, exchange } = await pair();
    await must(a.add({ layer: "slot", name: "note", body: 'Text = ""' }));
    await exchange();
    const rm = await must(a.remove({ qname: "slot.note" }));
    const add = await must(b.add({ layer: "tile", name: "NewForm", body: "input(bind=note)" }));
    await exchange();
    for (const s of [a, b]) {
      expect(text(s, "slot.note")).toBe('slot note : Text = ""\n');
      expect(s.view("tile.NewForm")).toMatchObject({ ok: false });
      expect(
        s
          .conflicts()
          .map((c) => c.id)
          .sort(),
      ).toEqual([`rolled-back:${add.opIds[0]}`, `rolled-back:${rm.opIds[0]}`].sort());
    }
    const [h] = okValue(b.history("tile.NewForm"));
    expect(h?.entries).toMatchObject([
      { op: "add", status: "rolled-back", conflict: `rolled-back:${add.opIds[0]}` },
    ]);
    // Retry on the latest graph: it works now that the note is back.
    await must(b.add({ layer: "tile", name: "NewForm", body: "input(bind=note)" }));
  });

  it("an edit concurrent with a replace is rebased when its anchor still matches, else a recorded conflict", async () => {
    const { a, b, exchange } = await pair();
    await must(a.replace({ qname: "tile.Counter", body: "column(text(count(todos).show))" }));
    await must(b.edit({ qname: "tile.Counter", patch: [{ find: ".show", replace: ".show.upper" }] }));
    await exchange();
    expect(text(a, "tile.Counter")).toBe("tile Counter = column(text(count(todos).show.upper))\n");
    expect(text(b, "tile.Counter")).toBe(text(a, "tile.Counter"));
    await must(a.replace({ qname: "tile.Input", body: "textarea(bind=draft)" }));
    const e = await must(
      b.edit({
        qname: "tile.Input",
        patch: [
          { find: "input(", replace: "column(input(" },
          { find: "draft)", replace: "draft))" },
        ],
      }),
    );
    await exchange();
    expect(text(a, "tile.Input")).toBe("tile Input = textarea(bind=draft)\n");
    const [c, ...rest] = a.conflicts();
    expect(rest).toEqual([]);
    expect(c).toMatchObject({ kind: "edit-rebase-failed" });
    expect(c?.ops[0]).toBe(e.opIds[0] as OpId);
    expect(b.conflicts()).toEqual(a.conflicts());
  });
});
