import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { TestLog } from "../ops/memory-log.js";
import { must, newStore, observe, refused, replicas, text } from "./support.js";

const draftOnly = async (s: import("../../src/store/store.js").Store) => {
  await must(s.add({ layer: "slot", name: "draft", body: 'Text = ""' }));
};

describe("the conflict policy as graph state", () => {
  it("is strict by default; a config op sets it; a bad or unchanged value is refused and writes nothing", async () => {
    const { store, log } = newStore();
    expect(store.conflictPolicy()).toBe("strict");
    const bad = await refused(log, store.setConflictPolicy("lenient"), "invalid-policy");
    expect(bad.message).toContain("strict, heal, warn");
    await refused(log, store.setConflictPolicy("strict"), "no-change");
    const r = await must(store.setConflictPolicy("heal", { task: "t-policy" }));
    expect(r.ops).toMatchObject([{ op: "config", key: "conflict-policy", value: "heal", task: "t-policy" }]);
    expect(r.ops[0]).not.toHaveProperty("def");
    expect(store.conflictPolicy()).toBe("heal");
    expect(store.status().policy).toBe("heal");
    // Reopened from the log: the policy is in the ops, nowhere else.
    const copy = new TestLog();
    copy.deliver(log.all());
    expect(newStore(copy, "agent:late").store.conflictPolicy()).toBe("heal");
  });

  it("replicates: a policy set on one replica governs the other once it has the op", async () => {
    const { a, b, exchange } = await replicas(draftOnly);
    await must(a.setConflictPolicy("warn"));
    expect(b.conflictPolicy()).toBe("strict");
    await exchange();
    expect(b.conflictPolicy()).toBe("warn");
  });

  it("concurrent policy changes: every replica takes the same one (newer ts, then greater op-id)", async () => {
    const { a, b, exchange } = await replicas(draftOnly);
    const ha = await must(a.setConflictPolicy("heal"));
    const hb = await must(b.setConflictPolicy("warn"));
    await exchange();
    const [x, y] = [ha.ops[0]!, hb.ops[0]!];
    const winner =
      x.ts !== y.ts ? (x.ts > y.ts ? "heal" : "warn") : x["op-id"] > y["op-id"] ? "heal" : "warn";
    expect(a.conflictPolicy()).toBe(winner);
    expect(b.conflictPolicy()).toBe(winner);
  });

  it("a policy change concurrent with the conflicting ops: the policy in force where the conflict is decided applies, on every replica", async () => {
    const { a, b, logA, logB, exchange } = await replicas(draftOnly);
    // A removes draft, not knowing of B's policy; B switches to warn, then binds a tile to draft.
    const rm = await must(a.remove({ qname: "slot.draft" }));
    await must(b.setConflictPolicy("warn"));
    const add = await must(b.add({ layer: "tile", name: "NewForm", body: "input(bind=draft)" }));
    await exchange();
    // The conflict is decided at the later of the two ops in causal order, which is after B's
    // config op (B's add was written after it): warn keeps both.
    for (const s of [a, b]) {
      expect(s.conflicts()).toMatchObject([
        { kind: "dangling", policy: "warn", ops: [add.opIds[0], rm.opIds[0]] },
      ]);
      expect(text(s, "tile.NewForm")).toBe("tile NewForm = input(bind=draft)\n");
    }
    expect(observe(a)).toEqual(observe(b));
    // Any other arrival order folds to the same.
    const late = new TestLog();
    late.deliver([...logB.all()].reverse());
    late.deliver([...logA.all()].reverse());
    const opened = openStore({ log: late, author: "agent:late" });
    if (!opened.ok) throw new Error(opened.error.message);
    expect(observe(opened.value)).toEqual(observe(a));
  });

  it("a policy set after a conflict does not decide it again", async () => {
    const { a, b, exchange } = await replicas(draftOnly);
    await must(a.remove({ qname: "slot.draft" }));
    await must(b.add({ layer: "tile", name: "NewForm", body: "input(bind=draft)" }));
    await exchange();
    const before = a.conflicts();
    expect(before.map((c) => c.policy)).toEqual(["strict", "strict"]);
    await must(a.setConflictPolicy("warn"));
    await exchange();
    for (const s of [a, b]) {
      expect(s.conflicts()).toEqual(before);
      expect(s.view("tile.NewForm")).toMatchObject({ ok: false });
    }
  });
});
