import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import { dump } from "./builder.js";
import { ACTIONS, run, shuffle, stepOf } from "./fold-scripts.js";

const step = stepOf(ACTIONS);

describe("the fold", () => {
  it("replicas that exchange all their ops end with identical graphs, equal to the fold of the op set", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 5 }),
        fc.array(step, { minLength: 5, maxLength: 60 }),
        fc.nat(),
        (n, script, seed) => {
          const { replicas, written } = run(n, script);
          // Full exchange, in a different random order for each replica, in several batches.
          replicas.forEach((r, i) => {
            const ops = shuffle(written, seed + i);
            const cut = Math.floor(ops.length / 2);
            r.g.receive(ops.slice(0, cut));
            r.g.receive(ops.slice(cut));
          });
          const expected = dump(Graph.fold(written));
          for (const r of replicas) expect(dump(r.g)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("shadowed() is every live definition isVisible says does not show, in every graph (name contests included)", () => {
    let contests = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 5, maxLength: 60 }), (script) => {
        const { replicas, written } = run(3, script);
        for (const g of [Graph.fold(written), ...replicas.map((r) => r.g)]) {
          const expected = new Set(
            [...g.definitions()].filter((s) => s.alive && !g.isVisible(s.def)).map((s) => s.def),
          );
          expect(g.shadowed()).toEqual(expected);
          if (expected.size > 0) contests++;
        }
      }),
      { numRuns: 150 },
    );
    // The scripts must reach name contests, or the property says nothing about them.
    expect(contests).toBeGreaterThan(0);
  });

  it("is independent of the order of the ops: fold(permutation(ops)) is the same graph", () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 5, maxLength: 50 }),
        fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
        (script, seeds) => {
          const { written } = run(3, script);
          const expected = dump(Graph.fold(written));
          for (const s of seeds) {
            expect(dump(Graph.fold(shuffle(written, s)))).toEqual(expected);
            // One op at a time, in that order: the incremental path gives the same graph as a re-fold.
            const g = Graph.empty();
            for (const op of shuffle(written, s + 1)) g.receive([op]);
            expect(dump(g)).toEqual(expected);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("takes ops known to pass the wire schema (wireChecked) to the same graph, and still quarantines one after them", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 5, maxLength: 50 }), fc.nat(), (script, seed) => {
        const { written } = run(3, script);
        const ops = shuffle(written, seed);
        const expected = dump(Graph.fold(ops));
        const checked = seed % (ops.length + 1);
        expect(dump(Graph.fold(ops, { wireChecked: checked }))).toEqual(expected);
        // Past the checked ones every op is checked: one that fails the schema is quarantined.
        const broken = { ...ops[0], "op-id": "op_not-an-id" };
        const withBroken = Graph.fold([...ops, broken], { wireChecked: ops.length });
        expect(withBroken.status().quarantined.map((q) => q.opId)).toEqual(["op_not-an-id"]);
        expect(dump(withBroken)).toEqual(dump(Graph.fold([...ops, broken])));
      }),
      { numRuns: 100 },
    );
  });

  it("the scripts reach every op kind and real conflicts", () => {
    // Guards the two properties above against vacuity: the generated histories are not trivial.
    const kinds = new Set<string>();
    const conflictKinds = new Set<string>();
    fc.assert(
      fc.property(fc.array(step, { minLength: 30, maxLength: 60 }), (script) => {
        const { written } = run(3, script);
        for (const o of written) kinds.add(o.op);
        for (const c of Graph.fold(written).conflicts()) conflictKinds.add(c.kind);
      }),
      { numRuns: 200 },
    );
    expect([...kinds].sort()).toEqual(["add", "edit", "link", "remove", "rename", "replace", "unlink"]);
    for (const k of ["name-taken", "replace-lost", "rolled-back", "remove-overridden"])
      expect(conflictKinds).toContain(k);
  });
});
