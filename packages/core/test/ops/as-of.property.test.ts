/**
 * `Graph.asOf`: the graph as it was at earlier heads, made by undoing the later ops' definitions
 * instead of folding the past again, reads as the fold of the past's ops does — or is refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import type { Layer } from "../../src/lang/layers.js";
import { dump } from "./builder.js";
import { ACTIONS, type Action, NAMES, run, stepOf } from "./fold-scripts.js";

const LAYERS: readonly Layer[] = ["type", "slot", "tile", "reducer"];

/** What a check reads of a graph's definitions: each one, who shows under each name, who refers to whom. */
function definitionsOf(g: Graph): unknown {
  const defs = [...g.definitions()]
    .sort((a, b) => (a.def < b.def ? -1 : 1))
    .map((s) => ({
      id: s.def,
      layer: s.layer,
      name: s.name,
      alive: s.alive,
      visible: g.isVisible(s.def),
      text: s.body.text,
      refs: Object.entries(s.body.refs).sort(),
      version: s.body.version,
      history: [...s.history],
      referrers: g.referrersOf(s.def).sort(),
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
    fc.assert(
      fc.property(fc.array(defSteps, { minLength: 20, maxLength: 80 }), (script) => {
        const { written } = run(3, script);
        const g = Graph.fold(written);
        const placed = [...g.ops()];
        const before = dump(g);
        for (let length = 1; length < placed.length; length++) {
          const prefix = Graph.fold(placed.slice(0, length));
          const past = g.asOf(prefix.heads());
          if (past === undefined) {
            refused++;
            continue;
          }
          taken++;
          expect(definitionsOf(past)).toEqual(definitionsOf(prefix));
          past.discard();
          expect(dump(g)).toEqual(before);
        }
      }),
      { numRuns: 120 },
    );
    // Most states can be undone to; some cannot (a rollback, a kept dangling edge): both are reached.
    expect(taken).toBeGreaterThan(refused);
    expect(refused).toBeGreaterThan(0);
  });

  it("is refused for heads that are not a prefix of the causal order, for a fork, and after a control op", () => {
    const { written } = run(2, [
      { kind: "act", replica: 0, action: "fresh", pick: 1 },
      { kind: "act", replica: 1, action: "fresh", pick: 2 },
      { kind: "act", replica: 0, action: "fresh", pick: 3 },
      { kind: "act", replica: 1, action: "fresh", pick: 4 },
    ]);
    const g = Graph.fold(written);
    const placed = [...g.ops()];
    // Two writers who never synced: each one's ops alone are a state, but not a prefix of the order.
    const mine = placed.filter((o) => o.author === placed[placed.length - 1]!.author);
    expect(mine.length).toBeLessThan(placed.length);
    expect(g.asOf(Graph.fold(mine).heads())).toBeUndefined();
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
