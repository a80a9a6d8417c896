import { describe, expect, it } from "vitest";
import { applyPatch, describePatchFailure } from "../../src/ops/patch.js";

const TEXT = 'reducer clear on=ui.click(ClearBtn) do=\n  draft := ""   \n  count := 0\n';

describe("edit anchors", () => {
  it("replace text that occurs exactly once", () => {
    const r = applyPatch(TEXT, [{ find: "count := 0", replace: "count := 1" }]);
    expect(r).toEqual({ ok: true, text: TEXT.replace("count := 0", "count := 1") });
  });

  it("refuse an anchor that matches nothing", () => {
    const r = applyPatch(TEXT, [{ find: "count := 2", replace: "x" }]);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure).toMatchObject({ code: "anchor-not-found", anchor: 0 });
      expect(describePatchFailure(r.failure)).toContain("matches nothing");
    }
  });

  it("refuse an anchor that matches twice, naming the lines", () => {
    const r = applyPatch(TEXT, [{ find: ":=", replace: "=" }]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure).toMatchObject({ code: "anchor-ambiguous", matches: 2, lines: [2, 3] });
  });

  it("count overlapping occurrences as ambiguous", () => {
    const r = applyPatch("slot aaa : Int = 0", [{ find: "aa", replace: "b" }]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.code).toBe("anchor-ambiguous");
  });

  it("tolerate trailing whitespace on either side, and nothing else", () => {
    // The text has three spaces after `draft := ""`; the anchor has none, then a tab.
    const r1 = applyPatch(TEXT, [{ find: 'draft := ""\n  count', replace: 'draft := "x"\n  count' }]);
    expect(r1).toEqual({ ok: true, text: TEXT.replace('draft := ""   \n  count', 'draft := "x"\n  count') });
    const r2 = applyPatch(TEXT, [{ find: "count := 0\t ", replace: "count := 9" }]);
    expect(r2).toEqual({ ok: true, text: TEXT.replace("count := 0", "count := 9") });
    // Leading whitespace and inner spacing are not tolerated.
    expect(applyPatch(TEXT, [{ find: "count :=  0", replace: "x" }]).ok).toBe(false);
    expect(applyPatch(TEXT, [{ find: "\ncount := 0", replace: "x" }]).ok).toBe(false);
  });

  it("apply several anchors against the same text, all or nothing", () => {
    const both = applyPatch(TEXT, [
      { find: "ClearBtn", replace: "WipeBtn" },
      { find: "count := 0", replace: "count := 1" },
    ]);
    expect(both.ok && both.text).toBe(
      TEXT.replace("ClearBtn", "WipeBtn").replace("count := 0", "count := 1"),
    );
    const one = applyPatch(TEXT, [
      { find: "ClearBtn", replace: "WipeBtn" },
      { find: "missing", replace: "x" },
    ]);
    expect(one.ok).toBe(false);
    if (!one.ok) expect(one.failure).toMatchObject({ code: "anchor-not-found", anchor: 1 });
  });

  it("refuse overlapping anchors and empty ones", () => {
    const r = applyPatch(TEXT, [
      { find: "ui.click(ClearBtn)", replace: "a" },
      { find: "ClearBtn) do=", replace: "b" },
    ]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure).toMatchObject({ code: "anchors-overlap", anchor: 1, other: 0 });
    const e = applyPatch(TEXT, [{ find: "   ", replace: "x" }]);
    expect(e.ok).toBe(false);
    if (!e.ok) expect(e.failure.code).toBe("anchor-empty");
  });
});
