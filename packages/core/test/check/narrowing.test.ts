import { describe, expect, it } from "vitest";
import { codeInfo } from "../../src/check/codes.js";
import { autoPatchFor, type Diagnostic, hasErrors, newDiagnostics } from "../../src/check/diagnostic.js";
import { brief, check } from "./helpers.js";

// One mistake per band: a type (E0201), a name (E0103), a capability (E0301), a structure
// (E0007), an opt-in check (E0702, under a11y) and a runtime hazard (E0802).
const SOURCE = `slot n : Int = "x"
slot n : Int = 0
effect save cap=storage.write in=Int out=Unit
reducer r on=ui.click(Home) do= emit save(m)
fn f(x: Int) -> Int = trace("x", x)
tile Home = column(image(src="a.png"))
app A
    caps   = []
    routes = {"/" -> Home, "/404" -> Home}
`;

function codesUnder(options: object): string[] {
  return [...new Set(check(SOURCE, { a11y: true, ...options }).map((d) => d.code))].sort();
}

describe("narrowing (ai-edit.md §9.2.3)", () => {
  it("reports everything unnarrowed", () => {
    expect(codesUnder({})).toEqual(["E0007", "E0103", "E0201", "E0301", "E0702", "E0802"]);
  });

  it("composes flags as a union of bands, and always keeps E00xx, E07xx and E08xx", () => {
    const always = ["E0007", "E0702", "E0802"];
    expect(codesUnder({ types: true })).toEqual([...always, "E0201"].sort());
    expect(codesUnder({ refs: true })).toEqual([...always, "E0103"].sort());
    expect(codesUnder({ effects: true })).toEqual([...always, "E0301"].sort());
    expect(codesUnder({ types: true, refs: true })).toEqual([...always, "E0103", "E0201"].sort());
    expect(codesUnder({ types: true, refs: true, effects: true })).toEqual(codesUnder({}));
  });

  it("keeps the a11y band off unless asked for", () => {
    expect(codesUnder({ a11y: false })).not.toContain("E0702");
  });
});

describe("structured diagnostics (ai-edit.md §9.6)", () => {
  it("carry code, kind, severity, location, message, span and the definition they are about", () => {
    const d = check(SOURCE).find((x) => x.code === "E0103")!;
    expect(d).toMatchObject({
      code: "E0103",
      kind: "undef-ref",
      severity: "error",
      location: "reducer.r.body:1",
      definition: "reducer.r",
      // One position convention: span.line is the location's body:N (the file's line 4).
      span: { line: 1, column: 43 },
    });
    expect(d.message).toContain('"m"');
    // The JSON form is the §9.6 one.
    expect(Object.keys(JSON.parse(JSON.stringify(d)))).toEqual(
      expect.arrayContaining(["code", "kind", "location", "message"]),
    );
  });

  it("come out in a deterministic order, whatever order the definitions came in", () => {
    // (Without the duplicate: which of two same-name definitions is "the first" is source order.)
    const defs = SOURCE.replace("slot n : Int = 0\n", "").split(/\n(?=[a-z])/);
    const reversed = [...defs].reverse().join("\n");
    expect(brief(check(reversed))).toEqual(brief(check(defs.join("\n"))));
  });

  it("use registered codes and kinds only", () => {
    for (const d of check(SOURCE, { a11y: true })) {
      expect(codeInfo(d.code)?.kinds).toContain(d.kind);
      expect(codeInfo(d.code)?.severity).toBe(d.severity);
    }
  });

  it("warnings never count as errors; hasErrors and the write-gate comparison agree", () => {
    const warning: Diagnostic = {
      code: "W0212",
      kind: "ui-event-tile-mismatch",
      severity: "warning",
      location: "reducer.r.body:1",
      message: "w",
    };
    expect(hasErrors([warning])).toBe(false);
    const ds = check(SOURCE);
    expect(hasErrors(ds)).toBe(true);
    expect(newDiagnostics(ds, [...ds, warning])).toEqual([]);
    expect(newDiagnostics([], ds)).toEqual(ds);
    expect(newDiagnostics([], ds, { ignore: ["E0103", "E0201", "E0301", "E0007", "E0802"] })).toEqual([]);
  });

  it("expose their repair as data (autoPatchFor)", () => {
    const typo = check(SOURCE.replace("save(m)", "sav(1)")).find((d) => d.code === "E0104")!;
    expect(autoPatchFor(typo)).toEqual({
      op: "edit",
      layer: "reducer",
      name: "r",
      patch: { "body:1": "replace 'sav' -> 'save'" },
    });
    expect(autoPatchFor(check(SOURCE).find((d) => d.code === "E0201")!)).toBeUndefined();
  });
});

describe("auto-patches without the definitions' source", () => {
  it("anchor on the name when it is unique on its line, and give up rather than guess", async () => {
    const { checkProgram } = await import("../../src/check/check.js");
    const { inputsOf } = await import("./helpers.js");
    const src = `slot users : Int = 0
tile T = text(usres.show)
tile U = text(usres.show + usres.show)
reducer r on=ui.click(T) do= emit toast({kind: "info", text: "x"})
app A
    caps   = []
    routes = {"/" -> T, "/404" -> T}
`;
    const bare = inputsOf(src).map(({ source: _source, ...n }) => n);
    const ds = checkProgram(bare);
    const at = (loc: string) => ds.filter((d) => d.location === loc);
    expect(at("tile.T.body:1")[0]?.["auto-patch"]).toEqual({
      op: "edit",
      layer: "tile",
      name: "T",
      patch: { "body:1": "replace 'usres' -> 'users'" },
    });
    // Twice on one line: no unique anchor without the text.
    expect(at("tile.U.body:1").map((d) => d["auto-patch"])).toEqual([undefined, undefined]);
    // An empty caps list has no name to anchor on.
    expect(at("reducer.r.body:1")[0]).toMatchObject({ code: "E0301" });
    expect(at("reducer.r.body:1")[0]?.["auto-patch"]).toBeUndefined();
    // With the source, the same two get exact anchors.
    const full = checkProgram(inputsOf(src));
    expect(full.filter((d) => d.location === "tile.U.body:1").map((d) => d["auto-patch"])).toEqual([
      {
        op: "edit",
        layer: "tile",
        name: "U",
        patch: { "body:1": "replace 'usres.show +' -> 'users.show +'" },
      },
      { op: "edit", layer: "tile", name: "U", patch: { "body:1": "replace 'usres.show)' -> 'users.show)'" } },
    ]);
  });
});
