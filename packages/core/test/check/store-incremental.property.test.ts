import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LiveCheck } from "../../src/integrity/live.js";
import { checkStore } from "../../src/integrity/store-check.js";
import type { Store } from "../../src/store/store.js";
import { COUNTER_PROGRAM, seedMistake, storeOf } from "./store-support.js";

const PROGRAM = COUNTER_PROGRAM;

/** One change to the graph: a write through the gate (it may be refused), or a peer's mistake. */
type Step = (store: Store) => Promise<unknown>;

const steps: fc.Arbitrary<Step>[] = [
  fc.constantFrom("count", "total", "n").map((to) => async (s: Store) => {
    const from =
      s.read().lookup("slot", "count") ?? s.read().lookup("slot", "total") ?? s.read().lookup("slot", "n");
    if (from !== undefined && from.name !== to) await s.rename({ qname: from.qname, newName: to });
  }),
  fc.constantFrom("IncBtn", "PlusBtn").map((to) => async (s: Store) => {
    const from = s.read().lookup("tile", "IncBtn") ?? s.read().lookup("tile", "PlusBtn");
    if (from !== undefined && from.name !== to) await s.rename({ qname: from.qname, newName: to });
  }),
  fc.constantFrom('"hi"', '"ho"', "1", "true").map((v) => async (s: Store) => {
    await s.replace({ qname: "slot.label", body: `Text = ${v}` });
  }),
  fc.constantFrom("a", "b").map((name) => async (s: Store) => {
    await s.add({ layer: "slot", name, body: "Int = 2" });
  }),
  fc.constantFrom("a", "b").map((name) => async (s: Store) => {
    await s.remove({ qname: `slot.${name}` });
  }),
  fc.constantFrom("Active", "Actve", "Done").map((v) => async (s: Store) => {
    const pick = s.read().lookup("reducer", "pick");
    const m = pick === undefined ? null : /filter := (\w+)/.exec(pick.text);
    if (m !== null && m[1] !== v) await seedMistake(s, `filter := ${m[1]}`, `filter := ${v}`);
  }),
  fc.constantFrom("0", "false").map((v) => async (s: Store) => {
    const slot = s
      .read()
      .definitions()
      .find((d) => d.layer === "slot" && /: Int = \d+$/m.test(d.text));
    if (slot !== undefined)
      await seedMistake(s, slot.text.trim(), slot.text.trim().replace(/= \d+$/, `= ${v}`));
  }),
];

describe("checkStore is incremental and exact", () => {
  it("after any sequence of writes and peer ops, equals a fresh full check of the graph", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(...steps), { minLength: 1, maxLength: 8 }), async (seq) => {
        const store = await storeOf(PROGRAM);
        checkStore(store);
        for (const step of seq) {
          await step(store);
          const incremental = checkStore(store).diagnostics;
          const fresh = new LiveCheck(store.read().graph, {}).diagnostics();
          expect(incremental).toEqual(fresh);
        }
      }),
      { numRuns: 30 },
    );
  });
});
