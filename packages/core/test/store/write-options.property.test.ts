/**
 * Write options (`store.add(input, { author, signal, idempotency })`): one store shared by several
 * clients writes each client's ops as the author its call names, and judges locks as that author;
 * without one, the store's own author writes. A bad option is refused as a value and changes nothing.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";

function shared(log = new MemoryOpLog()): Store {
  const opened = openStore({ log, author: "agent:server" });
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.value;
}

describe("write options", () => {
  it("writes each call's ops as its author, concurrent calls included, and locks as that author", async () => {
    const store = shared();
    const [a, b] = await Promise.all([
      store.add({ layer: "slot", name: "a", body: ": Int = 0" }, { author: "agent:alice" }),
      store.add({ layer: "slot", name: "b", body: ": Int = 0" }, { author: "agent:bob" }),
    ]);
    const own = await store.add({ layer: "slot", name: "c", body: ": Int = 0" });
    if (!a.ok || !b.ok || !own.ok) throw new Error("a write was refused");
    expect([a.value.ops[0]!.author, b.value.ops[0]!.author, own.value.ops[0]!.author]).toEqual([
      "agent:alice",
      "agent:bob",
      "agent:server",
    ]);
    // Alice locks slot.a: bob may not write it (nor preview a bundle that does), alice may.
    const locked = await store.lock(
      { agent: "agent:alice", patterns: ["slot.a"] },
      { author: "agent:alice" },
    );
    expect(locked.ok).toBe(true);
    const refused = await store.replace({ qname: "slot.a", body: ": Int = 1" }, { author: "agent:bob" });
    expect(refused.ok ? "written" : refused.error.code).toBe("locked");
    const previewed = store.preview(
      { ops: [{ op: "replace", qname: "slot.a", body: ": Int = 1" }] },
      {
        author: "agent:bob",
      },
    );
    expect(previewed.ok ? "previewed" : previewed.error.code).toBe("locked");
    const allowed = await store.replace({ qname: "slot.a", body: ": Int = 2" }, { author: "agent:alice" });
    expect(allowed.ok).toBe(true);
    // Only alice lifts her lock: bob's unlock is refused, hers is taken.
    const bobs = await store.unlock({ agent: "agent:alice" }, { author: "agent:bob" });
    expect(bobs.ok ? "unlocked" : bobs.error.code).toBe("locked");
    const hers = await store.unlock({ agent: "agent:alice" }, { author: "agent:alice" });
    expect(hers.ok).toBe(true);
  });

  it("refuses an author that is not an author id, writing nothing", async () => {
    const log = new MemoryOpLog();
    const store = shared(log);
    await store.add({ layer: "slot", name: "a", body: ": Int = 0" });
    const before = JSON.stringify(log.all());
    for (const author of ["not an author", "", "x".repeat(200)]) {
      const r = await store.add({ layer: "slot", name: "b", body: ": Int = 0" }, { author });
      expect(r.ok ? "written" : r.error.code).toBe("invalid-author");
      if (!r.ok) expect(r.error.message).toMatch(/^invalid author .*e\.g\. agent:claude-1/);
      const p = store.preview(
        { ops: [{ op: "add", layer: "slot", name: "b", body: ": Int = 0" }] },
        { author },
      );
      expect(p.ok ? "previewed" : p.error.code).toBe("invalid-author");
    }
    expect(JSON.stringify(log.all())).toBe(before);
  });

  it("every op is authored by the author its write named, in any order of writes (property)", async () => {
    const authors = ["agent:a", "agent:b", "user:c", undefined] as const;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...authors), { minLength: 1, maxLength: 8 }), async (who) => {
        const log = new MemoryOpLog();
        const store = shared(log);
        const receipts = await Promise.all(
          who.map((author, i) =>
            store.add(
              { layer: "slot", name: `n${i}`, body: ": Int = 0" },
              author === undefined ? {} : { author },
            ),
          ),
        );
        expect(receipts.every((r) => r.ok)).toBe(true);
        const ops = receipts.flatMap((r) => (r.ok ? r.value.ops : []));
        const byName = new Map(ops.map((o) => ["name" in o ? o.name : "", o.author]));
        expect(who.map((_, i) => byName.get(`n${i}`))).toEqual(who.map((a) => a ?? "agent:server"));
      }),
      { numRuns: 30 },
    );
  });
});
