/**
 * `Store.onLoss`: a write this store answered as done, later decided against by the merge with ops
 * that arrive from elsewhere, is told to the store's loss listeners once, with its conflict record
 * and how to retry; ops that arrive and beat nobody's write of ours tell nothing. And the cancelled
 * write (its `signal` option) and the request of several writes under one key (`Store.once`).
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import type { OpId } from "../../src/ops/ids.js";
import { MemoryIdempotencyLedger } from "../../src/store/idempotency.js";
import type { LossNotice } from "../../src/store/loss-watch.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoredOp } from "../../src/store/op-log.js";
import { ok } from "../../src/store/result.js";
import type { Store } from "../../src/store/store.js";

function storeOn(log: MemoryOpLog, author: string, t0: number): Store {
  let t = t0;
  const r = openStore({ log, author, now: () => t++, idempotency: new MemoryIdempotencyLedger() });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

describe("Store.onLoss", () => {
  it("tells the writer once when a peer's concurrent replace wins, and nothing for writes that stand", async () => {
    const seed = storeOn(new MemoryOpLog(), "user:seed", 1_000);
    const added = await seed.apply([
      { op: "add", source: "slot x : Int = 0" },
      { op: "add", source: "slot y : Int = 0" },
    ]);
    if (!added.ok) throw new Error(added.error.message);
    const initial = added.value.ops;
    const mineLog = new MemoryOpLog<StoredOp>(initial);
    const peerLog = new MemoryOpLog<StoredOp>(initial);
    const mine = storeOn(mineLog, "agent:mine", 2_000);
    const peer = storeOn(peerLog, "agent:peer", 3_000);
    const notices: LossNotice[] = [];
    mine.onLoss((n) => notices.push(n));

    const x = await mine.replace({ qname: "slot.x", body: ": Int = 1" });
    const y = await mine.replace({ qname: "slot.y", body: ": Int = 1" });
    if (!x.ok || !y.ok) throw new Error("the writes were refused");
    // The peer replaces x later (newer ts wins) and adds an unrelated slot.
    const theirs = await peer.replace({ qname: "slot.x", body: ": Int = 2" });
    const other = await peer.add({ layer: "slot", name: "z", body: ": Int = 0" });
    if (!theirs.ok || !other.ok) throw new Error("the peer's writes were refused");

    mineLog.receive(other.value.ops);
    mine.refresh();
    expect(notices).toEqual([]);
    mineLog.receive(theirs.value.ops);
    mine.refresh();
    expect(notices).toHaveLength(1);
    const [n] = notices;
    expect(n!.met).toEqual([]);
    expect(n!.lost.map((f) => [f.opId, f.status])).toEqual([[x.value.opIds[0], "lost"]]);
    expect(n!.lost[0]!.retry.length).toBeGreaterThan(0);
    expect(n!.conflicts.map((c) => c.id)).toContain(n!.lost[0]!.conflict);
    // Told once: more arrivals tell nothing new.
    mineLog.receive([...theirs.value.ops, ...other.value.ops]);
    const more = await peer.add({ layer: "slot", name: "w", body: ": Int = 0" });
    if (!more.ok) throw new Error(more.error.message);
    mineLog.receive(more.value.ops);
    mine.refresh();
    expect(notices).toHaveLength(1);
    expect(mine.view("slot.x").ok && mine.view("slot.x")).toMatchObject({
      value: { text: "slot x : Int = 2\n" },
    });
  });

  it("tells the winner of a same-name add that its write met another (two definitions of one name)", async () => {
    const initial: StoredOp[] = [];
    const mineLog = new MemoryOpLog<StoredOp>(initial);
    const peer = storeOn(new MemoryOpLog<StoredOp>(initial), "agent:peer", 1_000);
    const mine = storeOn(mineLog, "agent:mine", 5_000);
    const notices: LossNotice[] = [];
    mine.onLoss((n) => notices.push(n));
    // The peer's add is older (smaller op-id): ours keeps the name, theirs is kept hidden.
    const theirs = await peer.add({ layer: "slot", name: "n", body: ": Int = 1" });
    const ours = await mine.add({ layer: "slot", name: "n", body: ": Int = 2" });
    if (!theirs.ok || !ours.ok) throw new Error("the adds were refused");
    mineLog.receive(theirs.value.ops);
    mine.refresh();
    expect(notices.map((n) => [n.lost.length, n.met.map((c) => c.kind)])).toEqual([[0, ["name-taken"]]]);
    expect(notices[0]!.met[0]!.ops).toContain(ours.value.opIds[0]);
    mine.refresh();
    expect(notices).toHaveLength(1);
  });

  it("a write whose signal is aborted before it is stored stores nothing (cancelled)", async () => {
    const log = new MemoryOpLog();
    const s = storeOn(log, "agent:c", 1_000);
    const controller = new AbortController();
    controller.abort();
    const r = await s.add({ layer: "slot", name: "n", body: ": Int = 0" }, { signal: controller.signal });
    expect(r.ok ? "stored" : r.error.code).toBe("cancelled");
    expect(log.all()).toHaveLength(0);
    // Aborted while it waits for its turn behind another write: still nothing of it stored.
    const late = new AbortController();
    const first = s.add({ layer: "slot", name: "a", body: ": Int = 0" });
    const second = s.add({ layer: "slot", name: "b", body: ": Int = 0" }, { signal: late.signal });
    late.abort();
    expect((await first).ok).toBe(true);
    const b = await second;
    expect(b.ok ? "stored" : b.error.code).toBe("cancelled");
    expect(log.all().map((o) => ("name" in o ? o.name : ""))).toEqual(["a"]);
  });

  it("Store.once runs a request once under a key and answers a retry with its recorded answer", async () => {
    const s = storeOn(new MemoryOpLog(), "agent:o", 1_000);
    let runs = 0;
    const run = async () => {
      runs++;
      const r = await s.add({ layer: "slot", name: `n${runs}`, body: ": Int = 0" });
      return r.ok ? ok({ opIds: [...r.value.opIds] as OpId[] }) : r;
    };
    const first = await s.once("k", "add", run);
    const again = await s.once("k", "add", run);
    expect(runs).toBe(1);
    expect(again).toEqual({ ok: true, value: { ...(first.ok ? first.value : {}), replayed: true } });
    const other = await s.once("k", "something else", run);
    expect(other.ok ? "ran" : other.error.code).toBe("idempotency-key-reused");
    // A retry made while the first run is still going waits for it and gets its answer.
    const slow = s.once("k2", "add", run);
    const retry = s.once("k2", "add", run);
    const [a, b] = await Promise.all([slow, retry]);
    expect(runs).toBe(2);
    expect(b).toEqual({ ok: true, value: { ...(a.ok ? a.value : {}), replayed: true } });
  });
});
