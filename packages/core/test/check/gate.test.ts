import { describe, expect, it } from "vitest";
import { checkStore } from "../../src/integrity/store-check.js";
import type { Store } from "../../src/store/store.js";
import { brief } from "./helpers.js";
import { seedMistake, storeOf } from "./store-support.js";

const PROGRAM = `type Todo = {title: Text, done: Bool}
slot todos : List(Todo) = []
slot ready : Bool = false
slot count : Int = 0
reducer inc on=ui.click(IncBtn)
    do= count := count + 1
tile IncBtn = button(text="+", onClick=inc)
tile Home = page(text(count.show), IncBtn)
tile NotFound = page(text("404"))
app Counter
    caps   = []
    routes = {"/" -> Home, "/404" -> NotFound}
    init   = []
`;

/** What a refused write must leave exactly as it was. */
function snapshot(store: Store): { program: string; ops: number } {
  return { program: store.read().program(), ops: store.status().ops };
}

describe("the store's write gate runs the checker", () => {
  it("refuses a write that adds an error, and changes nothing", async () => {
    const store = await storeOf(PROGRAM);
    const before = snapshot(store);
    const r = await store.replace({ qname: "slot.ready", body: "Bool = 0" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("validation-failed");
    expect(r.error.message).toContain("E0201 at slot.ready.body:1");
    const ds = (r.error.details as { diagnostics: { code: string; location: string }[] }).diagnostics;
    expect(ds.map((d) => `${d.code}@${d.location}`)).toEqual(["E0201@slot.ready.body:1"]);
    expect(snapshot(store)).toEqual(before);
  });

  it("refuses a bundle whose second item adds an error, writing none of it", async () => {
    const store = await storeOf(PROGRAM);
    const before = snapshot(store);
    const r = await store.apply([
      { op: "add", layer: "slot", name: "extra", body: "Int = 1" },
      { op: "edit", qname: "reducer.inc", patch: [{ find: "count + 1", replace: "true" }] },
    ]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("validation-failed");
    expect(snapshot(store)).toEqual(before);
  });

  it("lets a write unrelated to a pre-existing error through", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "slot ready : Bool = false", "slot ready : Bool = 0");
    expect(brief(checkStore(store).diagnostics)).toEqual(["E0201@slot.ready.body:1"]);
    const r = await store.add({ layer: "slot", name: "label", body: 'Text = "hi"' });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(brief(checkStore(store).diagnostics)).toEqual(["E0201@slot.ready.body:1"]);
  });

  it("lets a write to a definition with an error through when it adds none (the error moves a line)", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= count := count + 1", "do= count := true");
    expect(brief(checkStore(store).diagnostics)).toEqual(["E0201@reducer.inc.body:2"]);
    const r = await store.edit({
      qname: "reducer.inc",
      patch: [{ find: "reducer inc on=ui.click(IncBtn)", replace: "reducer inc\n    on=ui.click(IncBtn)" }],
    });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(brief(checkStore(store).diagnostics)).toEqual(["E0201@reducer.inc.body:3"]);
  });

  it("a write that repairs the pre-existing error goes through", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "slot ready : Bool = false", "slot ready : Bool = 0");
    const r = await store.replace({ qname: "slot.ready", body: "Bool = true" });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(checkStore(store).ok).toBe(true);
  });

  it("does not hold a missing app against a program built one definition at a time (E0003)", async () => {
    const store = await storeOf("");
    const [slots, cycle, rest] = [
      PROGRAM.split("\n").filter((l) => l.startsWith("slot") || l.startsWith("type")),
      [
        "reducer inc on=ui.click(IncBtn)\n    do= count := count + 1\n",
        'tile IncBtn = button(text="+", onClick=inc)\n',
      ],
      PROGRAM.slice(PROGRAM.indexOf("tile Home")).split(/\n(?=\S)/),
    ];
    for (const line of slots) expect((await store.add({ source: `${line}\n` })).ok, line).toBe(true);
    // A tile and the reducer it triggers reference each other: one bundle.
    expect((await store.apply(cycle.map((source) => ({ op: "add", source })))).ok).toBe(true);
    expect(brief(checkStore(store).diagnostics)).toEqual(["E0003@program"]);
    for (const def of rest) {
      const r = await store.add({ source: def.endsWith("\n") ? def : `${def}\n` });
      expect(r.ok, `${def}: ${JSON.stringify(r)}`).toBe(true);
    }
    expect(checkStore(store).ok).toBe(true);
  });

  it("refuses a second app (E0004 is not relaxed)", async () => {
    const store = await storeOf(PROGRAM);
    const r = await store.add({
      source: 'app Other\n    caps   = []\n    routes = {"/" -> Home, "/404" -> NotFound}\n    init   = []\n',
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("E0004");
  });
});
