import { describe, expect, it } from "vitest";
import { draftProgram, must, newStore, okValue, refused, replicas, text } from "./support.js";

describe("undo of a whole task", () => {
  it("returns every definition the task touched to its state before the task, with new ops, itself undoable", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    await must(store.add({ layer: "slot", name: "spare", body: "Int = 0" }));
    const before = store.read().program();
    const task = { task: "t-1" };
    await must(store.add({ layer: "slot", name: "extra", body: "Int = 1", ...task }));
    await must(store.replace({ qname: "tile.Counter", body: "text(extra.show)", ...task }));
    await must(
      store.edit({
        qname: "tile.Compose",
        patch: [{ find: "text(draft)", replace: "text(draft.upper)" }],
        ...task,
      }),
    );
    await must(store.rename({ qname: "slot.todos", newName: "items", ...task }));
    await must(store.remove({ qname: "slot.spare", ...task }));
    const after = store.read().program();
    expect(after).not.toBe(before);
    const opsBefore = log.all().length;
    const r = await must(store.undoTask("t-1"));
    // New ops, in the log; nothing is rewritten.
    expect(log.all().length).toBe(opsBefore + r.ops.length);
    expect(r.ops.every((o) => o.task === "undo:t-1")).toBe(true);
    expect(store.read().program()).toBe(before);
    // The undo is a task too: undoing it brings the task's result back.
    await must(store.undoTask("undo:t-1"));
    expect(store.read().program()).toBe(after);
  });

  it("refuses with undo-diverged and a diff when another author changed those definitions since; confirm undoes anyway", async () => {
    const { a, b, logA, exchange } = await replicas(draftProgram);
    const before = text(a, "tile.Counter");
    await must(a.replace({ qname: "tile.Counter", body: "text(todos.size.show.upper)", task: "t-2" }));
    await exchange();
    const theirs = await must(
      b.edit({ qname: "tile.Counter", patch: [{ find: ".upper", replace: ".lower" }] }),
    );
    await exchange();
    const e = await refused(logA, a.undoTask("t-2"), "undo-diverged");
    expect(e.message).toContain("tile.Counter");
    const diff = String(e.details?.diff);
    expect(diff).toContain(`edit ${theirs.opIds[0]} (agent:b)`);
    expect(diff).toContain("-tile Counter = text(todos.size.show.upper)");
    expect(diff).toContain("+tile Counter = text(todos.size.show.lower)");
    // The preview shows the same divergence and the ops a confirmed undo would write.
    const p = okValue(a.previewUndoTask("t-2"));
    expect(p.divergence).toBe(diff);
    expect(p.diff).toContain("+tile Counter = text(todos.size.show)");
    await must(a.undoTask("t-2", { confirm: true, expect: p.fingerprint }));
    expect(text(a, "tile.Counter")).toBe(before);
  });

  it("an unknown task, a task already undone, an invalid task id", async () => {
    const { store, log } = newStore();
    await draftProgram(store);
    await refused(log, store.undoTask("nope"), "not-found");
    await must(store.replace({ qname: "slot.draft", body: 'Text = "x"', task: "t-3" }));
    await must(store.replace({ qname: "slot.draft", body: 'Text = ""', task: "t-3b" }));
    // Certain: the text is as before the task, but someone (another task) changed it since: divergence, not "no change".
    await refused(log, store.undoTask("t-3"), "undo-diverged");
    await must(store.replace({ qname: "slot.todos", body: 'List(Text) = ["a"]', task: "t-4" }));
    await must(store.undoTask("t-4"));
    await must(store.undoTask("undo:t-4"));
    await must(store.undoTask("undo:undo:t-4"));
    await refused(log, store.undoTask("has space"), "invalid-input");
  });

  it("undoes a task that added a reducer and the tile that triggers it (a cycle)", async () => {
    const { store } = newStore();
    await draftProgram(store);
    const before = store.read().program();
    await must(
      store.apply([
        {
          op: "add",
          layer: "reducer",
          name: "clear",
          body: 'on=ui.click(ClearBtn) do= draft := ""',
          task: "t-5",
        },
        {
          op: "add",
          layer: "tile",
          name: "ClearBtn",
          body: 'button(text="clear", onClick=clear)',
          task: "t-5",
        },
      ]),
    );
    const r = await must(store.undoTask("t-5"));
    expect([...(r.removed ?? [])].sort()).toEqual(["reducer.clear", "tile.ClearBtn"]);
    expect(store.read().program()).toBe(before);
    expect(store.conflicts()).toEqual([]);
  });
});
