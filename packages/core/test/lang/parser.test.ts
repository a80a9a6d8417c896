import { describe, expect, it } from "vitest";
import type {
  AppDef,
  Definition,
  EffectDef,
  Expr,
  FnDef,
  MotionDef,
  ReducerDef,
  SlotDef,
  Statement,
  TestDef,
  ThemeDef,
  TileDef,
  TypeDef,
} from "../../src/lang/ast.js";
import { parseDefinition, parseProgram } from "../../src/lang/parser.js";
import { referenceSites } from "../../src/lang/references.js";

function def<T extends Definition = Definition>(source: string): T {
  const r = parseDefinition(source);
  if (!r.ok) throw new Error(r.error.message);
  return r.value as T;
}

function errorOf(source: string): string {
  const r = parseProgram(source);
  if (r.ok) throw new Error(`expected an error for ${JSON.stringify(source)}`);
  return r.error.message;
}

/** The AST without spans, identifiers shown as their names: for comparing shapes. */
function shape(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(shape);
  if (node === null || typeof node !== "object") return node;
  const o = node as Record<string, unknown>;
  if (o.kind === "Ident") return o.name;
  if (o.kind === "String") return JSON.stringify(o.value);
  if (o.kind === "Number") return Number(o.raw);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (k !== "span") out[k] = shape(v);
  return out;
}

/** The expression of `fn f() = <source>`. */
function expr(source: string): Expr {
  return def<FnDef>(`fn f() = ${source}`).body;
}

/** The statements of `reducer r on=app.start do= <source>`. */
function body(source: string): readonly Statement[] {
  return def<ReducerDef>(`reducer r on=app.start do= ${source}`).body;
}

function text(source: string, span: { offset: number; end: number }): string {
  return source.slice(span.offset, span.end);
}

describe("type definitions", () => {
  it("parse nominal types with refinements", () => {
    const d = def<TypeDef>("type UserId = nominal Text where len-eq(36)");
    expect(d.layer).toBe("type");
    expect(d.name.name).toBe("UserId");
    expect(shape(d.body)).toEqual({
      kind: "NominalType",
      inner: {
        kind: "RefinedType",
        base: { kind: "TypeRef", name: "Text" },
        refinement: { kind: "Refinement", predicate: "len-eq", args: [36] },
      },
    });
  });

  it("parse unions with payloads and generic parameters", () => {
    const d = def<TypeDef>("type LoadResult(T) = Idle | Loading | Loaded(T) | Failed(HttpError)");
    expect(d.params.map((p) => p.name)).toEqual(["T"]);
    expect(shape(d.body)).toEqual({
      kind: "UnionType",
      variants: [
        { kind: "VariantDecl", name: "Idle" },
        { kind: "VariantDecl", name: "Loading" },
        { kind: "VariantDecl", name: "Loaded", payload: [{ kind: "TypeRef", name: "T" }] },
        { kind: "VariantDecl", name: "Failed", payload: [{ kind: "TypeRef", name: "HttpError" }] },
      ],
    });
    // One variant per line, with a leading bar.
    const lines = def<TypeDef>("type F =\n  | All\n  | Done");
    expect(shape(lines.body)).toEqual({
      kind: "UnionType",
      variants: [
        { kind: "VariantDecl", name: "All" },
        { kind: "VariantDecl", name: "Done" },
      ],
    });
  });

  it("parse records with refined fields, generics and negative refinement arguments", () => {
    const d = def<TypeDef>(
      "type T = {id: UserId, name: Text where nonempty, m: Map(K, List(V)), t: Float where between(-1.5, 2)}",
    );
    expect(shape(d.body)).toEqual({
      kind: "RecordType",
      fields: [
        { kind: "Field", key: "id", value: { kind: "TypeRef", name: "UserId" } },
        {
          kind: "Field",
          key: "name",
          value: {
            kind: "RefinedType",
            base: { kind: "TypeRef", name: "Text" },
            refinement: { kind: "Refinement", predicate: "nonempty" },
          },
        },
        {
          kind: "Field",
          key: "m",
          value: {
            kind: "TypeRef",
            name: "Map",
            args: [
              { kind: "TypeRef", name: "K" },
              { kind: "TypeRef", name: "List", args: [{ kind: "TypeRef", name: "V" }] },
            ],
          },
        },
        {
          kind: "Field",
          key: "t",
          value: {
            kind: "RefinedType",
            base: { kind: "TypeRef", name: "Float" },
            refinement: { kind: "Refinement", predicate: "between", args: [-1.5, 2] },
          },
        },
      ],
    });
  });
});

describe("slot definitions", () => {
  it("parse type, modifiers and initial value", () => {
    const d = def<SlotDef>("slot toast : Option(Toast) transient = None");
    expect(d.modifiers).toEqual(["transient"]);
    expect(shape(d.type)).toEqual({
      kind: "TypeRef",
      name: "Option",
      args: [{ kind: "TypeRef", name: "Toast" }],
    });
    expect(shape(d.init)).toBe("None");
    expect(def<SlotDef>('slot p : Text volatile = ""').modifiers).toEqual(["volatile"]);
    const noInit = def<SlotDef>("slot s : Int");
    expect(noInit.init).toBeUndefined();
    expect("init" in noInit).toBe(false);
  });

  it("parse refined types before the initial value", () => {
    const d = def<SlotDef>('slot draft : Text where len-lt(280) = ""');
    expect(d.type.kind).toBe("RefinedType");
    expect(shape(d.init)).toBe('""');
  });
});

describe("effect definitions", () => {
  it("parse every clause, in any order", () => {
    const d = def<EffectDef>(`effect loadUser  out=Result(User, HttpError)
                 cap=http.get
                 in=UserId
                 policy=latest-per-key($1)
                 retry=exponential(3, 200ms, 2.0)
                 map-request={key: "users", value: $1}`);
    expect(d.cap.name).toBe("http.get");
    expect(shape(d.in)).toEqual({ kind: "TypeRef", name: "UserId" });
    expect(shape(d.out)).toMatchObject({ kind: "TypeRef", name: "Result" });
    expect(shape(d.policy)).toEqual({
      kind: "Policy",
      policy: "latest-per-key",
      key: { kind: "DollarRef", name: "$1" },
    });
    expect(shape(d.retry)).toEqual({
      kind: "Retry",
      retry: "exponential",
      attempts: 3,
      delay: { kind: "Duration", raw: "200ms", amount: 200, unit: "ms" },
      factor: 2,
    });
    expect(d.retry?.factor?.raw).toBe("2.0");
    expect(shape(d.mapRequest)).toEqual({
      kind: "Record",
      fields: [
        { kind: "Field", key: "key", value: '"users"' },
        { kind: "Field", key: "value", value: { kind: "DollarRef", name: "$1" } },
      ],
    });
  });

  it("parse every policy and retry form", () => {
    const policy = (p: string) =>
      shape(def<EffectDef>(`effect e cap=a.b in=Unit out=Unit policy=${p}`).policy);
    expect(policy("latest")).toEqual({ kind: "Policy", policy: "latest" });
    expect(policy("queue")).toEqual({ kind: "Policy", policy: "queue" });
    expect(policy("once")).toEqual({ kind: "Policy", policy: "once" });
    expect(policy("debounce(300ms)")).toEqual({
      kind: "Policy",
      policy: "debounce",
      interval: { kind: "Duration", raw: "300ms", amount: 300, unit: "ms" },
    });
    expect(policy("throttle(1s)")).toMatchObject({ policy: "throttle", interval: { amount: 1, unit: "s" } });
    const retry = (r: string) => shape(def<EffectDef>(`effect e cap=a.b in=Unit out=Unit retry=${r}`).retry);
    expect(retry("none")).toEqual({ kind: "Retry", retry: "none" });
    expect(retry("linear(2, 5m)")).toMatchObject({
      retry: "linear",
      attempts: 2,
      delay: { amount: 5, unit: "m" },
    });
  });
});

describe("reducer definitions", () => {
  it("parse every event kind", () => {
    const on = (p: string) => shape(def<ReducerDef>(`reducer r on=${p} do= ()`).on);
    expect(on("ui.click(TodoRow)")).toEqual({
      kind: "UiEvent",
      event: "click",
      selector: { kind: "Selector", tile: "TodoRow" },
    });
    expect(on("ui.submit(NewForm#new)")).toEqual({
      kind: "UiEvent",
      event: "submit",
      selector: { kind: "Selector", tile: "NewForm", id: "new" },
    });
    expect(on("ui.key(self)")).toEqual({ kind: "UiEvent", event: "key", selector: { kind: "SelfSelector" } });
    expect(on("loadTodos.ok($m, _)")).toEqual({
      kind: "EffectEvent",
      effect: "loadTodos",
      outcome: "ok",
      binds: [
        { kind: "Bind", name: "$m" },
        { kind: "Bind", name: "_" },
      ],
    });
    expect(on("loadTodos.err($e, $key)")).toMatchObject({ kind: "EffectEvent", outcome: "err" });
    expect(on("timer(1s)")).toEqual({
      kind: "TimerEvent",
      interval: { kind: "Duration", raw: "1s", amount: 1, unit: "s" },
    });
    expect(on("timer(100ms, name=countdown)")).toMatchObject({ kind: "TimerEvent", timer: "countdown" });
    for (const e of [
      "start",
      "stop",
      "error",
      "visible",
      "hidden",
      "online",
      "offline",
      "http-401",
      "http-403",
      "http-5xx",
    ]) {
      expect(on(`app.${e}`)).toEqual({ kind: "AppEvent", event: e });
    }
    expect(on("tile.mount(Panel)")).toEqual({ kind: "TileEvent", event: "mount", tile: "Panel" });
    expect(on("tile.unmount(Panel)")).toEqual({ kind: "TileEvent", event: "unmount", tile: "Panel" });
    expect(on('route.enter("/todos/:id")')).toEqual({
      kind: "RouteEvent",
      event: "enter",
      pattern: '"/todos/:id"',
    });
    expect(on('route.leave("/a")')).toMatchObject({ event: "leave" });
    expect(on('route.error("/a")')).toMatchObject({ event: "error" });
  });

  it("parse assignments to paths, emits and lets, one per line", () => {
    const b = body(`let id = TodoId.fresh()
        todos[id].done := not todos[id].done
        editor.get.title := $event.value
        emit saveTodos(todos)`);
    expect(b.map((s) => s.kind)).toEqual(["LetStmt", "AssignStmt", "AssignStmt", "EmitStmt"]);
    expect(shape(b[1])).toEqual({
      kind: "AssignStmt",
      target: {
        kind: "Member",
        object: { kind: "Index", object: "todos", index: "id" },
        property: "done",
      },
      value: {
        kind: "Unary",
        op: "!",
        operand: {
          kind: "Member",
          object: { kind: "Index", object: "todos", index: "id" },
          property: "done",
        },
      },
    });
    expect(shape(b[3])).toEqual({ kind: "EmitStmt", effect: "saveTodos", args: ["todos"] });
  });

  it("parse if / match / for statements with newline, `;` and block bodies", () => {
    const b = body(`if count < 9 then count := count + 1 else { count := 0; emit reset() }
        for k in ks.keys { m[k] := 0 }
        stop-timer(countdown)
        panic("no")
        { a := 1; b := 2 }
        match x with
          | None -> ()
          | Some(v) -> y := v
                       z := v`);
    expect(b.map((s) => s.kind)).toEqual([
      "IfStmt",
      "ForStmt",
      "StopTimerStmt",
      "PanicStmt",
      "BlockStmt",
      "MatchStmt",
    ]);
    const [ifs, forS] = b as [
      Extract<Statement, { kind: "IfStmt" }>,
      Extract<Statement, { kind: "ForStmt" }>,
    ];
    const match = b[5] as Extract<Statement, { kind: "MatchStmt" }>;
    expect(ifs.then.map((s) => s.kind)).toEqual(["AssignStmt"]);
    expect(ifs.else?.map((s) => s.kind)).toEqual(["AssignStmt", "EmitStmt"]);
    expect(match.arms.map((a) => a.body.map((s) => s.kind))).toEqual([
      ["NoopStmt"],
      ["AssignStmt", "AssignStmt"],
    ]);
    expect(shape(match.arms[1]?.pattern)).toEqual({
      kind: "VariantPattern",
      variant: "Some",
      args: [{ kind: "BindPattern", name: "v" }],
    });
    expect(forS.binder.name).toBe("k");
    expect(forS.body.map((s) => s.kind)).toEqual(["AssignStmt"]);
    // An `if` without `else` has no else property at all.
    const [lone] = body("if a then b := 1") as [Extract<Statement, { kind: "IfStmt" }>];
    expect("else" in lone).toBe(false);
  });

  it("let a newline-separated branch body run on until `else`, `|` or `}` (language.md §1.6.1)", () => {
    const [ifs] = body("if a then x := 1\n  y := 2\n  emit e()") as [Extract<Statement, { kind: "IfStmt" }>];
    expect(ifs.then.map((s) => s.kind)).toEqual(["AssignStmt", "AssignStmt", "EmitStmt"]);
    const [m] = body("match a with\n | A -> x := 1\n          y := 2\n | B -> z := 3") as [
      Extract<Statement, { kind: "MatchStmt" }>,
    ];
    expect(m.arms.map((a) => a.body.length)).toEqual([2, 1]);
  });

  it("parse `;`-joined statements and `do=` on its own line", () => {
    expect(body("a := 1; b := 2; emit e()").map((s) => s.kind)).toEqual([
      "AssignStmt",
      "AssignStmt",
      "EmitStmt",
    ]);
    const d = def<ReducerDef>("reducer r on=ui.submit(F) do=\n    let id = 1\n    x := id\n");
    expect(d.body).toHaveLength(2);
  });

  it("end the definition at its last token", () => {
    const source = "reducer r on=app.start do= x := 1   # done\n\n";
    const d = def(source);
    expect(text(source, d.span)).toBe("reducer r on=app.start do= x := 1");
  });
});

describe("tile definitions", () => {
  it("parse in=, sub-routes, error-boundary and scroll-restoration", () => {
    const d = def<TileDef>(`tile Settings
    in=Text
    sub-routes = {"/settings/a" -> A, "/settings/old" ->> "/settings/a"}
    error-boundary = Fallback
    scroll-restoration = false
    = page(heading($1), route-outlet())`);
    expect(shape(d.in)).toEqual({ kind: "TypeRef", name: "Text" });
    expect(shape(d.subRoutes)).toEqual([
      { kind: "Route", path: '"/settings/a"', target: "A" },
      { kind: "Redirect", path: '"/settings/old"', to: '"/settings/a"' },
    ]);
    expect(d.errorBoundary?.name).toBe("Fallback");
    expect(d.scrollRestoration?.value).toBe(false);
    expect(shape(d.body)).toEqual({
      kind: "TileCall",
      callee: "page",
      args: [
        { kind: "TileCall", callee: "heading", args: [{ kind: "DollarRef", name: "$1" }] },
        { kind: "TileCall", callee: "route-outlet", args: [] },
      ],
    });
  });

  it("read children as tiles, value arguments as values, named arguments and props as keyed fields", () => {
    const d = def<TileDef>(`tile Row = row(
        check(value=todos[$1].done, onClick=toggle) {todoId: $1},
        text(todos[$1].text) {strike: todos[$1].done},
        RemoveBtn {todoId: $1, onClick: remove},
        Badge,
        for id in ids when(ok(id), TodoRow(id) {key: id.show}),
        if c then A else B(),
        match m with | X -> Y | _ -> spinner())
      {gap: "sm"}`);
    const b = d.body as Extract<Expr, { kind: "TileCall" }>;
    expect(b.args?.map((a) => a.kind)).toEqual([
      "TileCall",
      "TileCall",
      "TileCall",
      "TileCall",
      "For",
      "If",
      "Match",
    ]);
    expect(shape(b.props)).toEqual({ kind: "Props", fields: [{ kind: "Field", key: "gap", value: '"sm"' }] });
    const check = b.args?.[0] as Extract<Expr, { kind: "TileCall" }>;
    expect(check.fields?.map((f) => f.key.name)).toEqual(["value", "onClick"]);
    expect(check.args).toEqual([]);
    const badge = b.args?.[3] as Extract<Expr, { kind: "TileCall" }>;
    expect(shape(badge)).toEqual({ kind: "TileCall", callee: "Badge" });
    const forE = b.args?.[4] as Extract<Expr, { kind: "For" }>;
    expect(shape(forE.body)).toMatchObject({
      kind: "When",
      body: { kind: "TileCall", callee: "TodoRow", args: ["id"] },
    });
    const ifE = b.args?.[5] as Extract<Expr, { kind: "If" }>;
    expect(shape(ifE.then)).toEqual({ kind: "TileCall", callee: "A" });
    // A user tile's positional argument is a value: `All` here is a variant, not a tile.
    const bar = def<TileDef>("tile Bar = row(FilterTab(All))").body as Extract<Expr, { kind: "TileCall" }>;
    expect(shape(bar.args?.[0])).toEqual({ kind: "TileCall", callee: "FilterTab", args: ["All"] });
    // A value builtin's positional `if` / `match` are values.
    const h = def<TileDef>('tile H = heading(if a then "x" else "y")').body as Extract<
      Expr,
      { kind: "TileCall" }
    >;
    // biome-ignore lint/suspicious/noThenProperty: the AST's If node has a `then` branch.
    expect(shape(h.args?.[0])).toEqual({ kind: "If", cond: "a", then: '"x"', else: '"y"' });
  });
});

describe("fn definitions", () => {
  it("parse parameters, return type and body", () => {
    const d = def<FnDef>(
      "fn itemsLeft(ts: Map(TodoId, Todo), f: Filter) -> Int\n   = ts.filter(not $2.done).size",
    );
    expect(d.params.map((p) => [p.name.name, shape(p.type)])).toEqual([
      [
        "ts",
        {
          kind: "TypeRef",
          name: "Map",
          args: [
            { kind: "TypeRef", name: "TodoId" },
            { kind: "TypeRef", name: "Todo" },
          ],
        },
      ],
      ["f", { kind: "TypeRef", name: "Filter" }],
    ]);
    expect(shape(d.returnType)).toEqual({ kind: "TypeRef", name: "Int" });
    expect(shape(d.body)).toEqual({
      kind: "Member",
      object: {
        kind: "Call",
        callee: { kind: "Member", object: "ts", property: "filter" },
        args: [
          {
            kind: "Unary",
            op: "!",
            operand: { kind: "Member", object: { kind: "DollarRef", name: "$2" }, property: "done" },
          },
        ],
      },
      property: "size",
    });
    expect("returnType" in def<FnDef>("fn g() = 1")).toBe(false);
  });
});

describe("expressions", () => {
  it("follow precedence: or < and < comparison < additive < multiplicative < unary < postfix", () => {
    expect(shape(expr("a || b && c == d + e * -f.g"))).toEqual({
      kind: "Binary",
      op: "||",
      left: "a",
      right: {
        kind: "Binary",
        op: "&&",
        left: "b",
        right: {
          kind: "Binary",
          op: "==",
          left: "c",
          right: {
            kind: "Binary",
            op: "+",
            left: "d",
            right: {
              kind: "Binary",
              op: "*",
              left: "e",
              right: { kind: "Unary", op: "-", operand: { kind: "Member", object: "f", property: "g" } },
            },
          },
        },
      },
    });
    expect(shape(expr("a - b - c"))).toMatchObject({
      op: "-",
      left: { op: "-", left: "a", right: "b" },
      right: "c",
    });
  });

  it("normalize the aliases `&`, bool-or `|` and `not`", () => {
    expect(shape(expr("a & b"))).toEqual(shape(expr("a && b")));
    expect(shape(expr("a | b"))).toEqual(shape(expr("a || b")));
    expect(shape(expr("not a"))).toEqual(shape(expr("!a")));
  });

  it("read `|` before a pattern and `->` as a match arm, else as bool-or", () => {
    const m = expr("match t with | Some(x) -> x | b | c -> 2 | _ -> 3") as Extract<Expr, { kind: "Match" }>;
    expect(m.arms.map((a) => shape(a.pattern))).toEqual([
      { kind: "VariantPattern", variant: "Some", args: [{ kind: "BindPattern", name: "x" }] },
      { kind: "BindPattern", name: "c" },
      { kind: "WildcardPattern" },
    ]);
    expect(shape(m.arms[0]?.body)).toEqual({ kind: "Binary", op: "||", left: "x", right: "b" });
    const tuple = expr("match (a, b) with | (Loaded(p), Some(t)) -> p | _ -> q") as Extract<
      Expr,
      { kind: "Match" }
    >;
    expect(shape(tuple.subject)).toEqual({ kind: "Tuple", items: ["a", "b"] });
    expect(tuple.arms[0]?.pattern.kind).toBe("TuplePattern");
  });

  it("tell records from maps, and keep shorthand fields", () => {
    expect(shape(expr("{id, text=draft, done: false}"))).toEqual({
      kind: "Record",
      fields: [
        { kind: "Field", key: "id" },
        { kind: "Field", key: "text", value: "draft" },
        { kind: "Field", key: "done", value: { kind: "Bool", value: false } },
      ],
    });
    expect(shape(expr('{"u1": 1, <any-id>: 2}'))).toEqual({
      kind: "Map",
      entries: [
        { kind: "MapEntry", key: '"u1"', value: 1 },
        { kind: "MapEntry", key: { kind: "AnyId" }, value: 2 },
      ],
    });
    expect(shape(expr("{}"))).toEqual({ kind: "Map", entries: [] });
    expect(shape(expr("{type: ui.click, in: 1}"))).toMatchObject({ kind: "Record" });
    expect(shape(expr('{true: "on"}'))).toMatchObject({ kind: "Map" });
  });

  it("parse calls with named arguments as fields, and qualified calls as members", () => {
    expect(shape(expr('editor.copy(title="New", body=b)'))).toEqual({
      kind: "Call",
      callee: { kind: "Member", object: "editor", property: "copy" },
      args: [],
      fields: [
        { kind: "Field", key: "title", value: '"New"' },
        { kind: "Field", key: "body", value: "b" },
      ],
    });
    expect(shape(expr("TodoId.fresh()"))).toEqual({
      kind: "Call",
      callee: { kind: "Member", object: "TodoId", property: "fresh" },
      args: [],
    });
    expect(shape(expr("Decoder.Json(Map(K, V))"))).toMatchObject({
      kind: "Call",
      args: [{ kind: "Call", callee: "Map" }],
    });
  });

  it("parse literals, `$` bindings, tokens, wildcards, let-in, emit, tuples and unit", () => {
    expect(shape(expr('[1, 2.50, "s", true, (), now, null]'))).toEqual({
      kind: "List",
      items: [
        1,
        2.5,
        '"s"',
        { kind: "Bool", value: true },
        { kind: "Unit" },
        { kind: "Now" },
        { kind: "Null" },
      ],
    });
    expect((expr("2.50") as Extract<Expr, { kind: "Number" }>).raw).toBe("2.50");
    expect(shape(expr("@typography.size.lg"))).toEqual({
      kind: "TokenRef",
      path: ["typography", "size", "lg"],
    });
    expect(shape(expr("<slots.todos>"))).toEqual({ kind: "SlotWildcard", slot: "todos" });
    expect(shape(expr("let x = 1 in x + 1"))).toEqual({
      kind: "Let",
      name: "x",
      value: 1,
      body: { kind: "Binary", op: "+", left: "x", right: 1 },
    });
    expect(shape(expr("emit search(q)"))).toEqual({ kind: "Emit", effect: "search", args: ["q"] });
    expect(shape(expr("(a, b, c)"))).toEqual({ kind: "Tuple", items: ["a", "b", "c"] });
    // biome-ignore lint/suspicious/noThenProperty: the AST's If node has a `then` branch.
    expect(shape(expr("if a then 1 else 2"))).toEqual({ kind: "If", cond: "a", then: 1, else: 2 });
  });

  it("keep no node for parentheses, and give enclosing nodes the parenthesized extent", () => {
    const source = "fn f() = (a + b) * c";
    const e = def<FnDef>(source).body as Extract<Expr, { kind: "Binary" }>;
    expect(e.op).toBe("*");
    expect(text(source, e.span)).toBe("(a + b) * c");
    expect(text(source, e.left.span)).toBe("a + b");
    const m = def<FnDef>("fn f() = (x).y").body;
    expect(text("fn f() = (x).y", m.span)).toBe("(x).y");
  });
});

describe("app definitions", () => {
  it("parse every clause", () => {
    const d = def<AppDef>(`app TodoApp
    caps   = [storage.read, http.get]
    routes = {"/" -> Home, "/old" ->> "/", "/404" -> NotFound}
    init   = [loadTodos(), loadUser(1)]
    theme  = DefaultTheme
    http   = {base-url: "https://x", on-401: relogin}
    meta   = {title: "T", og-image: "/og.png"}
    indexed-db = {name: "db", version: 1, stores: [{name: "notes", key: "id"}]}
    analytics = {provider: "console"}`);
    expect(d.caps?.map((c) => c.name)).toEqual(["storage.read", "http.get"]);
    expect(d.routes?.map((r) => r.kind)).toEqual(["Route", "Redirect", "Route"]);
    expect(d.init?.map((e) => shape(e))).toEqual([
      { kind: "Call", callee: "loadTodos", args: [] },
      { kind: "Call", callee: "loadUser", args: [1] },
    ]);
    expect(d.theme?.name).toBe("DefaultTheme");
    expect(d.http?.fields.map((f) => f.key.name)).toEqual(["base-url", "on-401"]);
    expect(d.meta?.fields.map((f) => f.key.name)).toEqual(["title", "og-image"]);
    expect(d.indexedDb?.fields.map((f) => f.key.name)).toEqual(["name", "version", "stores"]);
    expect(d.analytics?.kind).toBe("Record");
  });

  it("end before the next definition, even a theme", () => {
    const r = parseProgram('app A\n  caps = []\n  theme = T\ntheme T = {colors: {bg: "#fff"}}\n');
    expect(r.ok && r.value.definitions.map((x) => x.layer)).toEqual(["app", "theme"]);
  });
});

describe("test definitions", () => {
  it("parse reducer-test", () => {
    const d = def<TestDef>(`test inc-increments =
    reducer-test inc
        given  = {slots: {count: 0}, event: {type: ui.click, target: IncBtn}}
        expect = {slots: {count: 1}, effects: [persist(<slots.items>)]}`);
    expect(d.name.name).toBe("inc-increments");
    expect(d.body.kind).toBe("ReducerTest");
    if (d.body.kind !== "ReducerTest") return;
    expect(d.body.target.name).toBe("inc");
    expect(d.body.given.kind).toBe("Record");
    expect(shape(d.body.expect)).toMatchObject({
      kind: "Record",
      fields: [{ key: "slots" }, { key: "effects" }],
    });
  });

  it("parse tile-test with a tile expectation", () => {
    const d = def<TestDef>(
      'test t = tile-test App given = {slots: {}, in: "Ada"} expect = column(heading("Hi"), Row)',
    );
    expect(d.body.kind).toBe("TileTest");
    if (d.body.kind !== "TileTest") return;
    expect(shape(d.body.expect)).toMatchObject({
      kind: "TileCall",
      callee: "column",
      args: [{}, { kind: "TileCall", callee: "Row" }],
    });
  });

  it("parse property-test with count and shrink", () => {
    const d = def<TestDef>(`test p =
    property-test
        for-all   = {count: Int where between(0, 50)}
        given     = {slots: {count: count}, event: {type: ui.click, target: IncBtn}}
        invariant = run-reducer(inc).run-reducer(dec).slots.count == count
        count     = 200
        shrink    = false`);
    expect(d.body.kind).toBe("PropertyTest");
    if (d.body.kind !== "PropertyTest") return;
    expect(d.body.forAll.fields.map((f) => f.key.name)).toEqual(["count"]);
    expect(d.body.invariant.kind).toBe("Binary");
    expect(d.body.count?.value).toBe(200);
    expect(d.body.shrink?.value).toBe(false);
  });

  it("parse episode-test", () => {
    const d = def<TestDef>(`test replay =
    episode-test
        load   = "fixture.jsonl"
        mocks  = {loadUser: from-log, persist: ignore}
        expect = {slots-equal: from-log, no-panics: true}`);
    expect(d.body.kind).toBe("EpisodeTest");
    if (d.body.kind !== "EpisodeTest") return;
    expect(d.body.load.value).toBe("fixture.jsonl");
    expect(d.body.mocks?.kind).toBe("Record");
  });
});

describe("theme and motion definitions", () => {
  it("parse nested records of strings and numbers", () => {
    const d = def<ThemeDef>(`theme T = {
    colors: {bg: "#fff", fg: "#000"},
    typography: {family: "system-ui", size: {sm: "14px"}, line-height: "1.5"},
    icons: {"logo": "M3 3h18"},
}`);
    expect(d.body.fields.map((f) => f.key.name)).toEqual(["colors", "typography", "icons"]);
    expect(shape(d.body.fields[1]?.value)).toMatchObject({
      kind: "Record",
      fields: [{ key: "family" }, { key: "size", value: { kind: "Record" } }, { key: "line-height" }],
    });
  });

  it("parse motion keyframes with negative numbers", () => {
    const d = def<MotionDef>(
      'motion Rise = {keyframes: {from: {translate-y: -16, opacity: 0}, to: {translate-y: 0, opacity: 1}}, duration: "slow"}',
    );
    expect(d.layer).toBe("motion");
    const keyframes = d.body.fields[0]?.value as Extract<Expr, { kind: "Record" }>;
    const from = keyframes.fields[0]?.value;
    expect(shape(from)).toEqual({
      kind: "Record",
      fields: [
        { kind: "Field", key: "translate-y", value: -16 },
        { kind: "Field", key: "opacity", value: 0 },
      ],
    });
  });
});

describe("spans", () => {
  it("run from the layer keyword to the last token, with the name's own span", () => {
    const source = '# intro\n\ntile App = column(\n  A, B) {gap: "sm"}   # trailing\n\n';
    const r = parseProgram(source);
    if (!r.ok) throw new Error(r.error.message);
    const [d] = r.value.definitions;
    expect(text(source, d!.span)).toBe('tile App = column(\n  A, B) {gap: "sm"}');
    expect([d!.span.line, d!.span.column]).toEqual([3, 1]);
    expect(text(source, d!.name.span)).toBe("App");
    expect(r.value.span).toEqual({ offset: 0, end: source.length, line: 1, column: 1 });
  });

  it("cover string quotes", () => {
    const source = 'slot s : Text = "a\\"b"';
    const init = def<SlotDef>(source).init as Extract<Expr, { kind: "String" }>;
    expect(init.value).toBe('a"b');
    expect(text(source, init.span)).toBe('"a\\"b"');
  });
});

describe("parseDefinition", () => {
  it("accepts comments and blank lines around exactly one definition", () => {
    const d = def("# a comment\n\nslot a : Int = 1\n# trailing\n\n");
    expect(d.name.name).toBe("a");
    expect(d.span.line).toBe(3);
  });

  it("refuses two definitions, nothing, and trailing junk", () => {
    const two = parseDefinition("slot a : Int = 1\nslot b : Int = 2");
    expect(!two.ok && two.error.message).toBe(
      "expected a single definition, but another one (keyword `slot`) follows slot `a` at 2:1",
    );
    const none = parseDefinition("  # nothing here\n");
    expect(!none.ok && none.error.message).toBe(
      "expected a definition (type, slot, effect, reducer, tile, fn, app, test, theme or motion), found end of input at 2:1",
    );
    const junk = parseDefinition("slot a : Int = 1 )");
    expect(!junk.ok && junk.error.message).toBe(
      "unexpected `)` after the end of slot `a`; expected a new definition (type, slot, effect, reducer, tile, fn, app, test, theme or motion) at 1:18",
    );
  });
});

describe("parse errors", () => {
  it("say what was expected, where, and in which definition", () => {
    const cases: [string, string][] = [
      [
        "tile App button()",
        "expected `=` and the tile body after the tile name (or a clause `in=`, `sub-routes=`, `error-boundary=`, `scroll-restoration=`) in tile `App`, found `button` at 1:10",
      ],
      ["slot a : Int = 1\ntile = button()", "expected a name after `tile`, found `=` at 2:6"],
      ['slot a : Text = "abc', "unterminated string at 1:17"],
      [
        "reducer addTodo on=ui.click(B) do= x := f(1))",
        "unexpected `)` after the end of reducer `addTodo`; expected a new definition (type, slot, effect, reducer, tile, fn, app, test, theme or motion) at 1:45",
      ],
      [
        "reducer r on=ui.click(B) do= x = 1",
        "expected `:=` after the assignment target `x` in reducer `r` (assignment is `:=`), found `=` at 1:32",
      ],
      [
        "reducer r on=ui.tap(B) do= x := 1",
        "unknown ui event `ui.tap` in reducer `r` (expected one of click, submit, change, input, focus, blur, key, hover) at 1:17",
      ],
      [
        "reducer r on=ui.click(B)\n  x := 1",
        "expected `do` after the event pattern in reducer `r`, found `x` at 2:3",
      ],
      [
        "fn f(x: Int) -> Int = if x > 0 then 1",
        "expected `else` (an `if` expression needs both branches) in fn `f`, found end of input at 1:38",
      ],
      [
        "tile T = column(A, B",
        "expected `)` to close the arguments of `column` in tile `T`, found end of input at 1:21",
      ],
      [
        "type T = Int where even",
        "unknown refinement predicate `even` in type `T` (the registered ones are nonempty, len-eq, len-lt, len-gt, between, positive, negative, email, url, uuid, regex, one-of) at 1:20",
      ],
      [
        "effect e cap=http.get in=Unit",
        "expected `out=` (an effect needs `cap=`, `in=` and `out=`; its clauses are `cap=`, `in=`, `out=`, `policy=`, `retry=` or `map-request=`) in effect `e`, found end of input at 1:30",
      ],
      [
        'fn f(s: Text) -> Int = match s with | "a" -> 1 | _ -> 2',
        "literal patterns are not supported in fn `f`: match on a union variant, or use `if … then … else` at 1:39",
      ],
      [
        "app A\n  caps = []\n  route = {}",
        "unknown clause `route` in app `A` (an app has `caps =`, `routes =`, `init =`, `theme =`, `http =`, `meta =`, `indexed-db =`, `analytics =`) at 3:3",
      ],
      ["app A\n  caps = []\n  caps = []", "`caps =` is written twice in app `A` at 3:3"],
      [
        'tile T = column(x) {text("Home")}',
        "expected `:` after the prop name `text` (props are `name: value`) in tile `T`, found `(` at 1:25",
      ],
      [
        "test t = reducer-test inc given = {}",
        "expected `expect =` (a reducer-test needs `expect =`) in test `t`, found end of input at 1:37",
      ],
      [
        "slot s : Map(Text, Int = {}",
        "expected `)` to close the type arguments of `Map` in slot `s`, found `=` at 1:24",
      ],
      ["fn f() = $", "`$` must be followed by a position or a name (`$1`, `$el`, `$event`) at 1:10"],
      ["fn f() = a.", "expected a field or method name after `.` in fn `f`, found end of input at 1:12"],
      [
        "thing x = 1",
        "expected a definition (type, slot, effect, reducer, tile, fn, app, test, theme or motion), found `thing` at 1:1",
      ],
    ];
    for (const [source, message] of cases) {
      expect(errorOf(source), source).toBe(message);
    }
  });

  it("end with the span's line and column", () => {
    const r = parseProgram("slot a : Int = 1\n\n   tile T = column(\n      A,, B)");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toMatch(/ at 4:9$/);
    expect(r.error.span).toMatchObject({ line: 4, column: 9 });
  });

  it("refuse nesting deeper than the limit instead of overflowing the stack", () => {
    for (const source of [
      `fn f() = ${"(".repeat(100_000)}1${")".repeat(100_000)}`,
      `fn f() = ${"[".repeat(100_000)}`,
      `fn f() = ${"-".repeat(100_000)}1`,
      `fn f() = 1${" + 1".repeat(100_000)}`,
      `fn f() = a${".b".repeat(100_000)}`,
      `tile T = ${"column(".repeat(50_000)}`,
      `type T = ${"List(".repeat(50_000)}Int${")".repeat(50_000)}`,
      `theme T = ${"{a: ".repeat(50_000)}`,
      `reducer r on=app.start do= ${"if a then ".repeat(50_000)}x := 1`,
    ]) {
      const r = parseProgram(source);
      expect(r.ok, source.slice(0, 30)).toBe(false);
      if (!r.ok) expect(r.error.message).toMatch(/nest|nested/);
    }
    // Within the limit is fine.
    expect(parseProgram(`fn f() = ${"(".repeat(100)}1${")".repeat(100)}`).ok).toBe(true);
  });

  it("refuse a tree taller than the limit built from chains of parenthesized chains", () => {
    let tall = "a";
    for (let i = 0; i < 200; i++) tall = `(${tall}${" + a".repeat(50)})`;
    const r = parseProgram(`fn f() = ${tall}`);
    expect(!r.ok && r.error.message).toBe(
      "fn `f` nests 10002 levels deep (at most 1000); move part of it into a definition of its own at 1:1",
    );
    let wide = "a";
    for (let i = 0; i < 20; i++) wide = `(${wide}${" + a".repeat(40)})`;
    const ok = parseProgram(`fn f() = ${wide}`);
    expect(ok.ok).toBe(true);
    if (ok.ok) expect(() => referenceSites(ok.value.definitions[0]!)).not.toThrow();
  });
});
