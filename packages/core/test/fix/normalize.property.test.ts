import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizePatch } from "../../src/fix/normalize.js";

describe("normalizePatch", () => {
  it("turns a §9.6 auto-patch edit into an edit item, its body:N lines kept for the store to anchor", () => {
    const r = normalizePatch({
      op: "edit",
      layer: "tile",
      name: "TodoRow",
      patch: { "body:2": "replace 'usres' -> 'users'" },
    });
    expect(r).toEqual({
      ok: true,
      value: [{ op: "edit", qname: "tile.TodoRow", patch: { "body:2": "replace 'usres' -> 'users'" } }],
    });
  });

  it("flattens an auto-patch bundle, and takes a whole diagnostic or its JSON text", () => {
    const patch = {
      op: "bundle",
      ops: [
        { op: "add", layer: "tile", name: "NotFound", body: 'page(text("404"))' },
        {
          op: "edit",
          layer: "app",
          name: "A",
          patch: { "body:3": "replace 'Home}' -> 'Home, \"/404\" -> NotFound}'" },
        },
      ],
    };
    const expected = [
      { op: "add", layer: "tile", name: "NotFound", body: 'page(text("404"))' },
      { op: "edit", qname: "app.A", patch: { "body:3": "replace 'Home}' -> 'Home, \"/404\" -> NotFound}'" } },
    ];
    expect(normalizePatch(patch)).toEqual({ ok: true, value: expected });
    const diagnostic = { code: "E0001", kind: "missing-404", location: "app.A.body:1", "auto-patch": patch };
    expect(normalizePatch(diagnostic)).toEqual({ ok: true, value: expected });
    expect(normalizePatch(JSON.stringify(diagnostic))).toEqual({ ok: true, value: expected });
  });

  it("passes a store bundle through, either form", () => {
    const items = [{ op: "rename", qname: "slot.a", newName: "b" }];
    expect(normalizePatch(items)).toEqual({ ok: true, value: items });
    expect(normalizePatch({ ops: items })).toEqual({ ok: true, value: items });
  });

  it("refuses, by path, what is none of these", () => {
    const cases: [unknown, string][] = [
      [42, "expected a bundle"],
      ["{not json", "not JSON"],
      [[], "holds no op"],
      [{ code: "E0201", location: "slot.a.body:1" }, "carries no auto-patch"],
      [{ op: "edit", layer: "tile", name: "T", patch: { line2: "replace 'a' -> 'b'" } }, "not a line key"],
      [{ op: "edit", layer: "tile", name: "T", patch: { "body:2": "swap a b" } }, "replace 'A' -> 'B'"],
      [{ op: "edit", layer: "tile", name: "T", patch: {}, extra: 1 }, 'unknown field "extra"'],
      [{ ops: [{ op: "explode" }] }, "at .ops[0]"],
    ];
    for (const [input, message] of cases) {
      const r = normalizePatch(input);
      expect(r.ok, JSON.stringify(input)).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("invalid-input");
        expect(r.error.message).toContain(message);
      }
    }
  });

  it("never throws, whatever it is given", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const r = normalizePatch(v);
        if (r.ok) expect(r.value.length).toBeGreaterThan(0);
        else expect(r.error.code).toBe("invalid-input");
      }),
      { numRuns: 300 },
    );
  });
});
