import { describe, expect, it } from "vitest";
import type { LogOp } from "../../src/ops/op.js";
import { definitionDiff } from "../../src/store/diff.js";
import { fingerprintOps } from "../../src/store/fingerprint.js";
import { draftProgram, must, newStore, okValue, refused } from "./support.js";

const bundle = [
  { op: "add" as const, layer: "slot", name: "note", body: 'Text = ""' },
  { op: "replace" as const, qname: "tile.Counter", body: "column(text(todos.size.show), text(note))" },
  { op: "rename" as const, qname: "slot.draft", newName: "entry" },
];

/** The ops without what is minted afresh at every attempt: op-ids (and the ids adds mint from them), timestamps. */
function shape(ops: readonly LogOp[]): unknown {
  let json = JSON.stringify(ops.map(({ ts: _ts, ...rest }) => rest));
  ops.forEach((op, i) => {
    json = json.replaceAll(op["op-id"], `@${i}`).replaceAll(`def_${op["op-id"].slice(3)}`, `@${i}:def`);
  });
  return JSON.parse(json);
}

describe("preview and fingerprint", () => {
  it("shows the exact ops, a unified diff per definition and a fingerprint, writing nothing", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    const held = JSON.stringify(log.all());
    const p = okValue(store.preview(bundle));
    expect(JSON.stringify(log.all())).toBe(held);
    expect(p.ops.map((o) => o.op)).toEqual(["add", "replace", "rename"]);
    expect(p.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(p.diff).toContain('--- /dev/null\n+++ slot.note\n@@ -0,0 +1,1 @@\n+slot note : Text = ""\n');
    expect(p.diff).toContain(
      "--- tile.Counter\n+++ tile.Counter\n@@ -1,1 +1,1 @@\n-tile Counter = text(todos.size.show)\n+tile Counter = column(text(todos.size.show), text(note))\n",
    );
    // A rename shows on the definition and on what shows its name.
    expect(p.diff).toContain("--- slot.draft\n+++ slot.entry\n");
    expect(p.diff).toContain("+tile Compose = column(input(bind=entry), text(entry))");
    // Previewing again gives the same fingerprint (fresh op-ids and timestamps do not count).
    expect(okValue(store.preview(bundle)).fingerprint).toBe(p.fingerprint);
    // Applying with it writes exactly those ops.
    const r = await must(store.apply(bundle, { expect: p.fingerprint }));
    expect(shape(r.ops)).toEqual(shape(p.ops));
    expect(fingerprintOps(r.ops)).toBe(p.fingerprint);
  });

  it("refuses fingerprint-mismatch when the graph changed in between, writing nothing", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    const p = okValue(store.preview(bundle));
    await must(store.add({ layer: "slot", name: "unrelated", body: "Int = 0" }));
    const e = await refused(log, store.apply(bundle, { expect: p.fingerprint }), "fingerprint-mismatch");
    expect(e.details).toMatchObject({
      expected: p.fingerprint,
      actual: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(e.message).toContain("preview again");
    // A fresh preview on the graph as it is now applies.
    const again = okValue(store.preview(bundle));
    expect(again.fingerprint).not.toBe(p.fingerprint);
    await must(store.apply(bundle, { expect: again.fingerprint }));
  });

  it("refuses what apply refuses, with the same code; another author or other ops have another fingerprint", async () => {
    const { store } = newStore();
    await draftProgram(store);
    const bad = store.preview([{ op: "add", layer: "tile", name: "X", body: "text(nowhere)" }]);
    expect(bad).toMatchObject({ ok: false, error: { code: "undefined-reference" } });
    expect(store.preview([])).toMatchObject({ ok: false, error: { code: "bundle-empty" } });
    expect(store.preview({ ops: [{ op: "explode" }] } as never)).toMatchObject({
      ok: false,
      error: { code: "invalid-input" },
    });
    const p = okValue(store.preview(bundle));
    const other = okValue(store.preview([bundle[0]!]));
    expect(other.fingerprint).not.toBe(p.fingerprint);
    const renamed = p.ops.map((o) => ({ ...o, author: "agent:zz" })) as LogOp[];
    expect(fingerprintOps(renamed)).not.toBe(p.fingerprint);
  });

  it("a remove's preview says what goes, a cascade's every definition", async () => {
    const { store } = newStore();
    await draftProgram(store);
    const p = okValue(store.preview([{ op: "remove", qname: "slot.draft", cascade: true }]));
    expect([...(p.removed ?? [])].sort()).toEqual(["slot.draft", "tile.Compose", "tile.Page"]);
    expect(p.diff).toContain('--- slot.draft\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-slot draft : Text = ""\n');
  });

  it("diffs keep three lines of context and split distant changes into hunks", () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
    const b = a.replace("line 2", "line two").replace("line 17", "line seventeen");
    const d = definitionDiff({ label: "fn.f", text: a }, { label: "fn.f", text: b });
    expect(d.match(/^@@/gm)).toHaveLength(2);
    expect(d).toContain("@@ -1,6 +1,6 @@\n line 0\n line 1\n-line 2\n+line two\n line 3\n");
    expect(definitionDiff({ label: "x", text: a }, { label: "x", text: a })).toBe("");
  });
});
