/**
 * Idempotent writes: the same key and request are answered with the first write's receipt and
 * written once; another request under the key is refused; a key recorded by a write that never
 * reached the log (a crash between the record and the append) is written when retried.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { FileIdempotencyLedger } from "../../src/store/file-idempotency-ledger.js";
import { type IdempotencyLedger, MemoryIdempotencyLedger } from "../../src/store/idempotency.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";

function store(ledger: IdempotencyLedger = new MemoryIdempotencyLedger(), log = new MemoryOpLog()): Store {
  const r = openStore({ log, author: "agent:test", validators: [], idempotency: ledger });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

const edit = (s: Store, idempotency?: { key: string; request: string }) =>
  s.edit(
    { qname: "slot.n", patch: [{ find: "= 0", replace: "= 0 + 1" }] },
    idempotency ? { idempotency } : {},
  );

describe("idempotent writes", () => {
  it("a retry is answered with the first receipt and writes nothing", async () => {
    const log = new MemoryOpLog();
    const s = store(undefined, log);
    await s.add({ layer: "slot", name: "n", body: ": Int = 0" });
    const first = await edit(s, { key: "k1", request: "edit n" });
    const again = await edit(s, { key: "k1", request: "edit n" });
    expect(first.ok && again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect(again.value.opIds).toEqual(first.value.opIds);
    expect(again.value.replayed).toBe(true);
    expect(first.value.replayed).toBeUndefined();
    expect(log.all()).toHaveLength(2);
    const v = s.view("slot.n");
    expect(v.ok && v.value.text).toBe("slot n : Int = 0 + 1\n");
    // Without a key the same edit is an ordinary write.
    expect((await edit(s)).ok).toBe(true);
    expect(log.all()).toHaveLength(3);
  });

  it("refuses the key with another request, writing nothing", async () => {
    const log = new MemoryOpLog();
    const s = store(undefined, log);
    await s.add(
      { layer: "slot", name: "a", body: ": Int = 0" },
      { idempotency: { key: "k", request: "add a" } },
    );
    const r = await s.add(
      { layer: "slot", name: "b", body: ": Int = 0" },
      { idempotency: { key: "k", request: "add b" } },
    );
    expect(r.ok || r.error.code).toBe("idempotency-key-reused");
    expect(log.all()).toHaveLength(1);
  });

  it("refuses an empty key, writing nothing", async () => {
    const log = new MemoryOpLog();
    const s = store(undefined, log);
    const r = await s.add(
      { layer: "slot", name: "a", body: ": Int = 0" },
      { idempotency: { key: "", request: "x" } },
    );
    expect(r.ok ? "written" : [r.error.code, r.error.message]).toEqual([
      "invalid-input",
      "an idempotency key must be a non-empty string",
    ]);
    expect(log.all()).toHaveLength(0);
  });

  it("writes a recorded key whose ops never reached the log", async () => {
    const ledger = new MemoryIdempotencyLedger();
    ledger.record({ key: "k", request: "add a", opIds: ["op_01KSR4920AZ45X82KX6NBDK1A3"] });
    const log = new MemoryOpLog();
    const s = store(ledger, log);
    const r = await s.add(
      { layer: "slot", name: "a", body: ": Int = 0" },
      { idempotency: { key: "k", request: "add a" } },
    );
    expect(r.ok && r.value.replayed).toBe(undefined);
    expect(log.all()).toHaveLength(1);
    expect(ledger.lookup("k")?.opIds).toEqual([log.all()[0]!["op-id"]]);
  });

  it("a file ledger is shared by two stores, and skips a torn last line", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-idem-"));
    try {
      const file = path.join(dir, "idempotency.jsonl");
      const log = new MemoryOpLog();
      const a = store(new FileIdempotencyLedger(file), log);
      const first = await a.add(
        { layer: "slot", name: "a", body: ": Int = 0" },
        { idempotency: { key: "k", request: "add a" } },
      );
      fs.appendFileSync(file, '{"key":"torn","req');
      const b = store(new FileIdempotencyLedger(file), log);
      const again = await b.add(
        { layer: "slot", name: "a", body: ": Int = 0" },
        { idempotency: { key: "k", request: "add a" } },
      );
      expect(again.ok && first.ok && again.value.opIds).toEqual(first.ok ? first.value.opIds : []);
      expect(log.all()).toHaveLength(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
