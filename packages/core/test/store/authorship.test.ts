/**
 * `withAuthor`: one store shared by several clients writes each client's ops as that client, and
 * judges locks as that client; outside it, the store's own author writes.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { withAuthor } from "../../src/store/authorship.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";

describe("withAuthor", () => {
  it("writes each context's ops as its author, concurrent contexts included, and locks as that author", async () => {
    const opened = openStore({ log: new MemoryOpLog(), author: "agent:server" });
    if (!opened.ok) throw new Error(opened.error.message);
    const store = opened.value;
    const [a, b] = await Promise.all([
      withAuthor("agent:alice", () => store.add({ layer: "slot", name: "a", body: ": Int = 0" })),
      withAuthor("agent:bob", () => store.add({ layer: "slot", name: "b", body: ": Int = 0" })),
    ]);
    const own = await store.add({ layer: "slot", name: "c", body: ": Int = 0" });
    if (!a.ok || !b.ok || !own.ok) throw new Error("a write was refused");
    expect([a.value.ops[0]!.author, b.value.ops[0]!.author, own.value.ops[0]!.author]).toEqual([
      "agent:alice",
      "agent:bob",
      "agent:server",
    ]);
    // Alice locks slot.a: bob may not write it, alice may.
    const locked = await withAuthor("agent:alice", () =>
      store.lock({ agent: "agent:alice", patterns: ["slot.a"] }),
    );
    expect(locked.ok).toBe(true);
    const refused = await withAuthor("agent:bob", () =>
      store.replace({ qname: "slot.a", body: ": Int = 1" }),
    );
    expect(refused.ok ? "written" : refused.error.code).toBe("locked");
    const allowed = await withAuthor("agent:alice", () =>
      store.replace({ qname: "slot.a", body: ": Int = 2" }),
    );
    expect(allowed.ok).toBe(true);
    expect(() => withAuthor("not an author", () => Promise.resolve(1))).toThrow(/invalid author/);
  });
});
