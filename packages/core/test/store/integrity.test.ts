import { describe, expect, it } from "vitest";
import type { ConflictPolicy } from "../../src/ops/op.js";
import { TestLog } from "../ops/memory-log.js";
import { draftProgram, must, newStore, observe, okValue, refused, replicas, text } from "./support.js";

describe("remove: pre-check at issue time (ai-edit.md §9.4.1)", () => {
  it("refuses a referenced definition, listing referrers as qname:line and pointing at --cascade and --force", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    const e = await refused(log, store.remove({ qname: "slot.draft" }), "referenced");
    expect(e.message).toContain("cannot remove slot.draft (referenced by 1 tile)");
    expect(e.message).toContain("  tile.Compose:1");
    expect(e.message).toContain(
      "remove it with cascade to remove all dependents too, or with force to leave their references dangling",
    );
    await refused(log, store.remove({ qname: "slot.draft", cascade: true, force: true }), "invalid-input");
  });

  it("cascade removes the definition and every transitive referrer in one atomic write", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    const appends = log.appends;
    const r = await must(store.remove({ qname: "slot.draft", cascade: true }));
    expect(log.appends).toBe(appends + 1);
    expect(r.ops.map((o) => o.op)).toEqual(["remove", "remove", "remove"]);
    expect([...(r.removed ?? [])].sort()).toEqual(["slot.draft", "tile.Compose", "tile.Page"]);
    // Referrers go first, so no op of the write ever leaves a reference dangling.
    expect(r.removed?.[0]).toBe("tile.Page");
    expect(r.removed?.[2]).toBe("slot.draft");
    expect(okValue(store.list()).map((d) => d.qname)).toEqual(["slot.todos", "tile.Counter"]);
    expect(store.conflicts()).toEqual([]);
    // History keeps what went, with who and when.
    const [h] = okValue(store.history("tile.Compose"));
    expect(h?.alive).toBe(false);
    expect(h?.entries.map((e) => [e.op, e.author, typeof e.ts])).toEqual([
      ["add", "agent:a", "number"],
      ["remove", "agent:a", "number"],
    ]);
  });

  it("cascade through a cycle (a reducer and the tile that triggers it) removes both", async () => {
    const { store } = newStore();
    await draftProgram(store);
    await must(
      store.apply([
        { op: "add", layer: "reducer", name: "clear", body: 'on=ui.click(ClearBtn) do= draft := ""' },
        { op: "add", layer: "tile", name: "ClearBtn", body: 'button(text="clear", onClick=clear)' },
      ]),
    );
    const r = await must(store.remove({ qname: "slot.draft", cascade: true }));
    expect([...(r.removed ?? [])].sort()).toEqual([
      "reducer.clear",
      "slot.draft",
      "tile.ClearBtn",
      "tile.Compose",
      "tile.Page",
    ]);
    expect(store.conflicts()).toEqual([]);
    expect(okValue(store.list()).map((d) => d.qname)).toEqual(["slot.todos", "tile.Counter"]);
  });

  it("force removes it and leaves the references dangling, with a warning per referencing line", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    const r = await must(store.remove({ qname: "slot.draft", force: true }));
    expect(r.ops).toMatchObject([{ op: "remove", force: true }]);
    expect(r.removed).toEqual(["slot.draft"]);
    expect(r.warnings).toEqual([
      "tile.Compose:1 references slot.draft, which is removed: the reference is left dangling (a forced remove)",
    ]);
    expect(store.view("slot.draft")).toMatchObject({ ok: false });
    expect(text(store, "tile.Compose")).toContain("bind=draft");
    // Intended, so no conflict: the fold keeps it on every replica.
    expect(store.conflicts()).toEqual([]);
    const copy = new TestLog();
    copy.deliver(log.all());
    const reopened = newStore(copy, "agent:late");
    expect(observe(reopened.store)).toEqual(observe(store));
    const [h] = okValue(store.history("slot.draft"));
    expect(h?.entries.at(-1)).toMatchObject({ op: "remove", force: true, status: "applied" });
  });

  it("a write concurrent with a forced remove, on a referrer, is decided by the policy (strict: the target is back)", async () => {
    const { a, b, exchange } = await replicas(draftProgram);
    await must(a.remove({ qname: "slot.draft", force: true }));
    await must(
      b.edit({ qname: "tile.Compose", patch: [{ find: "text(draft)", replace: "text(draft.upper)" }] }),
    );
    await exchange();
    for (const s of [a, b]) {
      expect(text(s, "slot.draft")).toBe('slot draft : Text = ""\n');
      expect(text(s, "tile.Compose")).toContain("draft.upper");
      expect(s.conflicts().map((c) => [c.kind, c.policy])).toEqual([["rolled-back", "strict"]]);
    }
    expect(observe(a)).toEqual(observe(b));
  });
});

describe("post-check when ops meet (§9.4.2): the spec's example under each policy", () => {
  async function scenario(policy: ConflictPolicy) {
    const { a, b, exchange } = await replicas(async (s) => {
      await must(s.add({ layer: "slot", name: "draft", body: 'Text = ""' }));
      if (policy !== "strict") await must(s.setConflictPolicy(policy));
    });
    // A removes slot.draft while B adds a tile bound to draft; then they exchange ops.
    const rm = await must(a.remove({ qname: "slot.draft" }));
    const add = await must(b.add({ layer: "tile", name: "NewForm", body: "input(bind=draft)" }));
    await exchange();
    expect(observe(a)).toEqual(observe(b));
    return { a, b, rm: rm.opIds[0]!, add: add.opIds[0]! };
  }

  it("strict rolls both back and records a conflict, identically on both replicas", async () => {
    const { a, b, rm, add } = await scenario("strict");
    for (const s of [a, b]) {
      expect(s.conflictPolicy()).toBe("strict");
      expect(text(s, "slot.draft")).toBe('slot draft : Text = ""\n');
      expect(s.view("tile.NewForm")).toMatchObject({ ok: false });
      const cs = s.conflicts();
      expect(cs.map((c) => c.id).sort()).toEqual([`rolled-back:${add}`, `rolled-back:${rm}`].sort());
      for (const c of cs) {
        expect(c).toMatchObject({ kind: "rolled-back", policy: "strict" });
        expect(c.ops).toEqual(expect.arrayContaining([rm, add]));
        expect(c.decision).toContain("conflict policy strict");
        expect(c.retry.length).toBeGreaterThan(0);
      }
    }
  });

  it("heal restores draft and keeps the tile, logging the conflict", async () => {
    const { a, b, rm } = await scenario("heal");
    for (const s of [a, b]) {
      expect(text(s, "slot.draft")).toBe('slot draft : Text = ""\n');
      expect(text(s, "tile.NewForm")).toBe("tile NewForm = input(bind=draft)\n");
      expect(s.conflicts()).toMatchObject([
        {
          id: `rolled-back:${rm}`,
          kind: "rolled-back",
          policy: "heal",
          decision: expect.stringContaining("restored"),
        },
      ]);
    }
  });

  it("warn keeps both and records a warning", async () => {
    const { a, b, rm, add } = await scenario("warn");
    for (const s of [a, b]) {
      expect(s.view("slot.draft")).toMatchObject({ ok: false });
      expect(text(s, "tile.NewForm")).toBe("tile NewForm = input(bind=draft)\n");
      const [c, ...rest] = s.conflicts();
      expect(rest).toEqual([]);
      expect(c).toMatchObject({ kind: "dangling", policy: "warn", ops: [add, rm] });
      expect(c?.retry).toContain("restore");
    }
  });
});
