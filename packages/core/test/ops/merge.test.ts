import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import type { DefId, OpId } from "../../src/ops/ids.js";
import type { Op } from "../../src/ops/op.js";
import { dump, OpBuilder, shown } from "./builder.js";

/** Folds the ops in every order given (one by one, as they would arrive) and checks all agree. */
function converge(ops: readonly Op[], orders: readonly (readonly number[])[] = []): Graph {
  const full = Graph.fold(ops);
  const expected = dump(full);
  const all = [ops.map((_, i) => i), ops.map((_, i) => ops.length - 1 - i), ...orders];
  for (const order of all) {
    const g = Graph.empty();
    for (const i of order) g.receive([ops[i]!]);
    expect(dump(g), `arrival order ${order.join(",")}`).toEqual(expected);
  }
  return full;
}

function kinds(g: Graph): string[] {
  return g.conflicts().map((c) => c.kind);
}

describe("add vs add", () => {
  it("same name, concurrent: the greater op-id shows under the name; the other is kept and recoverable", () => {
    const b = new OpBuilder();
    const first = b.add("slot x : Int = 1", { author: "agent:a" });
    const second = b.add("slot x : Int = 2", { author: "agent:b" });
    expect(second["op-id"] > first["op-id"]).toBe(true);
    const g = converge([first, second]);
    expect(shown(g, "slot", "x")).toEqual({ id: second.def, text: "slot x : Int = 2" });
    expect(g.definition(first.def)?.alive).toBe(true);
    expect(g.claimants("slot", "x")).toHaveLength(2);
    const [c] = g.conflicts();
    expect(c).toMatchObject({
      kind: "name-taken",
      ops: [first["op-id"], second["op-id"]],
      definitions: [first.def, second.def],
    });
    expect(c?.retry).toContain(`rename ${first.def}`);
    // Recover the loser by renaming it: the conflict is gone and both show.
    const rename = b.rename(first, "x", "y", { after: [first, second] });
    const g2 = converge([first, second, rename]);
    expect(g2.conflicts()).toEqual([]);
    expect(shown(g2, "slot", "y")?.text).toBe("slot x : Int = 1");
    expect(g2.definition(first.def)?.name).toBe("y");
  });

  it("two adds are two definitions, whatever their names", () => {
    const b = new OpBuilder();
    const g = converge([b.add("slot x : Int = 1"), b.add("slot y : Int = 1"), b.add('tile x = text("x")')]);
    expect(g.status().definitions).toBe(3);
    expect(g.conflicts()).toEqual([]);
  });
});

describe("writes vs remove (add-wins, observed-remove)", () => {
  const cases = [
    ["replace", (b: OpBuilder, t: Op) => b.replace(t, "slot x : Int = 5", { after: [t] })],
    [
      "edit",
      (b: OpBuilder, t: Op) =>
        b.edit(t, [{ find: "= 1", replace: "= 5" }], "slot x : Int = 5", { after: [t], base: t }),
    ],
    ["rename", (b: OpBuilder, t: Op) => b.rename(t, "x", "z", { after: [t] })],
  ] as const;
  for (const [kind, write] of cases) {
    it(`${kind} concurrent with remove: the definition survives, the remove is recorded as overridden`, () => {
      const b = new OpBuilder();
      const t = b.add("slot x : Int = 1");
      const w = write(b, t);
      const r = b.remove(t, "x", { after: [t] });
      const g = converge([t, w, r]);
      expect(g.definition(t.def)?.alive).toBe(true);
      expect(g.isVisible(t.def)).toBe(true);
      expect(g.conflicts()).toMatchObject([{ kind: "remove-overridden", ops: [r["op-id"], w["op-id"]] }]);
    });
  }

  it("a remove that saw the write removes the definition", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const w = b.replace(t, "slot x : Int = 2", { after: [t] });
    const r = b.remove(t, "x", { after: [w] });
    const g = converge([t, w, r]);
    expect(g.definition(t.def)?.alive).toBe(false);
    expect(g.lookup("slot", "x")).toBeUndefined();
    expect(g.conflicts()).toEqual([]);
  });

  it("a write after a remove (a revert) brings the definition back", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const r = b.remove(t, "x", { after: [t] });
    const back = b.replace(t, "slot x : Int = 1", { after: [r], reverts: r["op-id"] });
    const g = converge([t, r, back]);
    expect(g.isVisible(t.def)).toBe(true);
    expect(g.conflicts()).toEqual([]);
  });

  it("remove vs remove: both observe the same writes; the definition is gone", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const g = converge([t, b.remove(t, "x", { after: [t] }), b.remove(t, "x", { after: [t] })]);
    expect(g.definition(t.def)?.alive).toBe(false);
    expect(g.conflicts()).toEqual([]);
  });
});

describe("replace vs replace", () => {
  it("concurrent: the newer ts wins, whatever the op-ids", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const newer = b.replace(t, "slot x : Int = 2", { after: [t], ts: 2_000_000_000_000 });
    const older = b.replace(t, "slot x : Int = 3", { after: [t], ts: 1_000_000_000_000 });
    expect(older["op-id"] > newer["op-id"]).toBe(true);
    const g = converge([t, newer, older]);
    expect(shown(g, "slot", "x")?.text).toBe("slot x : Int = 2");
    expect(g.conflicts()).toMatchObject([{ kind: "replace-lost", ops: [older["op-id"], newer["op-id"]] }]);
  });

  it("concurrent with equal ts: the greater op-id wins", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const r1 = b.replace(t, "slot x : Int = 2", { after: [t], ts: 5 });
    const r2 = b.replace(t, "slot x : Int = 3", { after: [t], ts: 5 });
    const g = converge([t, r1, r2]);
    expect(shown(g, "slot", "x")?.text).toBe("slot x : Int = 3");
  });

  it("a replace that saw the other wins even with an older ts (a causal successor never loses to a skewed clock)", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const r1 = b.replace(t, "slot x : Int = 2", { after: [t], ts: 2_000_000_000_000 });
    const r2 = b.replace(t, "slot x : Int = 3", { after: [r1], ts: 1 });
    const g = converge([t, r1, r2]);
    expect(shown(g, "slot", "x")?.text).toBe("slot x : Int = 3");
    expect(g.conflicts()).toEqual([]);
  });
});

describe("edit vs replace, edit vs edit", () => {
  it("an edit concurrent with a winning replace is rebased onto it when its anchor still matches exactly once", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e = b.edit(t, [{ find: "C)", replace: "D)" }], "tile A = column(B, D)", { after: [t], base: t });
    const r = b.replace(t, "tile A = row(B, C)", { after: [t] });
    const g = converge([t, e, r]);
    expect(shown(g, "tile", "A")?.text).toBe("tile A = row(B, D)");
    expect(g.conflicts()).toEqual([]);
  });

  it("an edit whose anchor no longer matches is a recorded conflict, never a silent drop", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e = b.edit(t, [{ find: "column(B", replace: "column(X" }], "tile A = column(X, C)", {
      after: [t],
      base: t,
    });
    const r = b.replace(t, "tile A = row(B, C)", { after: [t] });
    const g = converge([t, e, r]);
    expect(shown(g, "tile", "A")?.text).toBe("tile A = row(B, C)");
    const [c] = g.conflicts();
    expect(c).toMatchObject({
      kind: "edit-rebase-failed",
      ops: [e["op-id"], r["op-id"]],
      definitions: [t.def],
    });
    expect(c?.reason).toContain("matches nothing");
  });

  it("an edit whose anchor matches twice in the winner is a recorded conflict", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e = b.edit(t, [{ find: "B", replace: "X" }], "tile A = column(X, C)", { after: [t], base: t });
    const r = b.replace(t, "tile A = column(B, B)", { after: [t] });
    const g = converge([t, e, r]);
    expect(shown(g, "tile", "A")?.text).toBe("tile A = column(B, B)");
    expect(g.conflicts()[0]?.reason).toContain("matches 2 times");
  });

  it("a replace that saw a failed edit settles it", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e = b.edit(t, [{ find: "column(B", replace: "column(X" }], "tile A = column(X, C)", {
      after: [t],
      base: t,
    });
    const r = b.replace(t, "tile A = row(B, C)", { after: [t] });
    const fix = b.replace(t, "tile A = row(X, C)", { after: [e, r] });
    const g = converge([t, e, r, fix]);
    expect(shown(g, "tile", "A")?.text).toBe("tile A = row(X, C)");
    expect(g.conflicts()).toEqual([]);
  });

  it("concurrent edits of different parts both apply", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e1 = b.edit(t, [{ find: "B,", replace: "X," }], "tile A = column(X, C)", { after: [t], base: t });
    const e2 = b.edit(t, [{ find: "C)", replace: "Y)" }], "tile A = column(B, Y)", { after: [t], base: t });
    const g = converge([t, e1, e2]);
    expect(shown(g, "tile", "A")?.text).toBe("tile A = column(X, Y)");
  });

  it("concurrent edits of the same part: the one later in causal order is a recorded conflict", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e1 = b.edit(t, [{ find: "B,", replace: "X," }], "tile A = column(X, C)", { after: [t], base: t });
    const e2 = b.edit(t, [{ find: "B,", replace: "Y," }], "tile A = column(Y, C)", { after: [t], base: t });
    const g = converge([t, e1, e2]);
    expect(shown(g, "tile", "A")?.text).toBe("tile A = column(X, C)");
    expect(g.conflicts()).toMatchObject([{ kind: "edit-rebase-failed", ops: [e2["op-id"], e1["op-id"]] }]);
  });

  it("edits concurrent with a replace are rebased in causal order, each on the last", () => {
    const b = new OpBuilder();
    const t = b.add("tile A = column(B, C)");
    const e1 = b.edit(t, [{ find: "C)", replace: "D)" }], "tile A = column(B, D)", { after: [t], base: t });
    const e2 = b.edit(t, [{ find: "D)", replace: "E)" }], "tile A = column(B, E)", { after: [e1], base: e1 });
    const r = b.replace(t, "tile A = row(B, C)", { after: [t] });
    const g = converge(
      [t, e1, e2, r],
      [
        [0, 3, 1, 2],
        [0, 1, 3, 2],
      ],
    );
    expect(shown(g, "tile", "A")?.text).toBe("tile A = row(B, E)");
  });
});

describe("rename", () => {
  it("rename vs rename of one definition: newer ts wins, the other is recorded", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const r1 = b.rename(t, "x", "y", { after: [t], ts: 10 });
    const r2 = b.rename(t, "x", "z", { after: [t], ts: 5 });
    const g = converge([t, r1, r2]);
    expect(g.definition(t.def)?.name).toBe("y");
    expect(g.conflicts()).toMatchObject([{ kind: "rename-lost", ops: [r2["op-id"], r1["op-id"]] }]);
  });

  it("two definitions renamed to one name: the greater claim shows, the other is a recorded conflict", () => {
    const b = new OpBuilder();
    const x = b.add("slot x : Int = 1");
    const y = b.add("slot y : Int = 2", { after: [x] });
    const rx = b.rename(x, "x", "z", { after: [y] });
    const ry = b.rename(y, "y", "z", { after: [y] });
    const g = converge([x, y, rx, ry]);
    expect(g.lookup("slot", "z")).toBe(y.def);
    expect(g.conflicts()).toMatchObject([{ kind: "name-taken", definitions: [x.def, y.def] }]);
  });

  it("rename vs replace and rename vs edit are independent: both apply", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const rn = b.rename(t, "x", "y", { after: [t] });
    const rp = b.replace(t, "slot x : Int = 2", { after: [t] });
    const g = converge([t, rn, rp]);
    expect(g.definition(t.def)?.name).toBe("y");
    expect(g.definition(t.def)?.body.text).toBe("slot x : Int = 2");
    expect(g.conflicts()).toEqual([]);
  });
});

describe("link and unlink", () => {
  it("link re-binds a reference key of the text to another identity; unlink drops the binding", () => {
    const b = new OpBuilder();
    const d1 = b.add('slot draft : Text = ""');
    const d2 = b.add('slot scratch : Text = ""', { after: [d1] });
    const s = b.add("tile Input = input(bind=draft)", { after: [d2], refs: { "slot:draft": d1.def } });
    const l = b.link(s, "Input", "slot:draft", d2.def, { after: [s] });
    const g = converge([d1, d2, s, l]);
    expect(g.definition(s.def)?.body.refs).toEqual({ "slot:draft": d2.def });
    expect(g.referrersOf(d2.def)).toEqual([s.def]);
    expect(g.referrersOf(d1.def)).toEqual([]);
    const u = b.unlink(s, "Input", "slot:draft", { after: [l] });
    const g2 = converge([d1, d2, s, l, u]);
    expect(g2.definition(s.def)?.body.refs).toEqual({});
  });

  it("a link whose reference a concurrent replace removed is a recorded conflict", () => {
    const b = new OpBuilder();
    const d1 = b.add('slot draft : Text = ""');
    const d2 = b.add('slot other : Text = ""', { after: [d1] });
    const s = b.add("tile Input = input(bind=draft)", { after: [d2], refs: { "slot:draft": d1.def } });
    const l = b.link(s, "Input", "slot:draft", d2.def, { after: [s] });
    const r = b.replace(s, "tile Input = input(bind=other)", { after: [s], refs: { "slot:other": d2.def } });
    const g = converge([d1, d2, s, l, r]);
    expect(kinds(g)).toEqual(["link-site-missing"]);
    expect(g.definition(s.def)?.body.refs).toEqual({ "slot:other": d2.def });
  });

  it("link vs link of one key: the later in causal order wins", () => {
    const b = new OpBuilder();
    const d1 = b.add('slot a : Text = ""');
    const d2 = b.add('slot b : Text = ""', { after: [d1] });
    const s = b.add("tile T = input(bind=a)", { after: [d2], refs: { "slot:a": d1.def } });
    const l1 = b.link(s, "T", "slot:a", d2.def, { after: [s] });
    const l2 = b.link(s, "T", "slot:a", d1.def, { after: [s] });
    const g = converge([d1, d2, s, l1, l2]);
    expect(g.definition(s.def)?.body.refs).toEqual({ "slot:a": d1.def });
  });
});

describe("dangling references (conflict policy strict)", () => {
  it("remove of a definition concurrent with an add that references it: both roll back (ai-edit.md §9.4.2)", () => {
    const b = new OpBuilder();
    const draft = b.add('slot draft : Text = ""', { author: "agent:a" });
    const remove = b.remove(draft, "draft", { after: [draft], author: "agent:a" });
    const form = b.add("tile NewForm = input(bind=draft)", {
      after: [draft],
      refs: { "slot:draft": draft.def },
      author: "agent:b",
    });
    const later = b.edit(
      form,
      [{ find: "input", replace: "textarea" }],
      "tile NewForm = textarea(bind=draft)",
      {
        after: [form],
        base: form,
        refs: { "slot:draft": draft.def },
      },
    );
    const g = converge([draft, remove, form, later]);
    expect(g.isVisible(draft.def)).toBe(true);
    expect(g.definition(form.def)).toBeUndefined();
    expect(g.lookup("tile", "NewForm")).toBeUndefined();
    expect(g.isRolledBack(remove["op-id"])).toBe(true);
    expect(g.isRolledBack(form["op-id"])).toBe(true);
    const cs = g.conflicts();
    expect(cs.map((c) => c.id).sort()).toEqual(
      [`orphaned:${later["op-id"]}`, `rolled-back:${form["op-id"]}`, `rolled-back:${remove["op-id"]}`].sort(),
    );
    const rb = cs.find((c) => c.id === `rolled-back:${remove["op-id"]}`)!;
    expect(rb.ops).toEqual([remove["op-id"], form["op-id"]]);
    expect(rb.decision).toContain("strict");
    expect(rb.retry).toContain("remove the references");
  });

  it("a reference that an unrelated rollback brings back rolls back only the remove", () => {
    const b = new OpBuilder();
    const t = b.add("slot t : Int = 0");
    const d = b.add("slot d : Int = 0", { after: [t] });
    const s = b.add("tile S = text(t)", { after: [d], refs: { "slot:t": t.def } });
    // Replica 1 moves S off t and removes t; replica 2 removes d, which nobody referenced there.
    const moved = b.replace(s, "tile S = text(d)", { after: [s], refs: { "slot:d": d.def } });
    const dropT = b.remove(t, "t", { after: [moved] });
    const dropD = b.remove(d, "d", { after: [s] });
    const g = converge([t, d, s, moved, dropT, dropD]);
    // moved ∥ dropD: both roll back; S is back to text(t), whose remove saw that binding: only it rolls back.
    expect(g.definition(s.def)?.body.text).toBe("tile S = text(t)");
    expect(g.isVisible(t.def)).toBe(true);
    expect(g.isVisible(d.def)).toBe(true);
    expect([moved, dropT, dropD].map((o) => g.isRolledBack(o["op-id"]))).toEqual([true, true, true]);
    const dropTRecord = g.conflicts().find((c) => c.id === `rolled-back:${dropT["op-id"]}`);
    expect(dropTRecord?.reason).toContain("which is gone");
  });

  it("removes and references that are not concurrent do not conflict", () => {
    const b = new OpBuilder();
    const t = b.add("slot t : Int = 0");
    const s = b.add("tile S = text(t)", { after: [t], refs: { "slot:t": t.def } });
    const off = b.replace(s, 'tile S = text("x")', { after: [s] });
    const drop = b.remove(t, "t", { after: [off] });
    const g = converge([t, s, off, drop]);
    expect(g.definition(t.def)?.alive).toBe(false);
    expect(g.conflicts()).toEqual([]);
  });
});

describe("ops that cannot apply", () => {
  it("an op whose parents have not arrived waits, then applies", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const r = b.replace(t, "slot x : Int = 2", { after: [t] });
    const g = Graph.empty();
    g.receive([r]);
    expect(g.status().pending).toBe(1);
    expect(g.definition(t.def)).toBeUndefined();
    g.receive([t]);
    expect(g.status().pending).toBe(0);
    expect(g.definition(t.def)?.body.text).toBe("slot x : Int = 2");
  });

  it("an op on a definition that does not exist is recorded as orphaned", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const ghost = {
      ...b.replace(t, "slot x : Int = 2", { after: [t] }),
      def: `def_${"7".repeat(26)}` as DefId,
    };
    const g = converge([t, ghost]);
    expect(g.conflicts()).toMatchObject([{ kind: "orphaned", ops: [ghost["op-id"]] }]);
  });

  it("malformed inputs are quarantined, never folded", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const g = Graph.fold([t, { ...t, "op-id": "op_bad" }, { op: "merge", "op-id": "op_x" }, 42]);
    const q = g.status().quarantined;
    expect(q.map((x) => x.code).sort()).toEqual(
      ["invalid-op-id", "unknown-op-kind", "unknown-op-kind"].sort(),
    );
    expect(g.status().ops).toBe(1);
  });
});

describe("forks", () => {
  it("a discarded fork leaves the graph as it was; a committed one makes its changes the graph's", () => {
    const b = new OpBuilder();
    const t = b.add("slot x : Int = 1");
    const g = Graph.fold([t]);
    const before = dump(g);
    const f = g.fork();
    const r = b.replace(t, "slot x : Int = 2", { after: [t] });
    f.receive([r]);
    expect(f.definition(t.def)?.body.text).toBe("slot x : Int = 2");
    expect(g.definition(t.def)?.body.text).toBe("slot x : Int = 1");
    f.discard();
    expect(dump(g)).toEqual(before);
    const f2 = g.fork();
    f2.receive([r]);
    f2.commit();
    expect(dump(g)).toEqual(dump(Graph.fold([t, r])));
    expect(g.heads()).toEqual([r["op-id"] as OpId]);
  });
});
