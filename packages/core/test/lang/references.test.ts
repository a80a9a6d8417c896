import { corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import type { Definition, Program } from "../../src/lang/ast.js";
import type { Layer } from "../../src/lang/layers.js";
import { parseDefinition, parseProgram } from "../../src/lang/parser.js";
import {
  REFERENCE_ROLES,
  type ReferenceRole,
  type ReferenceSite,
  referenceSites,
} from "../../src/lang/references.js";

function program(source: string): Program {
  const r = parseProgram(source);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

function sitesOf(source: string): ReferenceSite[] {
  const r = parseDefinition(source);
  if (!r.ok) throw new Error(r.error.message);
  return referenceSites(r.value);
}

/** `name role layers` per site, in order. */
function brief(source: string): string[] {
  return sitesOf(source).map((s) => `${s.name} ${s.role} ${s.layers.join("|")}`);
}

function names(source: string): string[] {
  return sitesOf(source).map((s) => s.name);
}

/** The layer a site resolves to among the definitions there are (first candidate layer defined). */
function resolve(site: ReferenceSite, defs: readonly Definition[]): Layer | undefined {
  return site.layers.find((layer) => defs.some((d) => d.layer === layer && d.name.name === site.name));
}

/** Who refers to `layer.name`: the referring definition, the line and the role of each site. */
function referrers(p: Program, layer: Layer, name: string): string[] {
  const out: string[] = [];
  for (const def of p.definitions) {
    for (const site of referenceSites(def)) {
      if (site.name === name && resolve(site, p.definitions) === layer) {
        out.push(`${def.layer}.${def.name.name}:${site.span.line} ${site.role}`);
      }
    }
  }
  return out;
}

describe.skipIf(!hasCorpus)("references in apps/02-todomvc", () => {
  const source = corpusProgram("apps/02-todomvc/app.kumiki")?.source ?? "";
  const p = hasCorpus ? program(source) : undefined;

  it("slot.draft is read and written by addTodo and bound by NewTodoForm", () => {
    expect(referrers(p!, "slot", "draft")).toEqual([
      "reducer.addTodo:60 expr",
      "reducer.addTodo:61 assign",
      "tile.NewTodoForm:115 bind",
    ]);
  });

  it("tile.TodoRow is selected by toggle and rendered by TodoList", () => {
    expect(referrers(p!, "tile", "TodoRow")).toEqual([
      "reducer.toggle:65 selector",
      "tile.TodoList:110 tile",
    ]);
  });

  it("spans point at the names as written", () => {
    for (const def of p!.definitions) {
      for (const site of referenceSites(def)) {
        expect(source.slice(site.span.offset, site.span.end)).toBe(site.name);
      }
    }
  });

  it("every site of the program resolves, except variants and standard effects", () => {
    const unresolved = new Set<string>();
    for (const def of p!.definitions) {
      for (const site of referenceSites(def)) {
        if (resolve(site, p!.definitions) === undefined) unresolved.add(`${site.name} ${site.role}`);
      }
    }
    expect([...unresolved].sort()).toEqual(["Active variant", "All variant", "Done variant"]);
  });
});

describe("reference roles", () => {
  const examples: [ReferenceRole, string, string][] = [
    ["expr", "fn f(x: Int) -> Int = x + limit", "limit expr slot|fn"],
    ["shorthand", "slot s : R = {todos}", "todos shorthand slot|fn"],
    ["variant", "slot f : Filter = All", "All variant slot|fn"],
    ["call", "fn f(x: Int) -> Int = double(x)", "double call fn"],
    ["assign", "reducer r on=app.start do= todos[1].done := true", "todos assign slot"],
    ["bind", "tile T = input(bind=draft.title)", "draft bind slot"],
    ["emit", "reducer r on=app.start do= emit saveTodos(1)", "saveTodos emit effect"],
    ["effect-event", "reducer r on=loadTodos.ok($m, _) do= ()", "loadTodos effect-event effect"],
    ["selector", "reducer r on=ui.submit(NewForm#new) do= ()", "NewForm selector tile"],
    ["handler", 'tile T = button(text="x", onClick=toggle)', "toggle handler reducer"],
    ["route", 'app A\n  routes = {"/" -> Home}', "Home route tile"],
    ["type", "slot s : Map(TodoId, Todo) = {}", "TodoId type type"],
    ["tile", "tile T = column(TodoRow(1))", "TodoRow tile tile"],
    ["theme", "app A\n  theme = DefaultTheme", "DefaultTheme theme theme|slot"],
    ["motion", 'tile T = box(text("x")) {motion: "Spin"}', "Spin motion motion"],
    ["test-target", "test t = reducer-test inc given = {} expect = {}", "inc test-target reducer"],
    [
      "test-slot",
      "test t = reducer-test inc given = {slots: {count: 0}} expect = {}",
      "count test-slot slot",
    ],
    [
      "test-mock",
      "test t = reducer-test inc given = {mocks: {persist: err(1)}} expect = {}",
      "persist test-mock effect",
    ],
  ];

  for (const [role, source, expected] of examples) {
    it(`${role}: ${source.replace(/\n/g, " ")}`, () => {
      expect(brief(source)).toContain(expected);
      expect(sitesOf(source).some((s) => s.role === role)).toBe(true);
    });
  }

  it("are all exemplified above", () => {
    expect(new Set(examples.map(([role]) => role))).toEqual(new Set(REFERENCE_ROLES));
  });
});

describe("reference sites", () => {
  it("cover every position of a reducer, in source order", () => {
    expect(
      brief(`reducer add on=ui.submit(Form) do= let id = TodoId.fresh()
        todos[id] := {id, text=draft, done=false, at=now}
        emit confirm({title: "?", onYes: yes, onNo: no})
        emit saveTodos(todos)`),
    ).toEqual([
      "Form selector tile",
      "TodoId type type",
      "todos assign slot",
      "draft expr slot|fn",
      "confirm emit effect",
      "yes handler reducer",
      "no handler reducer",
      "saveTodos emit effect",
      "todos expr slot|fn",
    ]);
  });

  it("cover every position of a tile", () => {
    expect(
      brief(`tile Row
    in=TodoId
    sub-routes = {"/a" -> A, "/b" ->> "/a"}
    error-boundary = Oops
    = row(
        check(value=todos[$1].done, onClick=toggle) {todoId: $1},
        RemoveBtn {todoId: $1, onClick: remove},
        panel(settingsForm),
        link(to="/x") {prefetch: loadTodo, text: label(1)},
        for id in ids(todos) when(ok(id), Item(id) {key: id.show}),
        Badge)`),
    ).toEqual([
      "TodoId type type",
      "A route tile",
      "Oops tile tile",
      "todos expr slot|fn",
      "toggle handler reducer",
      "RemoveBtn tile tile",
      "remove handler reducer",
      "settingsForm tile tile|slot|fn",
      "loadTodo handler reducer",
      "label call fn",
      "ids call fn",
      "todos expr slot|fn",
      "ok call fn",
      "Item tile tile",
      "Badge tile tile",
    ]);
  });

  it("cover an app's routes, init effects, theme and http reducers", () => {
    expect(
      brief(`app A
    caps = [storage.read]
    routes = {"/" -> Home, "/old" ->> "/", "/404" -> NotFound}
    init = [loadTodos(), loadUser(session)]
    theme = themeName
    http = {base-url: baseUrl, on-401: relogin}
    meta = {title: "T"}`),
    ).toEqual([
      "Home route tile",
      "NotFound route tile",
      "loadTodos emit effect",
      "loadUser emit effect",
      "session expr slot|fn",
      "themeName theme theme|slot",
      "baseUrl expr slot|fn",
      "relogin handler reducer",
    ]);
  });

  it("cover test sections: targets, slots, events, mocks, expected effects and wildcards", () => {
    expect(
      brief(`test t =
    reducer-test addItem
        given  = {slots: {items: {}, draft: seed}, event: {type: ui.submit, target: AddForm, el: {id: 1}},
                  mocks: {persist: err("disk full"), load: delay(10, ok(fixture))}}
        expect = {slots: {items: {<any-id>: {label: "x"}}}, effects: [persist(<slots.items>)]}`),
    ).toEqual([
      "addItem test-target reducer",
      "items test-slot slot",
      "draft test-slot slot",
      "seed expr slot|fn",
      "AddForm selector tile",
      "persist test-mock effect",
      "load test-mock effect",
      "fixture expr slot|fn",
      "items test-slot slot",
      "persist emit effect",
      "items test-slot slot",
    ]);
    expect(
      brief(
        'test t = tile-test App given = {slots: {count: 5}, in: "Ada"} expect = column(Row, heading("x"))',
      ),
    ).toEqual(["App test-target tile", "count test-slot slot", "Row tile tile"]);
    expect(
      brief(`test p = property-test
        for-all = {count: Count}
        given = {slots: {count: count}, event: {type: ui.click, target: IncBtn}}
        invariant = run-reducer(inc).run-reducer(dec).slots.count == count`),
    ).toEqual([
      "Count type type",
      "count test-slot slot",
      "IncBtn selector tile",
      "inc handler reducer",
      "dec handler reducer",
    ]);
    expect(
      brief(
        'test e = episode-test load = "x.jsonl" mocks = {loadUser: from-log, persist: ignore} expect = {slots-equal: from-log}',
      ),
    ).toEqual(["loadUser test-mock effect", "persist test-mock effect"]);
  });

  it("cover types, effects and event patterns", () => {
    expect(brief("type LR(T) = Idle | Loaded(T) | Failed(HttpError) | Pair(Map(K, List(Todo)))")).toEqual([
      "HttpError type type",
      "K type type",
      "Todo type type",
    ]);
    expect(
      brief(`effect load cap=storage.read in=Unit out=Result(Option(Todos), Text)
        policy=latest-per-key($1.id)
        map-request={key: keyOf($1), decode: Decoder.Json(Map(TodoId, Todo))}`),
    ).toEqual(["Todos type type", "keyOf call fn", "TodoId type type", "Todo type type"]);
    expect(brief("reducer r on=tile.mount(Panel) do= n := n + 1")).toEqual([
      "Panel selector tile",
      "n assign slot",
      "n expr slot|fn",
    ]);
    expect(brief('reducer r on=route.enter("/p/:id") do= id := $route.params.get-or("id", "")')).toEqual([
      "id assign slot",
    ]);
  });

  it("give a name held in a string the span of the string's contents", () => {
    const source = 'tile T = box(x) {motion: "Spin"}';
    const [motion] = sitesOf(source).filter((s) => s.role === "motion");
    expect(motion?.name).toBe("Spin");
    expect(source.slice(motion!.span.offset, motion!.span.end)).toBe("Spin");
    expect(motion?.span.column).toBe(source.indexOf("Spin") + 1);
  });

  it("report the definition's own name only when it is referenced (a self-reference)", () => {
    expect(names("fn f(n: Int) -> Int = if n == 0 then 1 else f(n - 1)")).toEqual(["f"]);
    expect(names("slot s : Int = 0")).toEqual([]);
  });
});

describe("what is not a reference", () => {
  it("a let shadows a slot of its name for the statements after it, in its own list only", () => {
    expect(
      brief(`reducer r on=app.start do= x := id
        let id = 1
        y := id
        if c then { let z = 2; w := z } else w := z`),
    ).toEqual([
      "x assign slot",
      "id expr slot|fn",
      "y assign slot",
      "c expr slot|fn",
      "w assign slot",
      "w assign slot",
      "z expr slot|fn",
    ]);
    expect(names("fn f() -> Int = (let id = 1 in id) + id")).toEqual(["id"]);
  });

  it("a for variable shadows inside the loop only", () => {
    expect(names("tile T = column(for id in ids TodoRow(id) {key: id.show}, text(id))")).toEqual([
      "ids",
      "TodoRow",
      "id",
    ]);
    expect(names("reducer r on=app.start do= for k in keys { m[k] := k }\n  n := k")).toEqual([
      "keys",
      "m",
      "n",
      "k",
    ]);
  });

  it("match-pattern binds shadow inside their arm only, and patterns name no definitions", () => {
    expect(
      brief(
        "fn f(x: Option(Int)) -> Int = match x with | Some(v) -> v + w | Loaded(v) -> 1 | (a, b) -> a | _ -> v",
      ),
    ).toEqual(["w expr slot|fn", "v expr slot|fn"]);
    expect(names("reducer r on=app.start do= match s with | Some(p) -> x := p | None -> x := p")).toEqual([
      "s",
      "x",
      "x",
      "p",
    ]);
  });

  it("fn parameters, $ bindings, record keys, prop names, members and strings", () => {
    expect(names("fn f(todos: List(Int)) -> Int = todos.filter($1 > 0).size")).toEqual([]);
    expect(names('fn f() = {todos: 1, draft = "draft"}')).toEqual([]);
    expect(names('tile T = button(text="toggle") {todos: $1, variant: "ghost"}')).toEqual([]);
    expect(
      names('reducer r on=loadTodos.ok($m, _) do= x := $m.get-or({}).todos + "filter" + $el.draft'),
    ).toEqual(["loadTodos", "x"]);
  });

  it("built-ins: tiles, types, qualifiers, variants, route, math, ui, now, tokens, capabilities", () => {
    expect(names('tile T = page(row(text("a"), button(), spinner()), route-outlet())')).toEqual([]);
    expect(names("slot s : Map(Text, List(Option(Result(Int, Bool)))) = {}")).toEqual([]);
    expect(names("fn f() -> Time = now.plus(Duration.h(1)) + Int.parse(x).get-or(EffectId.none)")).toEqual([
      "x",
    ]);
    expect(names('fn f() -> Option(Int) = if route.path == "/" then Some(math.abs(1)) else None')).toEqual(
      [],
    );
    expect(names('tile T = box(text("x")) {bg: "surface", style: {color: @colors.fg}}')).toEqual([]);
    expect(
      names("effect e cap=storage.read in=Unit out=Unit policy=debounce(300ms) retry=linear(3, 1s)"),
    ).toEqual([]);
    expect(names("reducer r on=timer(100ms, name=countdown) do= stop-timer(countdown)")).toEqual([]);
    expect(names("reducer r on=ui.click(self) do= ()")).toEqual([]);
    expect(names('theme T = {colors: {bg: "#fff"}}')).toEqual([]);
    expect(names('motion M = {keyframes: {from: {opacity: 0}, to: {opacity: 1}}, duration: "slow"}')).toEqual(
      [],
    );
  });

  it("only inside a test are `from-log` and `ignore` test vocabulary", () => {
    expect(names("fn f() -> Int = ignore")).toEqual(["ignore"]);
  });
});
