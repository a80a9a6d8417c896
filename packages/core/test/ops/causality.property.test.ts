import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Causality, causalOrder } from "../../src/ops/causality.js";
import type { OpId } from "../../src/ops/ids.js";

/** A random DAG: op i's parents are some of ops 0..i-1; ids are random so they need not follow causality. */
const dag = fc
  .array(fc.tuple(fc.array(fc.nat(), { maxLength: 3 }), fc.nat(1_000_000)), { minLength: 1, maxLength: 40 })
  .map((spec) => {
    const ids = spec.map(
      ([, r], i) => `op_${String(r).padStart(13, "0")}${String(i).padStart(13, "0")}` as OpId,
    );
    return spec.map(([ps], i) => ({
      "op-id": ids[i]!,
      "parent-ops": i === 0 ? [] : [...new Set(ps.map((p) => ids[p % i]!))],
    }));
  });

function ancestors(ops: { "op-id": OpId; "parent-ops": readonly OpId[] }[]): Map<OpId, Set<OpId>> {
  const byId = new Map(ops.map((o) => [o["op-id"], o]));
  const memo = new Map<OpId, Set<OpId>>();
  const of = (id: OpId): Set<OpId> => {
    const m = memo.get(id);
    if (m !== undefined) return m;
    const out = new Set<OpId>();
    for (const p of byId.get(id)!["parent-ops"]) {
      out.add(p);
      for (const a of of(p)) out.add(a);
    }
    memo.set(id, out);
    return out;
  };
  for (const o of ops) of(o["op-id"]);
  return memo;
}

describe("causal order", () => {
  it("is topological, the smallest op-id first among ready ops, whatever the input order", () => {
    fc.assert(
      fc.property(dag, fc.infiniteStream(fc.nat()), (ops, rnd) => {
        const shuffled = [...ops];
        const it = rnd[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = it.next().value % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        const a = causalOrder(ops).order.map((o) => o["op-id"]);
        const b = causalOrder(shuffled).order.map((o) => o["op-id"]);
        expect(b).toEqual(a);
        expect(a.length).toBe(ops.length);
        const pos = new Map(a.map((id, i) => [id, i]));
        for (const o of ops)
          for (const p of o["parent-ops"]) expect(pos.get(p)!).toBeLessThan(pos.get(o["op-id"])!);
        // Lexicographically smallest: at each step no ready op had a smaller id.
        const done = new Set<OpId>();
        for (const id of a) {
          const ready = ops.filter((o) => !done.has(o["op-id"]) && o["parent-ops"].every((p) => done.has(p)));
          expect(ready.every((o) => o["op-id"] >= id)).toBe(true);
          done.add(id);
        }
      }),
    );
  });

  it("taking the ops after a placed prefix gives the whole order's tail (what a graph's receive does)", () => {
    fc.assert(
      fc.property(dag, fc.nat(), (ops, cut) => {
        const whole = causalOrder(ops).order;
        const k = cut % (whole.length + 1);
        const placed = new Set(whole.slice(0, k).map((o) => o["op-id"]));
        const rest = ops.filter((o) => !placed.has(o["op-id"]));
        const after = causalOrder(rest, (id) => placed.has(id));
        expect(after.pending).toEqual([]);
        expect(after.order.map((o) => o["op-id"])).toEqual(whole.slice(k).map((o) => o["op-id"]));
      }),
    );
  });

  it("holds back ops whose parents are missing, and their descendants", () => {
    const a = { "op-id": "op_00000000000000000000000001" as OpId, "parent-ops": [] };
    const b = {
      "op-id": "op_00000000000000000000000002" as OpId,
      "parent-ops": ["op_0000000000000000000000000Z" as OpId],
    };
    const c = { "op-id": "op_00000000000000000000000003" as OpId, "parent-ops": [b["op-id"]] };
    const r = causalOrder([c, b, a]);
    expect(r.order).toEqual([a]);
    expect(r.pending.map((o) => o["op-id"])).toEqual([b["op-id"], c["op-id"]]);
  });
});

describe("reachability", () => {
  it("answers happened-before exactly as the transitive closure of parent-ops", () => {
    fc.assert(
      fc.property(dag, (ops) => {
        const c = new Causality();
        for (const o of causalOrder(ops).order) c.append(o);
        const anc = ancestors(ops);
        for (const a of ops) {
          for (const b of ops) {
            const expected = anc.get(b["op-id"])!.has(a["op-id"]);
            expect(c.happenedBefore(a["op-id"], b["op-id"])).toBe(expected);
          }
        }
      }),
    );
  });

  it("rolls back to a mark", () => {
    const c = new Causality();
    const a = { "op-id": "op_00000000000000000000000001" as OpId, "parent-ops": [] };
    const b = { "op-id": "op_00000000000000000000000002" as OpId, "parent-ops": [a["op-id"]] };
    c.append(a);
    const mark = c.mark();
    c.append(b);
    expect(c.headIds()).toEqual([b["op-id"]]);
    c.rollback(mark);
    expect(c.has(b["op-id"])).toBe(false);
    expect(c.headIds()).toEqual([a["op-id"]]);
    expect(c.maxId()).toBe(a["op-id"]);
  });

  it("knows when an op can go after everything without changing the order", () => {
    const c = new Causality();
    const a = { "op-id": "op_00000000000000000000000005" as OpId, "parent-ops": [] };
    c.append(a);
    // Concurrent with a and smaller: it would sort before a.
    expect(c.canAppend({ "op-id": "op_00000000000000000000000001" as OpId, "parent-ops": [] })).toBe(false);
    // Smaller but after a: causally last.
    expect(
      c.canAppend({ "op-id": "op_00000000000000000000000001" as OpId, "parent-ops": [a["op-id"]] }),
    ).toBe(true);
    // Greater: last.
    expect(c.canAppend({ "op-id": "op_00000000000000000000000009" as OpId, "parent-ops": [] })).toBe(true);
    // A parent that is not placed.
    expect(
      c.canAppend({
        "op-id": "op_00000000000000000000000009" as OpId,
        "parent-ops": ["op_0000000000000000000000000X" as OpId],
      }),
    ).toBe(false);
  });
});

describe("the ops of a state", () => {
  it("ancestry(heads) marks those ops and their ancestors; recentPositionOf is positionOf", () => {
    fc.assert(
      fc.property(dag, fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), (ops, picks) => {
        const order = causalOrder(ops).order;
        const c = new Causality();
        for (const o of order) c.append(o);
        const anc = ancestors(ops);
        const heads = picks.map((p) => order[p % order.length]!["op-id"]);
        const expected = new Set(heads.flatMap((h) => [h, ...anc.get(h)!]));
        const marks = c.ancestry(heads.map((h) => c.positionOf(h)!));
        expect(new Set(order.filter((_, i) => marks[i] === 1).map((o) => o["op-id"]))).toEqual(expected);
        // Looked back for before the index is filled, and through it after.
        const d = new Causality();
        for (const o of order) d.append(o);
        for (const round of [0, 1]) {
          for (const o of order) expect(d.recentPositionOf(o["op-id"])).toBe(c.positionOf(o["op-id"]));
          expect(d.recentPositionOf("op_unplaced" as OpId)).toBeUndefined();
          if (round === 0) d.positionOf(order[0]!["op-id"]);
        }
      }),
      { numRuns: 200 },
    );
  });
});
