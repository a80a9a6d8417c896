import { describe, expect, it } from "vitest";
import { matchesLockPattern } from "../../src/ops/glob.js";
import type { LogOp } from "../../src/ops/op.js";
import { draftProgram, must, okValue, refused, replicas, text } from "./support.js";

async function lockedProgram() {
  const r = await replicas(async (s) => {
    await draftProgram(s);
    await must(s.add({ layer: "slot", name: "other", body: "Int = 0" }));
    await must(s.lock({ agent: "agent:a", patterns: ["slot.todos*,tile.Count*"] }));
  });
  return r;
}

describe("ownership locks (ai-edit.md §9.8.3)", () => {
  it("match with * only: slot.todos* matches slot.todos and slot.todosDone, nothing else", () => {
    expect(matchesLockPattern("slot.todos*", "slot", "todos")).toBe(true);
    expect(matchesLockPattern("slot.todos*", "slot", "todosDone")).toBe(true);
    expect(matchesLockPattern("slot.todos*", "slot", "todo")).toBe(false);
    expect(matchesLockPattern("slot.todos*", "tile", "todos")).toBe(false);
    expect(matchesLockPattern("reducer.todo-*", "reducer", "todo-add")).toBe(true);
    expect(matchesLockPattern("*.draft", "tile", "draft")).toBe(true);
    expect(matchesLockPattern("slot.t*s", "slot", "todos")).toBe(true);
    expect(matchesLockPattern("slot.t*s", "slot", "todo")).toBe(false);
  });

  it("are validated: layer.namepattern, no regex", async () => {
    const { a, logA } = await replicas();
    for (const bad of ["todos*", "slot.todos[0-9]", "slot.todo.+", "nolayer.x", "slot.", "slot.a b"]) {
      const e = await refused(logA, a.lock({ agent: "agent:a", patterns: [bad] }), "invalid-input");
      expect(e.message).toContain("layer.namepattern");
    }
    await refused(logA, a.lock({ agent: "not an agent", patterns: ["slot.x"] }), "invalid-input");
    await refused(logA, a.lock({ agent: "agent:a", patterns: [] }), "invalid-input");
  });

  it("are replicated state: lock, locks, unlock", async () => {
    const { a, b, exchange } = await lockedProgram();
    const entries = a.locks();
    expect(entries.map((l) => [l.agent, l.pattern])).toEqual([
      ["agent:a", "slot.todos*"],
      ["agent:a", "tile.Count*"],
    ]);
    expect(entries[0]).toMatchObject({ opId: expect.stringMatching(/^op_/), ts: expect.any(Number) });
    expect(b.locks()).toEqual(entries);
    expect(a.status().locks).toBe(2);
    const u = await must(a.unlock({ agent: "agent:a", patterns: ["tile.Count*"] }));
    expect(u.ops).toMatchObject([{ op: "unlock", agent: "agent:a", patterns: ["tile.Count*"] }]);
    await exchange();
    expect(b.locks().map((l) => l.pattern)).toEqual(["slot.todos*"]);
    expect((await a.unlock({ agent: "agent:zz" })).ok).toBe(false);
  });

  it("refuse another author's write to a locked definition: its target, a new name, a rename's new name, a cascade", async () => {
    const { a, b, logB, exchange } = await lockedProgram();
    const e = await refused(logB, b.replace({ qname: "slot.todos", body: 'List(Text) = ["x"]' }), "locked");
    expect(e.message).toContain("slot.todos is locked by agent:a (slot.todos*)");
    expect(e.details).toMatchObject({ agent: "agent:a", pattern: "slot.todos*" });
    await refused(logB, b.add({ layer: "slot", name: "todosDone", body: "Int = 0" }), "locked");
    await refused(logB, b.rename({ qname: "slot.other", newName: "todosOld" }), "locked");
    // A cascade refuses when any definition it would remove is locked: draft is not, tile.Page is.
    await must(a.lock({ agent: "agent:a", patterns: ["tile.Page"] }));
    await exchange();
    await refused(logB, b.remove({ qname: "slot.draft", cascade: true }), "locked");
    await refused(
      logB,
      b.apply([
        { op: "add", layer: "slot", name: "fine", body: "Int = 1" },
        { op: "replace", qname: "tile.Counter", body: "text(fine.show)" },
      ]),
      "locked",
    );
    // What the lock does not cover stays writable; the owner writes as usual.
    await must(b.replace({ qname: "slot.other", body: "Int = 1" }));
    await must(a.replace({ qname: "slot.todos", body: 'List(Text) = ["a"]' }));
  });

  it("only the holder unlocks (others with force); once unlocked, others write again; a concurrent unlock does not lift a lock it had not seen", async () => {
    const { a, b, logB, exchange } = await replicas(draftProgram);
    await must(a.lock({ agent: "agent:a", patterns: ["slot.draft"] }));
    await exchange();
    await refused(logB, b.replace({ qname: "slot.draft", body: 'Text = "b"' }), "locked");
    // Another agent's lock is not B's to lift: refused, nothing written.
    const e = await refused(logB, b.unlock({ agent: "agent:a" }), "locked");
    expect(e.message).toMatch(/agent:a's locks are agent:a's to lift/);
    // Forced (agent:a gone, say), B lifts all of agent:a's locks while A concurrently locks one
    // more: the unlock lifts the lock it had seen, not the new one; the receipt says whose it lifted.
    const forced = await must(b.unlock({ agent: "agent:a", force: true }));
    expect(forced.warnings).toEqual(["lifted agent:a's locks as agent:b (forced)"]);
    expect(forced.ops).toMatchObject([{ op: "unlock", agent: "agent:a", author: "agent:b" }]);
    await must(a.lock({ agent: "agent:a", patterns: ["slot.todos"] }));
    await exchange();
    expect(a.locks().map((l) => l.pattern)).toEqual(["slot.todos"]);
    expect(b.locks()).toEqual(a.locks());
    await must(a.unlock({ agent: "agent:a" }));
    await exchange();
    expect(b.locks()).toEqual([]);
    await must(b.replace({ qname: "slot.draft", body: 'Text = "b"' }));
  });

  it("a lock that overlaps another agent's is refused; re-locking one's own is no change", async () => {
    const { b, logB, exchange } = await lockedProgram();
    await exchange();
    await refused(logB, b.lock({ agent: "agent:b", patterns: ["slot.todos*"] }), "locked");
    // slot.t* covers slot.todos, which agent:a's slot.todos* covers too.
    await refused(logB, b.lock({ agent: "agent:b", patterns: ["slot.t*"] }), "locked");
    await refused(logB, b.lock({ agent: "agent:a", patterns: ["slot.todos*"] }), "no-change");
    await must(b.lock({ agent: "agent:b", patterns: ["slot.other"] }));
  });

  it("a lock concurrent with an op: the op stands on every replica, recorded as lock-concurrent; later ops are refused", async () => {
    const { a, b, logB, exchange } = await replicas(draftProgram);
    const lock = await must(a.lock({ agent: "agent:a", patterns: ["slot.draft"] }));
    const w = await must(b.replace({ qname: "slot.draft", body: 'Text = "hi"' }));
    await exchange();
    for (const s of [a, b]) {
      expect(text(s, "slot.draft")).toBe('slot draft : Text = "hi"\n');
      // Not accepted silently: both replicas record that B wrote under a lock it had not seen.
      expect(s.conflicts().map((c) => [c.id, c.ops])).toEqual([
        [`lock-concurrent:${w.opIds[0]}`, [w.opIds[0], lock.opIds[0]]],
      ]);
    }
    expect(a.conflicts()).toEqual(b.conflicts());
    await refused(logB, b.replace({ qname: "slot.draft", body: 'Text = "again"' }), "locked");
  });

  it("the fold leaves out an op from elsewhere that was written after a lock by another agent, as a locked conflict", async () => {
    const { a, b } = await replicas(draftProgram);
    const lock = await must(a.lock({ agent: "agent:a", patterns: ["slot.draft"] }));
    // B writes without knowing the lock; the op is then re-parented onto A's heads, as a replica
    // that ignores locks would write it.
    const w = await must(b.replace({ qname: "slot.draft", body: 'Text = "rogue"' }));
    const rogue = { ...(w.ops[0] as LogOp), "parent-ops": a.status().heads } as LogOp;
    const r = await a.ingest([rogue]);
    expect(r.ok).toBe(true);
    expect(text(a, "slot.draft")).toBe('slot draft : Text = ""\n');
    const id = w.opIds[0]!;
    expect(a.conflicts()).toMatchObject([
      {
        id: `locked:${id}`,
        kind: "locked",
        ops: [id, lock.opIds[0]],
        retry: expect.stringContaining("unlock"),
      },
    ]);
    const [h] = okValue(a.history("slot.draft"));
    expect(h?.entries.at(-1)).toMatchObject({ opId: id, status: "rolled-back", conflict: `locked:${id}` });
  });
});
