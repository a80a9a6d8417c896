import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/check/diagnostic.js";
import { brief, check } from "./helpers.js";

/** A minimal complete app around `defs`, so that only the mistake under test is reported. */
function app(defs: string, caps = "", routes = '"/" -> Home, "/404" -> Home'): string {
  return `${defs}
tile Home = text("home")
app A
    caps   = [${caps}]
    routes = {${routes}}
    init   = []
`;
}

function codes(source: string, options = {}): string[] {
  return brief(check(source, options));
}

function one(source: string, code: string, options = {}): Diagnostic {
  const ds = check(source, options);
  const hits = ds.filter((d) => d.code === code);
  expect(hits, `expected one ${code} in ${JSON.stringify(brief(ds))}`).toHaveLength(1);
  return hits[0]!;
}

describe("structure", () => {
  it("E0001: routes without /404, with an auto-patch adding the tile and the route", () => {
    const d = one(app("", "", '"/" -> Home'), "E0001");
    expect(d.location).toBe("app.A.body:1");
    expect(d["auto-patch"]).toEqual({
      op: "bundle",
      ops: [
        {
          op: "add",
          layer: "tile",
          name: "NotFound",
          body: 'page(heading("404"), link(to="/", text="Back"))',
        },
        {
          op: "edit",
          layer: "app",
          name: "A",
          patch: { "body:3": `replace 'Home' -> 'Home, "/404" -> NotFound'` },
        },
      ],
    });
  });

  it("E0001: a /404 redirect does not serve the pattern", () => {
    expect(codes(app("", "", '"/" -> Home, "/404" ->> "/"'))).toContain("E0001@app.A.body:1");
  });

  it("E0003: no app (reported at program level, and off under requireApp: false)", () => {
    expect(codes("slot x : Int = 0")).toEqual(["E0003@program"]);
    expect(codes("slot x : Int = 0", { requireApp: false })).toEqual([]);
  });

  it("E0004: every app past the first", () => {
    const src = `${app("")}\napp B\n    caps = []\n    routes = {"/" -> Home, "/404" -> Home}\n`;
    expect(codes(src)).toEqual(["E0004@app.B.body:1"]);
  });

  it("E0007: a second definition of one name in one layer (not across layers)", () => {
    expect(codes(app("slot x : Int = 0\nslot x : Int = 1"))).toEqual(["E0007@slot.x.body:1"]);
    expect(codes(app("slot Home : Int = 0"))).toEqual([]);
  });

  it("E0002: a timer name declared twice", () => {
    const src = app(`slot n : Int = 0
reducer a on=timer(1s, name=tick) do= n := n + 1
reducer b on=timer(2s, name=tick) do= n := n + 2`);
    expect(codes(src)).toEqual(["E0002@reducer.b.body:1"]);
  });
});

describe("names", () => {
  it("E0102 / E0103 / E0104 / E0105 / E0116 / E0211 name the position and suggest in the layers it accepts", () => {
    const src = app(
      `slot users : Int = 0
fn double(x: Int) -> Int = x * 2
effect save cap=storage.write in=Int out=Result(Unit, Text)
reducer bump on=ui.click(Btn) do= users := users + 1
tile Btn = button(text=usres.show, onClick=bmp)
tile Row = column(Btn, Bttn, text(doubel(1).show))
reducer store on=ui.click(Bn) do= emit sav(users)`,
      "storage.write",
    );
    const ds = check(src);
    const by = (code: string) => ds.find((d) => d.code === code)!;
    expect(by("E0103")).toMatchObject({
      kind: "undef-ref",
      location: "tile.Btn.body:1",
      suggestion: { name: "users" },
    });
    expect(by("E0102")).toMatchObject({ location: "tile.Btn.body:1", suggestion: { name: "bump" } });
    expect(by("E0105")).toMatchObject({ location: "tile.Row.body:1", suggestion: { name: "Btn" } });
    expect(by("E0116")).toMatchObject({ location: "tile.Row.body:1", suggestion: { name: "double" } });
    expect(by("E0211")).toMatchObject({ location: "reducer.store.body:1", suggestion: { name: "Btn" } });
    expect(by("E0104")).toMatchObject({ location: "reducer.store.body:1", suggestion: { name: "save" } });
    // The slot `users` is not offered for the reducer position, nor the reducer for the value.
    expect(by("E0102").suggestion?.name).not.toBe("users");
  });

  it("E0103 undef-slot: an assignment to a slot that does not exist", () => {
    const d = one(app("slot count : Int = 0\nreducer r on=ui.click(Home) do= cont := 1"), "E0103");
    expect(d).toMatchObject({ kind: "undef-slot", suggestion: { name: "count" } });
  });

  it("E0103: $1 in a tile that declares no in=", () => {
    const d = one(app("tile Row = text($1.show)"), "E0103");
    expect(d.location).toBe("tile.Row.body:1");
    expect(codes(app("tile Row in=Int = text($1.show)"))).toEqual([]);
    // A method's fragment binds its own $1.
    expect(codes(app("slot xs : List(Int) = []\ntile Row = text(xs.map($1 + 1).length.show)"))).toEqual([]);
  });

  it("E0104 init-not-effect-call, and init entries are effect calls", () => {
    const src = app("effect load cap=http.get in=Unit out=Result(Text, Text)", "http.get").replace(
      "init   = []",
      "init   = [load(), 42]",
    );
    expect(brief(check(src))).toEqual(["E0104@app.A.body:4"]);
    expect(one(src, "E0104").kind).toBe("init-not-effect-call");
  });

  it("E0106: stop-timer of a name no timer declares, with a suggestion among timer names", () => {
    const src = app(`slot n : Int = 0
reducer tick on=timer(1s, name=countdown) do= n := n - 1
reducer stop on=ui.click(Home) do= stop-timer(countdwn)`);
    expect(one(src, "E0106")).toMatchObject({
      location: "reducer.stop.body:1",
      suggestion: { name: "countdown" },
    });
  });

  it("E0107: a motion prop naming no motion", () => {
    const src = app(`motion Spin = {keyframes: {from: {rotate: 0}, to: {rotate: 360}}}
tile S = box(text("x")) {motion: "Spn"}`);
    expect(one(src, "E0107")).toMatchObject({ suggestion: { name: "Spin" } });
  });

  it("E0110: a token group outside the closed set", () => {
    expect(codes(app('tile T = text("x") {color: @colour.fg}'))).toEqual(["E0110@tile.T.body:1"]);
  });

  it("E0111–E0114: sub-routes", () => {
    const orphan = app('tile S sub-routes={"/a" -> Home, "/a" -> Home} = column(text("x"))');
    expect(codes(orphan).sort()).toEqual([
      "E0111@tile.S.body:1",
      "E0112@tile.S.body:1",
      "E0113@tile.S.body:1",
    ]);
    const parent = app(
      'tile S sub-routes={"/a" -> Home} = column(route-outlet())',
      "",
      '"/s" -> S, "/404" -> Home',
    );
    expect(codes(parent)).toEqual(["E0114@tile.S.body:1"]);
    const ok = app(
      'tile S sub-routes={"/a" -> Home} = column(route-outlet())',
      "",
      '"/s/*" -> S, "/404" -> Home',
    );
    expect(codes(ok)).toEqual([]);
  });

  it("E0115: a slot named route", () => {
    expect(codes(app("slot route : Int = 0"))).toEqual(["E0115@slot.route.body:1"]);
  });

  it("E0116: run-reducer outside a test; E0802: trace", () => {
    expect(codes(app('fn f(x: Int) -> Int = trace("x", x)'))).toEqual(["E0802@fn.f.body:1"]);
  });

  it("E0117: an undefined type, suggesting program types, primitives and generics", () => {
    expect(one(app("slot x : Itn = 0"), "E0117")).toMatchObject({ suggestion: { name: "Int" } });
    expect(one(app("type Todo = {a: Int}\nslot x : List(Tood) = []"), "E0117")).toMatchObject({
      suggestion: { name: "Todo" },
    });
    // Type parameters are in scope in their definition, the standard library's domain types everywhere.
    expect(codes(app('type Box(T) = {v: T}\nslot u : Url = "x"\nslot b : Box(Int) = {v: 1}'))).toEqual([]);
    expect(codes(app("type Box(T) = {v: U}"))).toEqual(["E0117@type.Box.body:1"]);
  });

  it("E0117 on a type-member call's qualifier", () => {
    expect(one(app("slot x : Text = Tdo.show(1)\ntype Todo = {a: Int}"), "E0117").suggestion?.name).toBe(
      "Todo",
    );
  });
});

describe("types", () => {
  it("E0201: literals against declared types, at the innermost literal", () => {
    expect(one(app('slot x : Int = "a"'), "E0201").message).toBe("Expected Int but got Text: write an Int");
    expect(one(app("slot x : Text = 1"), "E0201").message).toMatch(/: write a Text$/);
    expect(one(app("slot x : Int = 1.5"), "E0201").message).toMatch(/^Expected Int but got Float/);
    expect(codes(app("slot x : Float = 1\nslot y : Int = 1.0"))).toEqual([]);
    expect(one(app('slot xs : List(Int) = [1, "b"]'), "E0201").span?.column).toBe(27);
    expect(one(app('type P = {a: Int}\nslot p : P = {a: "x"}'), "E0201").location).toBe("slot.p.body:1");
    expect(codes(app("type N = nominal Int where between(0, 9)\nslot n : N = 0"))).toEqual([]);
  });

  it("E0201: assignments through a path, fn arguments, tile inputs", () => {
    const src = app(`type Todo = {done: Bool}
slot todos : Map(Text, Todo) = {}
fn f(x: Int) -> Int = x
reducer r on=ui.click(Home) do= todos["a"].done := 1
tile T = text(f("no").show)
tile U in=Int = text($1.show)
tile V = column(U("x"))`);
    expect(brief(check(src).filter((d) => d.code === "E0201"))).toEqual([
      "E0201@reducer.r.body:1",
      "E0201@tile.T.body:1",
      "E0201@tile.V.body:1",
    ]);
  });

  it("E0202: an emit argument against the effect's in=", () => {
    const src = app(
      'effect save cap=storage.write in=Int out=Unit\nreducer r on=ui.click(Home) do= emit save("x")',
      "storage.write",
    );
    expect(one(src, "E0202").kind).toBe("emit-arg-type-mismatch");
  });

  it("E0205 / E0206: file inputs", () => {
    expect(codes(app('slot f : Text = ""\ntile T = form(input(type="file", bind=f))'))).toEqual([
      "E0205@tile.T.body:1",
    ]);
    expect(codes(app('tile T = form(input(accept="image/*"))'))).toEqual(["E0206@tile.T.body:1"]);
  });

  it("E0207 / E0209: patterns against the subject's type, with did-you-mean on tags", () => {
    const src = app(`type S = Idle | Busy(Int)
slot s : S = Idle
fn f(x: S) -> Int = match x with
  | Idel -> 0
  | Busy(a, b) -> a`);
    const ds = check(src);
    expect(brief(ds).sort()).toEqual(["E0207@fn.f.body:3", "E0209@fn.f.body:2"]);
    expect(ds.find((d) => d.code === "E0209")).toMatchObject({
      suggestion: { name: "Idle" },
      "auto-patch": { op: "edit", layer: "fn", name: "f", patch: { "body:2": "replace 'Idel' -> 'Idle'" } },
    });
    expect(
      codes(app('slot o : Option(Int) = None\ntile T = text(match o with | Sme(x) -> "a" | None -> "b")')),
    ).toEqual(["E0209@tile.T.body:1"]);
  });

  it("E0210: generic arity", () => {
    expect(codes(app("slot m : Map(Text) = {}"))).toEqual(["E0210@slot.m.body:1"]);
    expect(codes(app("type Box(T) = {v: T}\nslot b : Box = {v: 1}"))).toEqual(["E0210@slot.b.body:1"]);
  });

  it("E0213: fn, effect, tile and variant arity", () => {
    const src = app(
      `type S = Idle | Busy(Int)
slot s : S = Busy
fn f(x: Int) -> Int = x
effect go cap=nav.push in=Unit out=Unit
reducer r on=ui.click(Home) do= emit go(1)
tile U in=Int = text($1.show)
tile V = column(U, text(f(1, 2).show))`,
      "nav.push",
    );
    expect(brief(check(src))).toEqual([
      "E0213@slot.s.body:1",
      "E0213@reducer.r.body:1",
      "E0213@tile.V.body:1",
      "E0213@tile.V.body:1",
    ]);
  });

  it("E0214 / E0215: record literals against record types", () => {
    const src = app("type P = {a: Int, b: Text}\nslot p : P = {a: 1, c: 2}");
    expect(brief(check(src)).sort()).toEqual(["E0214@slot.p.body:1", "E0215@slot.p.body:1"]);
  });

  it("E0216: a variant constructor outside the declared union, with did-you-mean", () => {
    const d = one(app("type S = Idle | Busy\nslot s : S = Bsy"), "E0216");
    expect(d).toMatchObject({ suggestion: { name: "Busy" }, location: "slot.s.body:1" });
    expect(d["auto-patch"]).toBeDefined();
  });

  it("E0217: an Int literal beyond 2^53", () => {
    expect(codes(app("slot n : Int = 9007199254740993"))).toEqual(["E0217@slot.n.body:1"]);
  });
});

describe("capabilities and purity", () => {
  it("E0301: a missing capability, with an auto-patch appending it", () => {
    const src = app(
      "effect save cap=storage.write in=Int out=Unit\nreducer r on=ui.click(Home) do= emit save(1)",
      "storage.read",
    );
    expect(one(src, "E0301")["auto-patch"]).toEqual({
      op: "edit",
      layer: "app",
      name: "A",
      patch: { "body:2": "replace 'storage.read' -> 'storage.read, storage.write'" },
    });
    const empty = app(
      "effect save cap=storage.write in=Int out=Unit\nreducer r on=ui.click(Home) do= emit save(1)",
    );
    expect(one(empty, "E0301")["auto-patch"]).toEqual({
      op: "edit",
      layer: "app",
      name: "A",
      patch: { "body:2": "replace 'caps   = []' -> 'caps   = [storage.write]'" },
    });
  });

  it("E0301 for standard effects; none without an app", () => {
    const src = app('reducer r on=ui.click(Home) do= emit toast({kind: "info", text: "x"})');
    expect(codes(src)).toEqual(["E0301@reducer.r.body:1"]);
    expect(
      codes('reducer r on=ui.click(Home) do= emit toast({kind: "info", text: "x"})\ntile Home = text("x")', {
        requireApp: false,
      }),
    ).toEqual([]);
  });

  it("E0302: an unknown capability, accepted once a manifest registers it", () => {
    expect(one(app("", "telemetry.trak"), "E0302").suggestion).toBeUndefined();
    expect(
      codes(app("", "telemetry.track"), { capabilities: { capabilities: [{ name: "telemetry.track" }] } }),
    ).toEqual([]);
    expect(one(app("", "storage.reed"), "E0302").suggestion?.name).toBe("storage.read");
  });

  it("E0303: a cancel effect of the wrong shape", () => {
    const bad = app("effect stop cap=http.cancel in=Int out=Unit policy=latest", "http.cancel");
    expect(codes(bad)).toEqual(["E0303@effect.stop.body:1", "E0303@effect.stop.body:1"]);
    expect(codes(app("effect stop cap=http.cancel in=EffectId out=Unit", "http.cancel"))).toEqual([]);
  });

  it("E0305: a fn that reads a slot (a parameter of the same name shadows it)", () => {
    expect(codes(app("slot n : Int = 0\nfn f() -> Int = n + 1"))).toEqual(["E0305@fn.f.body:1"]);
    expect(codes(app("slot n : Int = 0\nfn f(n: Int) -> Int = n + 1"))).toEqual([]);
  });
});

describe("reducer writes", () => {
  it("E0601: by path shape, exclusive branches counted apart", () => {
    const base = `type I = {status: Int, at: Int}
slot x : Int = 0
slot issues : Map(Text, I) = {}
`;
    const ok = [
      'reducer r on=ui.click(Home) do= issues["a"].status := 1; issues["a"].at := 2',
      "reducer r on=ui.click(Home) do= if x > 0 then x := 1 else x := 2",
      "reducer r on=ui.click(Home) do= match x > 0 with | _ -> x := 1",
    ];
    for (const r of ok) expect(codes(app(base + r)), r).toEqual([]);
    const bad = [
      "reducer r on=ui.click(Home) do= x := 1; x := 2",
      "reducer r on=ui.click(Home) do= if x > 0 then x := 1 else x := 2; x := 3",
      'reducer r on=ui.click(Home) do= issues["a"].at := 1; issues["b"].at := 2',
    ];
    for (const r of bad) expect(codes(app(base + r)), r).toEqual(["E0601@reducer.r.body:1"]);
  });
});

describe("a11y (only under the a11y option)", () => {
  it("E0701–E0703", () => {
    const src = app(
      'tile T = column(button(onClick=r), image(src="a.png"), link(to="/"))\nreducer r on=ui.click(T) do= ()',
    );
    expect(codes(src)).toEqual([]);
    expect(codes(src, { a11y: true })).toEqual([
      "E0701@tile.T.body:1",
      "E0702@tile.T.body:1",
      "E0703@tile.T.body:1",
    ]);
  });
});

describe("opt-in and runtime bands", () => {
  it("E0109: a test wildcard outside a test", () => {
    expect(codes(app("slot m : Map(Text, Int) = {<any-id>: 1}"))).toEqual(["E0109@slot.m.body:1"]);
  });
});

describe("motion", () => {
  it("E0401–E0403: the closed motion grammar", () => {
    const ok = app(
      'motion M = {keyframes: {from: {opacity: 0, translate-y: -4}, to: {opacity: 1}}, duration: "slow", easing: "linear", iteration: "infinite"}',
    );
    expect(codes(ok)).toEqual([]);
    expect(codes(app("motion M = {keyframes: {from: {blur: 1}, to: {opacity: 1}}}"))).toEqual([
      "E0401@motion.M.body:1",
    ]);
    expect(
      codes(app('motion M = {keyframes: {from: {opacity: 0}, to: {opacity: 1}}, easing: "bouncy"}')),
    ).toEqual(["E0402@motion.M.body:1"]);
    expect(codes(app("motion M = {keyframes: {from: {opacity: 0}}}"))).toEqual(["E0403@motion.M.body:1"]);
  });
});

describe("one mistake, one diagnostic", () => {
  it("a misspelt record field is one E0215 with the missing field as did-you-mean", () => {
    const ds = check(app('type U = {name: Text, email: Text}\nslot u : U = {name: "a", emial: "x"}'));
    expect(brief(ds)).toEqual(["E0215@slot.u.body:1"]);
    expect(ds[0]?.suggestion?.name).toBe("email");
  });

  it("a closed qualified namespace knows its members; built-in calls their arity", () => {
    expect(one(app("slot d : Int = Duration.mss(5).to-ms"), "E0116").suggestion?.name).toBe("Duration.ms");
    expect(codes(app("fn f(x: Int) -> Text = fmt()"))).toEqual(["E0213@fn.f.body:1"]);
    expect(codes(app('slot t : Text = Duration.show(5)\nslot p : Option(Int) = Int.parse("4")'))).toEqual([]);
  });
});

describe("EffectId", () => {
  it("E0204: only == and != apply to an EffectId, and text() cannot render one", () => {
    const src = app(
      `slot h : EffectId = EffectId.none
slot n : Int = 0
reducer r on=ui.click(Home) do= if h != EffectId.none then n := n + 1
reducer q on=ui.click(Home) do= let id = emit go()
    n := id * 2
effect go cap=http.get in=Unit out=Unit
tile T = column(text(h), text((h + 1).show))`,
      "http.get",
    );
    expect(codes(src)).toEqual(["E0204@reducer.q.body:2", "E0204@tile.T.body:1", "E0204@tile.T.body:1"]);
  });
});

describe("testing-DSL invariants", () => {
  it("E0712: an episode mock that is none of the four forms", () => {
    const src = app(
      `effect load cap=http.get in=Unit out=Result(Text, Text)
test replay =
    episode-test
        load   = "episode.json"
        mocks  = {load: from_log}
        expect = {no-panics: true}`,
      "http.get",
    );
    expect(codes(src)).toEqual(["E0712@test.replay.body:4"]);
    expect(codes(src.replace("from_log", "from-log"))).toEqual([]);
  });
});
