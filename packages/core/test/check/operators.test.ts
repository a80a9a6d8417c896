/**
 * The E0201 checks of operators, conditions, typed results and null (errors.md E0201; language.md:
 * null is prohibited). One-sided: only what is certainly wrong is reported.
 */
import { describe, expect, it } from "vitest";
import { brief, check, errorsOf } from "./helpers.js";

const BASE = [
  "type N = nominal Int where between(0, 999)",
  "slot count : N = 0",
  'slot label : Text = ""',
  "slot lit : Bool = false",
  "slot ratio : Float = 1.5",
].join("\n");

function errors(extra: string): string[] {
  return brief(errorsOf(check(`${BASE}\n${extra}\n`, { requireApp: false })));
}

describe("E0201 on operators, conditions and typed results", () => {
  it("accepts what the examples write: Text + anything shows it, numbers mix, comparisons of like kinds", () => {
    expect(errors('tile T = heading("Count: " + count)')).toEqual([]);
    expect(errors("fn half(c: Int) -> Float = c * 9 / 5 + 32")).toEqual([]);
    expect(errors("fn big(c: Int) -> Bool = c > 10 && c != 99")).toEqual([]);
    expect(errors('reducer r on=ui.click(T) do= label := label + "!"\ntile T = button("x")')).toEqual([]);
    expect(errors('reducer r on=ui.click(T) do= ratio := ratio + count\ntile T = button("x")')).toEqual([]);
  });

  it("reports a Text result where a number is declared, a mixed comparison, a non-Bool condition", () => {
    expect(errors('reducer r on=ui.click(T) do= count := count + "x"\ntile T = button("x")')).toEqual([
      "E0201@reducer.r.body:1",
    ]);
    expect(errors('fn f(c: Int) -> Float = c * 9 / 5 + "x"')).toEqual(["E0201@fn.f.body:1"]);
    expect(errors('fn f(c: Int) -> Bool = c > "x"')).toEqual(["E0201@fn.f.body:1"]);
    expect(errors('reducer r on=ui.click(T) do= if 1 then count := 1\ntile T = button("x")')).toEqual([
      "E0201@reducer.r.body:1",
    ]);
    expect(errors('tile T = text(if label then "a" else "b")')).toEqual(["E0201@tile.T.body:1"]);
    expect(errors('slot n : Int = -"x"')).toEqual(["E0201@slot.n.body:1"]);
    expect(errors("fn f(c: Int) -> Bool = !c")).toEqual(["E0201@fn.f.body:1"]);
    expect(errors("fn f(b: Bool) -> Bool = b && 1")).toEqual(["E0201@fn.f.body:1"]);
  });

  it("reports null wherever it is written", () => {
    expect(errors("tile T = text(null)")).toEqual(["E0201@tile.T.body:1"]);
    const [d] = errorsOf(check(`${BASE}\ntile T = text(null)\n`, { requireApp: false }));
    expect(d?.message).toMatch(/null is not a value in Kumiki: use an Option/);
  });
});

describe("E0108 on a record's members, E0208 on a pattern of the wrong shape", () => {
  const REC =
    'type Post = {id: Text, body: Text}\nslot post : Post = {id: "1", body: "b"}\nslot picked : Option(Int) = None';

  it("a record read by a field it does not have, with the near field; fields, copy and show are fine", () => {
    const src = (e: string) => `${REC}\ntile T = text(${e})\n`;
    expect(brief(errorsOf(check(src("post.bodyx"), { requireApp: false })))).toEqual(["E0108@tile.T.body:1"]);
    const [d] = errorsOf(check(src("post.bodyx"), { requireApp: false }));
    expect(d?.message).toMatch(/has no field or method "\.bodyx": did you mean "\.body"\?/);
    expect(errorsOf(check(src("post.body"), { requireApp: false }))).toEqual([]);
    expect(errorsOf(check(src("post.show"), { requireApp: false }))).toEqual([]);
    expect(errorsOf(check(src('post.copy(body="x").body'), { requireApp: false }))).toEqual([]);
  });

  it("offers the near field as an auto-patch: applied, the program checks clean", async () => {
    const { memoryStore, must } = await import("../project/helpers.js");
    const { normalizePatch } = await import("../../src/fix/normalize.js");
    const { checkStore } = await import("../../src/integrity/store-check.js");
    const store = memoryStore();
    for (const line of [...REC.split("\n"), "tile T = text(post.bodyx)"])
      must(await store.apply({ ops: [{ op: "add", source: line }] }));
    const [d] = errorsOf(checkStore(store, { requireApp: false }).diagnostics);
    expect(d?.code).toBe("E0108");
    expect(d?.["auto-patch"]).toBeDefined();
    const patch = normalizePatch(d!["auto-patch"]);
    if (!patch.ok) throw new Error(patch.error.message);
    must(await store.apply({ ops: patch.value }));
    expect(must(store.view("tile.T")).text).toBe("tile T = text(post.body)\n");
    expect(errorsOf(checkStore(store, { requireApp: false }).diagnostics)).toEqual([]);
  });

  it("a tuple pattern against an Option, a variant pattern against a record", () => {
    const tuple = `${REC}\nfn f(p: Option(Int)) -> Text = match p with\n  | (a, b) -> "x"\n`;
    expect(brief(errorsOf(check(tuple, { requireApp: false })))).toEqual(["E0208@fn.f.body:2"]);
    const variant = `${REC}\nfn g(p: Post) -> Text = match p with\n  | Some(x) -> "x"\n  | _ -> "y"\n`;
    expect(brief(errorsOf(check(variant, { requireApp: false })))).toEqual(["E0208@fn.g.body:2"]);
  });
});

describe("the write gate inherits these checks", () => {
  it("refuses a write that adds one of them, with its code, and takes the write that does not", async () => {
    const { memoryStore, must } = await import("../project/helpers.js");
    const store = memoryStore("agent:test", true);
    must(await store.add({ layer: "slot", name: "count", body: "Int = 0" }));
    must(await store.add({ layer: "tile", name: "Btn", body: 'button("+")' }));
    const bad = await store.add({
      layer: "reducer",
      name: "inc",
      body: 'on=ui.click(Btn) do= count := count + "x"',
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.code).toBe("validation-failed");
      expect(bad.error.message).toMatch(/E0201 at reducer\.inc\.body:1: Expected Int but got Text/);
    }
    must(await store.add({ layer: "reducer", name: "inc", body: "on=ui.click(Btn) do= count := count + 1" }));
    const cond = await store.replace({
      qname: "reducer.inc",
      body: "on=ui.click(Btn) do= if 1 then count := 0",
    });
    expect(!cond.ok && cond.error.message).toMatch(/E0201 .*Condition of "if" must be Bool but got Int/);
  });
});
