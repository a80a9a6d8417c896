import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { definitionDiff } from "../../src/store/diff.js";

const lines = (t: string) => {
  const l = t.split("\n");
  if (l[l.length - 1] === "") l.pop();
  return l;
};

/** Checks a unified diff of `a` → `b` hunk by hunk, independently of how it was computed. */
function verify(a: string, b: string, diff: string): void {
  const old = lines(a);
  const neu = lines(b);
  const rows = lines(diff);
  expect(rows.slice(0, 2)).toEqual(["--- s.a", "+++ s.a"]);
  let i = 2;
  let oldAt = 0; // lines of `old` accounted for before the next hunk
  let newAt = 0;
  while (i < rows.length) {
    const m = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(rows[i]!);
    expect(m, rows[i]).not.toBeNull();
    const [os, oc, ns, nc] = m!.slice(1).map(Number) as [number, number, number, number];
    const oStart = oc === 0 ? os : os - 1;
    const nStart = nc === 0 ? ns : ns - 1;
    // Between hunks the two sides are the same lines.
    expect(old.slice(oldAt, oStart)).toEqual(neu.slice(newAt, nStart));
    let k = i + 1;
    const o: string[] = [];
    const n: string[] = [];
    while (k < rows.length && !rows[k]!.startsWith("@@")) {
      const r = rows[k]!;
      if (r[0] !== "+") o.push(r.slice(1));
      if (r[0] !== "-") n.push(r.slice(1));
      k++;
    }
    expect(o).toEqual(old.slice(oStart, oStart + oc));
    expect(n).toEqual(neu.slice(nStart, nStart + nc));
    oldAt = oStart + oc;
    newAt = nStart + nc;
    i = k;
  }
  expect(old.slice(oldAt)).toEqual(neu.slice(newAt));
}

describe("definitionDiff", () => {
  const line = fc.constantFrom("a", "b", "c", "d", "", "x y", "  indented");
  const text = fc.array(line, { maxLength: 30 }).map((l) => l.join("\n"));

  it("is a correct unified diff: the hunks rebuild both sides, and unchanged lines between them match", () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const d = definitionDiff({ label: "s.a", text: a }, { label: "s.a", text: b });
        if (JSON.stringify(lines(a)) === JSON.stringify(lines(b))) {
          expect(d === "" || d === "--- s.a\n+++ s.a\n").toBe(true);
          return;
        }
        verify(a, b, d);
      }),
      { numRuns: 500 },
    );
  });

  it("stays a line diff far past the old LCS table's 4M line pairs (two lines changed, 4,800 apart)", () => {
    const a = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n");
    const b = a.replace("line 100\n", "line 100 changed\n").replace("line 4900\n", "line 4900 changed\n");
    const d = definitionDiff({ label: "s.a", text: a }, { label: "s.a", text: b });
    verify(a, b, d);
    const rows = lines(d);
    expect(rows.filter((r) => r.startsWith("@@"))).toEqual(["@@ -98,7 +98,7 @@", "@@ -4898,7 +4898,7 @@"]);
    expect(rows.filter((r) => /^[-+]line/.test(r))).toEqual([
      "-line 100",
      "+line 100 changed",
      "-line 4900",
      "+line 4900 changed",
    ]);
  });
});
