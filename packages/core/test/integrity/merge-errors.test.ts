/**
 * `onMergeErrors`: error diagnostics that appear when ops from elsewhere arrive, in a definition
 * this store wrote or in one referencing it, are told once; errors elsewhere, errors that were there
 * before, and arrivals that break nothing tell nothing.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { type MergeErrorNotice, onMergeErrors } from "../../src/integrity/merge-errors.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoredOp } from "../../src/store/op-log.js";
import type { Store } from "../../src/store/store.js";

function storeOn(log: MemoryOpLog, author: string, t0: number): Store {
  let t = t0;
  const r = openStore({ log, author, now: () => t++ });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

async function pair(program: readonly string[]) {
  const seed = storeOn(new MemoryOpLog(), "user:seed", 1_000);
  const added = await seed.apply(program.map((source) => ({ op: "add" as const, source })));
  if (!added.ok) throw new Error(added.error.message);
  const mineLog = new MemoryOpLog<StoredOp>(added.value.ops);
  const peerLog = new MemoryOpLog<StoredOp>(added.value.ops);
  return {
    mine: storeOn(mineLog, "agent:mine", 2_000),
    peer: storeOn(peerLog, "agent:peer", 3_000),
    arrive(ops: readonly StoredOp[], store: Store) {
      mineLog.receive(ops);
      store.refresh();
    },
  };
}

describe("onMergeErrors", () => {
  it("tells the writer of a fn once when a peer's concurrent change of a type breaks it", async () => {
    const { mine, peer, arrive } = await pair(["type Point = { x: Int, y: Int }", "type Size = { w: Int }"]);
    const notices: MergeErrorNotice[] = [];
    const stop = onMergeErrors(mine, (n) => notices.push(n));
    const px = await mine.add({ layer: "fn", name: "px", body: "(p: Point) -> Int = p.x" });
    if (!px.ok) throw new Error(px.error.message);
    const viewed = mine.view("fn.px");
    const pxDef = viewed.ok ? viewed.value.definitions[0]!.def : undefined;
    // A peer's change that breaks nothing of ours: nothing told.
    const calm = await peer.replace({ qname: "type.Size", body: "= { w: Int, h: Int }" });
    if (!calm.ok) throw new Error(calm.error.message);
    arrive(calm.value.ops, mine);
    expect(notices).toEqual([]);
    // The peer drops Point.x, which it saw nobody read: merged, fn.px reads a field Point lacks.
    const drop = await peer.replace({ qname: "type.Point", body: "= { y: Int, z: Int }" });
    if (!drop.ok) throw new Error(drop.error.message);
    arrive(drop.value.ops, mine);
    expect(notices).toHaveLength(1);
    const [n] = notices;
    expect(n!.total).toBe(n!.diagnostics.length);
    expect(n!.diagnostics.length).toBeGreaterThan(0);
    for (const d of n!.diagnostics) {
      expect(d.severity).toBe("error");
      expect(d.definition).toBe(pxDef);
    }
    // Told once: a later arrival leaves the same error standing and tells nothing.
    const more = await peer.add({ layer: "slot", name: "s", body: ": Int = 0" });
    if (!more.ok) throw new Error(more.error.message);
    arrive(more.value.ops, mine);
    expect(notices).toHaveLength(1);
    stop();
  });

  it("tells nothing of errors in definitions this store neither wrote nor is referenced by", async () => {
    const { mine, peer, arrive } = await pair([
      "type Point = { x: Int, y: Int }",
      "fn px(p: Point) -> Int = p.x",
    ]);
    const notices: MergeErrorNotice[] = [];
    onMergeErrors(mine, (n) => notices.push(n));
    const other = await mine.add({ layer: "slot", name: "mine", body: ": Int = 0" });
    if (!other.ok) throw new Error(other.error.message);
    // fn.px was the seed's: its error is not this store's business.
    const drop = await peer.apply([{ op: "replace", qname: "type.Point", body: "= { y: Int }" }], {
      keepErrors: true,
    });
    if (!drop.ok) throw new Error(drop.error.message);
    arrive(drop.value.ops, mine);
    expect(notices).toEqual([]);
  });
});
