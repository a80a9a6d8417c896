import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import { addsStandAlone } from "../../src/graph/stand-alone.js";
import type { LogOp } from "../../src/ops/op.js";
import { OpBuilder } from "./builder.js";
import { ACTIONS, type Action, run, shuffle, stepOf } from "./fold-scripts.js";

// Many fresh definitions (the case the proof is for) among every other kind of op; in one script
// in four, locks and policies too (after which nothing may be proven).
const plain: Action[] = [...ACTIONS, "fresh", "fresh", "fresh", "fresh", "fresh", "fresh"];
const script = fc.oneof(
  { weight: 3, arbitrary: fc.array(stepOf(plain), { minLength: 5, maxLength: 50 }) },
  { weight: 1, arbitrary: fc.array(stepOf([...plain, "lock", "policy"]), { minLength: 5, maxLength: 50 }) },
);

/** What folding `held` and `received` together records that folding `held` alone does not. */
function newRecords(held: readonly unknown[], received: readonly unknown[]) {
  const before = Graph.fold(held);
  const after = Graph.fold([...held, ...received]);
  const conflicts = new Set(before.conflicts().map((c) => c.id));
  const quarantined = new Set(before.status().quarantined.map((q) => q.opId));
  return [
    ...after
      .conflicts()
      .filter((c) => !conflicts.has(c.id))
      .map((c) => c.id),
    ...after
      .status()
      .quarantined.filter((q) => !quarantined.has(q.opId))
      .map((q) => `quarantined:${q.opId}`),
  ];
}

describe("addsStandAlone", () => {
  it("says the merge records nothing new only when folding says so too, for every history and arrival", () => {
    let proven = 0;
    let provenWithRefs = 0;
    fc.assert(
      fc.property(
        script,
        fc.array(fc.constantFrom<Action>(...Array(24).fill("fresh"), ...ACTIONS), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.nat(1000),
        fc.nat(100),
        fc.boolean(),
        fc.nat(4),
        (steps, later, pick, keep, synced, broken) => {
          const { replicas, written } = run(3, steps);
          // What replica 0 held: its own ops and the partial deliveries it took in, or everything.
          if (synced) replicas[0]!.g.receive(written);
          const held: LogOp[] = [...replicas[0]!.g.ops()];
          const heldIds = new Set(held.map((o) => o["op-id"]));
          // Replica 1 takes in everything, then writes on: what arrives is some of what replica 0 lacks.
          const writer = replicas[1]!;
          writer.g.receive(written);
          const after: LogOp[] = [];
          for (const [i, action] of later.entries()) {
            const op = writer.act(action, pick + i * 7);
            if (op !== undefined) after.push(op);
          }
          const lacking = [...written, ...after].filter((o) => !heldIds.has(o["op-id"]));
          const rest = shuffle(
            lacking.filter((o) => !after.includes(o)),
            pick,
          );
          let received: unknown[] = [
            ...after,
            ...rest.slice(0, Math.floor((rest.length * Math.max(0, keep - 70)) / 100)),
          ];
          if (broken === 0 && after[0] !== undefined) {
            // An op whose body is not text: the fold quarantines it.
            const id = `${after[0]["op-id"].slice(0, -1)}${after[0]["op-id"].endsWith("Z") ? "Y" : "Z"}`;
            received = [
              ...received,
              { ...after[0], "op-id": id, def: `def_${id.slice(3)}`, name: "broken", body: 7 },
            ];
          }
          if (received.length === 0) return;
          const ok = addsStandAlone(held, received);
          if (!ok) return;
          proven++;
          if (received.some((o) => Object.keys((o as { refs?: object }).refs ?? {}).length > 0))
            provenWithRefs++;
          expect(newRecords(held, received)).toEqual([]);
        },
      ),
      { numRuns: 600 },
    );
    // Guards against vacuity: the proof is reached, also for adds that reference other definitions.
    expect(proven).toBeGreaterThan(40);
    expect(provenWithRefs).toBeGreaterThan(15);
  });

  describe("refuses every arrival the merge records something for (each case folds to a new record)", () => {
    const b = new OpBuilder();
    const t = b.add("slot t : Int = 1");
    const x = b.add("tile x = column(t)", { after: [t], refs: { "slot:t": t.def } });
    const y = b.add("slot y : Int = 2", { after: [t] });
    const cases: Record<string, () => { held: unknown[]; received: unknown[] }> = {
      "a name added twice": () => ({ held: [t], received: [y, b.add("slot y : Int = 3", { after: [t] })] }),
      "a name a held definition has": () => ({
        held: [t, b.add("slot y : Int = 9", { after: [t] })],
        received: [y],
      }),
      "a target nothing adds": () => {
        const ghost = b.add("slot ghost : Int = 0");
        return {
          held: [t],
          received: [b.add("tile z = column(ghost)", { after: [t], refs: { "slot:ghost": ghost.def } })],
        };
      },
      "a target added after it": () => {
        const early = b.add("tile early = column(late)", { after: [t] });
        const late = b.add("slot late : Int = 1", { after: [t] });
        return { held: [t], received: [{ ...early, refs: { "slot:late": late.def } }, late] };
      },
      "a target removed": () => ({ held: [t, b.remove(t, "t", { after: [t] })], received: [x] }),
      "a held op that references it, and lived once it came": () => {
        const q = b.add("tile q = column(y)", { refs: { "slot:y": y.def } });
        return { held: [t, q, b.add("tile q = row()")], received: [y] };
      },
      "a name a held rename took": () => {
        const r = b.add("slot r : Int = 3", { after: [t] });
        return { held: [t, r, b.rename(r, "r", "y", { after: [r] })], received: [y] };
      },
      "a held op waiting for it": () => {
        const p = b.add("slot p : Int = 5", { after: [t] });
        const later = b.replace(t, "slot t : Int = 6", { after: [p] });
        return { held: [t, later, b.replace(t, "slot t : Int = 7", { after: [t] })], received: [p] };
      },
      "a target placed after it, the op-ids out of causal order": () => {
        const u = b.add("slot u : Int = 8");
        const v = b.add("tile v = column(u)", { refs: { "slot:u": u.def } });
        const w = b.add("slot w : Int = 9");
        return { held: [{ ...u, "parent-ops": [w["op-id"]] }, w], received: [v] };
      },
      "a held op that fails the schema, which leaves a target waiting": () => {
        const waits = b.add("slot waits : Int = 1", { after: [t] });
        const onIt = b.add("tile onIt = column(waits)", { refs: { "slot:waits": waits.def } });
        return { held: [{ ...t, body: 7 }], received: [waits, onIt] };
      },
      "an op that fails the schema": () => ({ held: [t], received: [{ ...y, body: 7 }] }),
      "a lock": () => {
        const lock = {
          op: "lock",
          agent: "agent:b",
          patterns: ["slot.*"],
          author: "agent:b",
          ts: 1_779_884_546_000,
          "op-id": y["op-id"].replace(/.$/, (c) => (c === "0" ? "1" : "0")),
          "parent-ops": [t["op-id"]],
        };
        return {
          held: [t, lock],
          received: [{ ...b.add("slot z : Int = 1", { after: [t] }), author: "agent:c" }],
        };
      },
    };
    for (const [what, make] of Object.entries(cases)) {
      it(what, () => {
        const { held, received } = make();
        expect(newRecords(held, received)).not.toEqual([]);
        expect(addsStandAlone(held, received)).toBe(false);
      });
    }
    it("and proves the plain arrival: new definitions referencing untouched ones", () => {
      expect(newRecords([t], [x, y])).toEqual([]);
      expect(addsStandAlone([t], [x, y])).toBe(true);
      expect(addsStandAlone([t], [])).toBe(true);
    });
  });
});
