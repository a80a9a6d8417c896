/**
 * Every write tells the truth about its fate: an op that another writer's concurrent op beat in
 * the merge is reported as lost (which op, which rule, how to retry), never as a plain success.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import type { Store } from "../../src/store/store.js";
import { TestLog } from "../ops/memory-log.js";
import { must, okValue } from "./support.js";

/** A store whose clock is `start` + one per call (op-ids order by time first). */
function storeAt(start: number, author: string, log = new TestLog()): { store: Store; log: TestLog } {
  let t = start;
  return { store: okValue(openStore({ log, author, now: () => t++ })), log };
}

/** A's log: before it stores A's next write, a peer's ops arrive (the write had not seen them). */
function deliverDuringNextAppend(log: TestLog, ops: readonly unknown[]): void {
  const append = log.append.bind(log);
  log.append = async (mine) => {
    log.append = append;
    log.deliver(ops as never);
    return append(mine);
  };
}

describe("a write that lost the merge", () => {
  it("a same-name add beaten by a concurrent one is write-lost, with the conflict and the retry", async () => {
    const a = storeAt(1_800_000_000_000, "agent:a");
    const b = storeAt(1_900_000_000_000, "agent:b");
    const theirs = await must(b.store.add({ layer: "slot", name: "count", body: "Int = 5" }));
    deliverDuringNextAppend(a.log, theirs.ops);
    const r = await a.store.add({ layer: "slot", name: "count", body: "Int = 0" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("write-lost");
    expect(r.error.message).toMatch(/stored but its op op_\w+ was lost in the merge/);
    expect(r.error.message).toMatch(/rename def_\w+ to a free name/);
    const details = r.error.details as {
      stored: boolean;
      lost: { opId: string; status: string; conflict: string }[];
    };
    expect(details.stored).toBe(true);
    expect(details.lost).toHaveLength(1);
    expect(details.lost[0]).toMatchObject({
      status: "lost",
      conflict: `name-taken:${details.lost[0]!.opId}`,
    });
    // The truth is in the graph too: the name shows B's definition, A's is kept as a conflict.
    expect(okValue(a.store.view("slot.count")).text).toContain("Int = 5");
    expect(a.store.conflicts().map((c) => c.id)).toEqual([`name-taken:${details.lost[0]!.opId}`]);
  });

  it("a write that won reports the conflict it recorded, and is a success", async () => {
    const a = storeAt(1_900_000_000_000, "agent:a");
    const b = storeAt(1_800_000_000_000, "agent:b");
    const theirs = await must(b.store.add({ layer: "slot", name: "count", body: "Int = 5" }));
    deliverDuringNextAppend(a.log, theirs.ops);
    const r = await must(a.store.add({ layer: "slot", name: "count", body: "Int = 0" }));
    expect(r.lost).toBeUndefined();
    expect(r.conflicts?.map((c) => c.kind)).toEqual(["name-taken"]);
    expect(okValue(a.store.view("slot.count")).text).toContain("Int = 0");
  });

  it("ops taken in from elsewhere that lose are listed in the receipt's lost", async () => {
    const a = storeAt(1_900_000_000_000, "agent:a");
    const b = storeAt(1_800_000_000_000, "agent:b");
    await must(a.store.add({ layer: "slot", name: "count", body: "Int = 0" }));
    const theirs = await must(b.store.add({ layer: "slot", name: "count", body: "Int = 5" }));
    const r = await must(a.store.ingest(theirs.ops));
    expect(r.lost?.map((f) => [f.opId, f.status])).toEqual([[theirs.opIds[0], "lost"]]);
  });

  it("a plain write reports neither", async () => {
    const a = storeAt(1_800_000_000_000, "agent:a");
    const r = await must(a.store.add({ layer: "slot", name: "count", body: "Int = 0" }));
    expect(r.lost).toBeUndefined();
    expect(r.conflicts).toBeUndefined();
  });
});
