/**
 * A store over a {@link ReadableOpLog} (no `append`: a read-only open, `SnapshotOpLog`) reads as
 * any store does and refuses every write as a value (`read-only`), trying nothing: every write
 * method, a bundle, ops from elsewhere. (Its log used to reject the append with an exception, which
 * the store answered as a storage failure.)
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import { isWritableLog, type StoredOp } from "../../src/store/op-log.js";
import { SnapshotOpLog } from "../../src/store/snapshot-op-log.js";

async function opsOfAProgram(): Promise<StoredOp[]> {
  const log = new MemoryOpLog();
  const opened = openStore({ log, author: "agent:writer" });
  if (!opened.ok) throw new Error(opened.error.message);
  for (const [name, body] of [
    ["count", ": Int = 0"],
    ["twice", ": Int = count + count"],
  ] as const)
    expect((await opened.value.add({ layer: "slot", name, body })).ok).toBe(true);
  return [...log.all()];
}

describe("a store over a read-only log", () => {
  it("reads the ops it was given, and refuses every write as read-only, nothing tried", async () => {
    const ops = await opsOfAProgram();
    const log = new SnapshotOpLog(ops);
    expect(isWritableLog(log)).toBe(false);
    expect(isWritableLog(new MemoryOpLog())).toBe(true);
    const opened = openStore({ log, author: "agent:reader" });
    if (!opened.ok) throw new Error(opened.error.message);
    const store = opened.value;
    const view = store.view("slot.*");
    expect(view.ok && view.value.text).toBe("slot count : Int = 0\nslot twice : Int = count + count\n");
    const writes = [
      store.add({ layer: "slot", name: "more", body: ": Int = 1" }),
      store.replace({ qname: "slot.count", body: ": Int = 2" }),
      store.edit({ qname: "slot.count", patch: [{ find: "0", replace: "3" }] }),
      store.rename({ qname: "slot.count", newName: "total" }),
      store.remove({ qname: "slot.twice" }),
      store.apply({ ops: [{ op: "add", layer: "slot", name: "x", body: ": Int = 0" }] }),
      store.revert(String(ops[0]!["op-id"])),
      store.setConflictPolicy("heal"),
      store.lock({ agent: "agent:reader", patterns: ["slot.*"] }),
      store.undoTask("t"),
      store.ingest(ops),
    ];
    for (const r of await Promise.all(writes)) {
      expect(r.ok ? "written" : r.error.code).toBe("read-only");
      if (!r.ok) expect(r.error.message).toMatch(/opened read-only .* nothing was written/);
    }
    expect(log.all()).toEqual(ops);
    const after = store.view("slot.*");
    expect(after.ok && after.value.text).toBe(view.ok ? view.value.text : "");
  });
});
