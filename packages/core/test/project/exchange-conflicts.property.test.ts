/**
 * Two workspaces that exchange ops only as files (§9.3.2): A imports a corpus program, B starts
 * EMPTY and takes A's ops; then both make concurrent, conflicting edits — a same-name add, a remove
 * against an add that references what it removes, a rename against a remove, a replace against a
 * replace — and exchange both ways. Both end identical: program text, every hash, every conflict.
 * Then the same as a fast-check property over random edit sequences on both sides.
 */

import { corpusProgram, corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { exportProgram, importProgram } from "../../src/project/program.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoredOp } from "../../src/store/op-log.js";
import type { Store } from "../../src/store/store.js";
import { observe } from "../store/support.js";
import { must } from "./helpers.js";

function replica(author: string, skew: number): { store: Store; log: MemoryOpLog } {
  const log = new MemoryOpLog();
  let t = 1_790_000_000_000 + skew;
  const r = openStore({ log, author, now: () => (t += 7) });
  if (!r.ok) throw new Error(r.error.message);
  return { store: r.value, log };
}

/** Every op of `from`, as a file would carry them (JSON), taken into `to`. */
async function send(from: Store, to: Store): Promise<void> {
  const ops = JSON.parse(JSON.stringify([...from.read().graph.ops()])) as StoredOp[];
  must(await to.ingest(ops));
}

async function exchange(a: Store, b: Store): Promise<void> {
  await send(a, b);
  await send(b, a);
}

/** A: the program imported; B: empty, then A's ops; both with the fixture definitions the edits use. */
async function pair(source: string) {
  const a = replica("agent:a", 0);
  const b = replica("agent:b", 3);
  must(await importProgram(a.store, source));
  must(
    await a.store.apply([
      { op: "add", layer: "slot", name: "zzRenamed", body: "Int = 0" },
      { op: "add", layer: "slot", name: "zzRemoved", body: "Int = 0" },
      { op: "add", layer: "slot", name: "zzReplaced", body: "Int = 0" },
    ]),
  );
  await send(a.store, b.store);
  expect(exportProgram(b.store)).toBe(exportProgram(a.store));
  return { a: a.store, b: b.store };
}

describe.skipIf(!hasCorpus)(
  "concurrent conflicting edits, exchanged both ways, on every corpus program",
  () => {
    const programs = corpusPrograms();
    it.each(programs.map((p) => [p.id, p] as const))("%s", async (_id, p) => {
      const a0 = replica("agent:probe", 0);
      if (!(await importProgram(a0.store, p.source)).ok) return; // a program with errors: the repair-loop issue's
      const { a, b } = await pair(p.source);
      // Concurrently, neither having seen the other's:
      must(await a.add({ layer: "slot", name: "zzSame", body: "Int = 1" })); // same-name add
      must(await b.add({ layer: "slot", name: "zzSame", body: "Int = 2" }));
      must(await a.remove({ qname: "slot.zzRemoved" })); // remove vs add that references it
      must(await b.add({ layer: "tile", name: "ZzUses", body: "text(zzRemoved.show)" }));
      must(await a.rename({ qname: "slot.zzRenamed", newName: "zzRenamedByA" })); // rename vs remove
      must(await b.remove({ qname: "slot.zzRenamed" }));
      must(await a.replace({ qname: "slot.zzReplaced", body: "Int = 10" })); // replace vs replace
      must(await b.replace({ qname: "slot.zzReplaced", body: "Int = 20" }));
      await exchange(a, b);
      expect(exportProgram(b)).toBe(exportProgram(a));
      expect(observe(b)).toEqual(observe(a));
      const kinds = a.conflicts().map((c) => c.kind);
      expect(kinds).toContain("name-taken");
      expect(kinds).toContain("replace-lost");
      expect(kinds).toContain("remove-overridden");
    });
  },
);

/** One random edit on one side (refusals are part of the game). */
async function edit(s: Store, kind: number, n: number): Promise<void> {
  const list = s.list();
  if (!list.ok) return;
  const slots = list.value.filter((d) => d.layer === "slot");
  const slot = slots[n % Math.max(1, slots.length)];
  switch (kind % 5) {
    case 0:
      await s.add({ layer: "slot", name: `zzN${n % 3}`, body: `Int = ${n}` });
      return;
    case 1:
      if (slot !== undefined)
        await s.add({ layer: "tile", name: `ZzT${n % 4}`, body: `text(${slot.name}.show)` });
      return;
    case 2:
      if (slot !== undefined) await s.remove({ qname: slot.qname });
      return;
    case 3:
      if (slot !== undefined) await s.rename({ qname: slot.qname, newName: `zzR${n % 5}` });
      return;
    default:
      if (slot !== undefined) await s.replace({ qname: "slot.zzReplaced", body: `Int = ${n}` });
  }
}

describe.skipIf(!hasCorpus)("random concurrent edit sequences on both sides (property)", () => {
  it("converge to one program, one set of hashes and one set of conflicts", {
    timeout: 120_000,
  }, async () => {
    const source = corpusProgram("apps/01-counter/app.kumiki")!.source;
    const step = fc.tuple(fc.boolean(), fc.nat(9), fc.nat(1_000), fc.boolean());
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const { a, b } = await pair(source);
        for (const [onA, kind, n, sync] of steps) {
          await edit(onA ? a : b, kind, n);
          if (sync) await send(onA ? a : b, onA ? b : a);
        }
        await exchange(a, b);
        expect(exportProgram(b)).toBe(exportProgram(a));
        expect(observe(b)).toEqual(observe(a));
      }),
      { numRuns: 40, seed: Number(process.env.KUMIKI_PROPERTY_SEED ?? 17) },
    );
  });
});
