/**
 * `Graph.snapshot` and `Graph.fromSnapshot`: a graph taken up from a fold snapshot, reading each
 * definition only when it is looked at, reads as the fold of the same ops — definition by
 * definition before anything walks it, as a whole after — and takes further ops, forks and
 * earlier states as that fold does. A fold holding what a snapshot does not keep is not kept.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { packNumbers, unpackNumbers } from "../../src/graph/fold-snapshot.js";
import { Graph } from "../../src/graph/graph.js";
import type { Layer } from "../../src/lang/layers.js";
import type { DefId } from "../../src/ops/ids.js";
import type { LogOp } from "../../src/ops/op.js";
import { dump } from "./builder.js";
import { ACTIONS, type Action, NAMES, run, shuffle, stepOf } from "./fold-scripts.js";

const LAYERS: readonly Layer[] = ["type", "slot", "tile", "reducer"];

/** The graph `g`'s snapshot, through JSON text as a file keeps it, taken up again; undefined when not kept. */
function restored(g: Graph): Graph | undefined {
  const snap = g.snapshot();
  if (snap === undefined) return undefined;
  const head = JSON.parse(JSON.stringify(snap.head));
  return Graph.fromSnapshot({ head, rows: snap.rows.length, row: (i) => snap.rows[i]! });
}

/** Every read of `g` a write or a check makes, definitions whole (their ops, registers, failures). */
function everything(g: Graph, ids: readonly DefId[]): unknown {
  return {
    dump: dump(g),
    defs: ids.map((id) => ({
      state: g.definition(id),
      history: g.opsOf(id),
      referrers: g.referrersOf(id).sort(),
      label: g.label(id),
      visible: g.isVisible(id),
    })),
    names: LAYERS.flatMap((layer) =>
      NAMES.map((name) => ({
        shown: g.lookup(layer, name),
        // In their order: a snapshot keeps the lists the rows' names do not say as they are.
        claimants: g.claimants(layer, name),
        ever: g.everNamed(layer, name),
      })),
    ),
    shadowed: [...g.shadowed()].sort(),
    ops: [...g.ops()].map((o) => o["op-id"]),
    max: g.maxOpId(),
  };
}

/** What `summaries` gives, without the states. */
const summary = (x: Graph) =>
  [...x.summaries()].map(({ def, layer, name, alive }) => [def, layer, name, alive]);

/** Scripts of definition ops, with fresh names that reference others (removes meet references). */
const defSteps = stepOf(["fresh", "fresh", ...ACTIONS] as readonly Action[]);
/** Scripts of concurrent writes to the same definitions without removes: lost registers, no rollbacks. */
const contestSteps = stepOf(["add", "replace", "replace", "rename", "edit"] as readonly Action[]);
const scripts = fc.oneof(
  fc.array(defSteps, { minLength: 10, maxLength: 70 }),
  fc.array(contestSteps, { minLength: 10, maxLength: 50 }),
);

describe("Graph.fromSnapshot", () => {
  it("reads as the fold, one definition at a time and then whole, and goes on from there as the fold does", () => {
    let kept = 0;
    let notKept = 0;
    let withRecords = 0;
    fc.assert(
      fc.property(scripts, fc.nat(100), (script, cut) => {
        const { written } = run(3, script);
        const all = Graph.fold(written);
        const placed = [...all.ops()];
        // A state of the history (a prefix of the causal order) is kept; the rest arrives after.
        const at = Math.max(1, Math.ceil((placed.length * cut) / 100));
        const g = Graph.fold(placed.slice(0, at));
        const r = restored(g);
        // Another, taking the rest of the history before anything reads or walks it.
        const early = restored(g);
        early?.receive(placed.slice(at));
        if (r === undefined) {
          notKept++;
          return;
        }
        kept++;
        // What a write asks of the whole graph without reading its rows: as the fold answers (of
        // this state, and of the whole history when it is kept too).
        for (const x of [g, all]) {
          const cold = restored(x);
          if (cold === undefined) continue;
          expect(cold.status()).toEqual(x.status());
          expect(cold.conflicts()).toEqual(x.conflicts());
          expect(summary(restored(x)!)).toEqual(summary(x));
          if (x.conflicts().length > 0) withRecords++;
        }
        const ids = [...g.definitions()].map((s) => s.def).sort();
        // Each definition read alone, before anything walks the graph, and the causal questions.
        for (const id of shuffle(ids, cut)) expect(r.definition(id), id).toEqual(g.definition(id));
        for (const a of placed.slice(0, at))
          for (const b of placed.slice(0, Math.min(at, 12)))
            expect(r.happenedBefore(a["op-id"], b["op-id"])).toBe(g.happenedBefore(a["op-id"], b["op-id"]));
        expect(everything(r, ids)).toEqual(everything(g, ids));
        // The rest of the history arrives: in order, then a fork tries and drops more.
        const rest = placed.slice(at);
        r.receive(rest);
        g.receive(rest);
        const allIds = [...all.definitions()].map((s) => s.def).sort();
        expect(everything(r, allIds)).toEqual(everything(all, allIds));
        expect(everything(r, allIds)).toEqual(everything(g, allIds));
        expect(everything(early!, allIds)).toEqual(everything(all, allIds));
      }),
      { numRuns: 150 },
    );
    expect(kept).toBeGreaterThan(notKept);
    // Kept folds with lost registers (records a walk-free conflicts() must still find) are met.
    expect(withRecords).toBeGreaterThan(20);
  });

  it("takes ops that arrive out of order (a re-fold) and forks as the fold does", () => {
    let kept = 0;
    let forked = 0;
    fc.assert(
      fc.property(fc.array(defSteps, { minLength: 10, maxLength: 50 }), fc.nat(), (script, seed) => {
        const { replicas, written } = run(3, script);
        // One replica's own state is kept; every op written arrives, shuffled.
        const g = replicas[seed % 3]!.g;
        const own = Graph.fold([...g.ops()]);
        const r = restored(own);
        if (r === undefined) return;
        kept++;
        const before = dump(r);
        const fork = r.fork();
        // A fork takes only ops that go after everything: one whose parents are held, with a greater id.
        const next = written.find(
          (o) => o["op-id"] > own.maxOpId()! && o["parent-ops"].every((p) => own.holds(p)),
        );
        if (next !== undefined) {
          fork.receive([next]);
          expect(fork.holds(next["op-id"])).toBe(true);
          forked++;
        }
        fork.discard();
        expect(dump(r)).toEqual(before);
        const arriving: LogOp[] = shuffle(written, seed);
        r.receive(arriving);
        own.receive(arriving);
        const ids = [...own.definitions()].map((s) => s.def).sort();
        expect(everything(r, ids)).toEqual(everything(own, ids));
      }),
      { numRuns: 100 },
    );
    expect(kept).toBeGreaterThan(50);
    expect(forked).toBeGreaterThan(10);
  });

  it("keeps the order of a name's claimants and past claimants where the rows' names do not say it", () => {
    // Adds and renames among four names: contests, and names claimed again after a rename.
    const steps = stepOf(["add", "rename"] as readonly Action[]);
    let listed = 0;
    fc.assert(
      fc.property(fc.array(steps, { minLength: 10, maxLength: 60 }), (script) => {
        const g = Graph.fold(run(3, script).written);
        const snap = g.snapshot();
        if (snap === undefined) return;
        if (snap.head.names.length > 0) listed++;
        const r = Graph.fromSnapshot({ head: snap.head, rows: snap.rows.length, row: (i) => snap.rows[i]! });
        for (const layer of LAYERS)
          for (const name of NAMES) {
            expect(r.claimants(layer, name)).toEqual(g.claimants(layer, name));
            expect(r.everNamed(layer, name)).toEqual(g.everNamed(layer, name));
            expect(r.lookup(layer, name)).toBe(g.lookup(layer, name));
          }
      }),
      { numRuns: 300 },
    );
    expect(listed).toBeGreaterThan(2);
  });

  it("is not kept for a fork, or for a fold holding a control op", () => {
    const { written } = run(1, [
      { kind: "act", replica: 0, action: "fresh", pick: 1 },
      { kind: "act", replica: 0, action: "policy", pick: 1 },
    ]);
    const g = Graph.fold(written);
    expect(g.controlOps()).toHaveLength(1);
    expect(g.snapshot()).toBeUndefined();
    const plain = Graph.fold(written.slice(0, 1));
    expect(plain.snapshot()).toBeDefined();
    const fork = plain.fork();
    expect(fork.snapshot()).toBeUndefined();
    fork.discard();
  });

  it("refuses a head that does not fit its rows", () => {
    const { written } = run(1, [{ kind: "act", replica: 0, action: "fresh", pick: 1 }]);
    const snap = Graph.fold(written).snapshot()!;
    const bad = { ...snap.head, owner: [5] };
    expect(() =>
      Graph.fromSnapshot({ head: bad, rows: snap.rows.length, row: (i) => snap.rows[i]! }),
    ).toThrow(/does not fit/);
  });

  it("packs a position list as runs where that is shorter, and unpacks it as it was", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(fc.integer({ min: -1, max: 50 }), { maxLength: 40 }),
          // Runs with breaks, as a mostly linear history's lists are.
          fc
            .array(fc.tuple(fc.integer({ min: -1, max: 9 }), fc.integer({ min: 1, max: 30 })), {
              maxLength: 6,
            })
            .map((steps) => {
              const out: number[] = [];
              let v = 0;
              for (const [step, n] of steps)
                for (let i = 0; i < n; i++) {
                  v += step;
                  out.push(v);
                }
              return out;
            }),
        ),
        (list) => {
          const packed = packNumbers(list);
          const size = Array.isArray(packed) ? packed.length : (packed as { runs: number[] }).runs.length;
          expect(size).toBeLessThanOrEqual(list.length);
          const [lo, hi] = [Math.min(-1, ...list), Math.max(0, ...list)];
          expect(unpackNumbers(JSON.parse(JSON.stringify(packed)), lo, hi)).toEqual(list);
          // A list holding a member out of range is not taken.
          if (list.length > 0) expect(unpackNumbers(packed, lo, Math.max(...list) - 1)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps a linear history's causal order as a few runs, and refuses runs that do not fit", () => {
    const steps = Array.from({ length: 60 }, (_, i) => ({
      kind: "act" as const,
      replica: 0,
      action: (i % 3 === 0 ? "fresh" : "edit") as Action,
      pick: i,
    }));
    const { written } = run(1, steps);
    const g = Graph.fold(written);
    const snap = g.snapshot()!;
    const { causal } = snap.head;
    expect(causal.ids.length).toBe(g.status().ops);
    expect(causal.ids.length).toBeGreaterThan(30);
    for (const list of [causal.parentStart, causal.parentList, causal.dom])
      expect((list as { runs: number[] }).runs.length).toBeLessThanOrEqual(6);
    expect(causal.max).toBe([...causal.ids].sort().at(-1));
    const taken = restored(g)!;
    expect(dump(taken)).toEqual(dump(g));
    const row = (i: number) => snap.rows[i]!;
    const runs = (causal.parentList as { runs: number[] }).runs;
    for (const parentList of [
      { runs: [runs[0], runs[1], runs[2]! + 1] }, // one position past the last op
      { runs: [runs[0], runs[1], 0] },
      { runs: [0.5, 1, 2] },
      { runs: [0, 1] },
    ]) {
      const head = { ...snap.head, causal: { ...causal, parentList } } as typeof snap.head;
      expect(() => Graph.fromSnapshot({ head, rows: snap.rows.length, row })).toThrow(/does not fit/);
    }
    // A greatest op-id below the last op's (a damaged head) would answer a held op as not held.
    const low = { ...snap.head, causal: { ...causal, max: causal.ids[0]! } } as typeof snap.head;
    expect(() => Graph.fromSnapshot({ head: low, rows: snap.rows.length, row })).toThrow(/does not fit/);
    const older = { ...snap.head, v: 1 } as unknown as typeof snap.head;
    expect(() => Graph.fromSnapshot({ head: older, rows: snap.rows.length, row })).toThrow(/does not fit/);
  });
});
