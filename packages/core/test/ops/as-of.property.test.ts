/**
 * `Graph.asOf`: the graph as it was at earlier heads, made by undoing the later ops' definitions
 * instead of folding the past again, reads as the fold of the past's ops does — or is refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import type { Layer } from "../../src/lang/layers.js";
import type { DefId } from "../../src/ops/ids.js";
import { dump } from "./builder.js";
import { ACTIONS, type Action, NAMES, run, stepOf } from "./fold-scripts.js";

const LAYERS: readonly Layer[] = ["type", "slot", "tile", "reducer"];

/** What a check reads of a graph's definitions: each one, who shows under each name, who refers to whom. */
function definitionsOf(g: Graph): unknown {
  // dump's definitions (its heads and status are the causal order's, which a fork shares).
  const defs = (dump(g) as { defs: { id: DefId; name: string }[] }).defs.map((d) => ({
    ...d,
    history: [...g.opsOf(d.id)],
    referrers: g.referrersOf(d.id).sort(),
  }));
  const names = LAYERS.flatMap((layer) =>
    [...NAMES, ...defs.map((d) => d.name)].map((name) => ({
      at: `${layer}.${name}`,
      shown: g.lookup(layer, name),
      claimants: [...g.claimants(layer, name)].sort(),
      ever: [...g.everNamed(layer, name)].sort(),
    })),
  );
  return { defs, names, shadowed: [...g.shadowed()].sort() };
}

/**
 * Scripts of definition ops only (a control op among the later ones is refused: tested apart),
 * with definitions under fresh names that reference others, so that removes meet references.
 */
const defSteps = stepOf(["fresh", "fresh", ...ACTIONS] as readonly Action[]);

describe("Graph.asOf", () => {
  it("reads as the fold of the ops of those heads, at every earlier state, and leaves the graph as it was", () => {
    let taken = 0;
    let refused = 0;
    let interleaved = 0;
    fc.assert(
      fc.property(fc.array(defSteps, { minLength: 20, maxLength: 80 }), (script) => {
        const { replicas, written } = run(3, script);
        const g = Graph.fold(written);
        const placed = [...g.ops()];
        const before = dump(g);
        // Every prefix of the causal order, and what each replica holds (often a state whose ops
        // the later ones, another replica's, sit among).
        const states = placed.map((_, i) => placed.slice(0, i + 1));
        for (const r of replicas)
          states.push([...r.g.ops()].filter((o) => r.g.positionOf(o["op-id"]) !== undefined));
        for (const ops of states) {
          if (ops.length === 0 || ops.length === placed.length) continue;
          const expected = Graph.fold(ops);
          const past = g.asOf(expected.heads());
          const ids = new Set(ops.map((o) => o["op-id"]));
          // The state's ops, as graphAt folds them: exactly those, in this graph's order.
          expect(g.opsAt(expected.heads())).toEqual(placed.filter((o) => ids.has(o["op-id"])));
          if (placed.slice(0, ops.length).some((o) => !ids.has(o["op-id"]))) {
            // Not a prefix: folded in another order, with decisions this fold never made.
            interleaved++;
            expect(past).toBeUndefined();
            continue;
          }
          if (past === undefined) {
            refused++;
            continue;
          }
          taken++;
          expect(definitionsOf(past)).toEqual(definitionsOf(expected));
          past.discard();
          expect(dump(g)).toEqual(before);
        }
      }),
      { numRuns: 120 },
    );
    // Most prefixes can be undone to; some cannot (a rollback, a kept dangling edge): both are
    // reached, and states that are not a prefix of the order (refused) too.
    expect(taken).toBeGreaterThan(refused);
    expect(refused).toBeGreaterThan(0);
    expect(interleaved).toBeGreaterThan(10);
  });

  it("is refused for heads not placed, for a fork, and after a control op", () => {
    const { written } = run(2, [
      { kind: "act", replica: 0, action: "fresh", pick: 1 },
      { kind: "act", replica: 1, action: "fresh", pick: 2 },
      { kind: "act", replica: 0, action: "fresh", pick: 3 },
    ]);
    const g = Graph.fold(written);
    const placed = [...g.ops()];
    expect(g.asOf(["op_unknown"])).toBeUndefined();
    const fork = g.fork();
    expect(fork.asOf(Graph.fold(placed.slice(0, 1)).heads())).toBeUndefined();
    fork.discard();
    const withPolicy = run(1, [
      { kind: "act", replica: 0, action: "fresh", pick: 1 },
      { kind: "act", replica: 0, action: "policy", pick: 1 },
    ]).written;
    const h = Graph.fold(withPolicy);
    expect([...h.controlOps()]).toHaveLength(1);
    expect(h.asOf(Graph.fold([...h.ops()].slice(0, 1)).heads())).toBeUndefined();
  });
});
