/**
 * The live view's model (`graphOverview`, `definitionPage`): what a person overseeing agents sees
 * of a graph — its definitions and references, findings, activity, lost writes, conflicts, locks,
 * and one definition's history with its texts.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { definitionPage } from "../../src/project/definition-page.js";
import { graphOverview } from "../../src/project/overview.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";
import { COUNTER_PROGRAM, opsOf, seedMistake, storeOf } from "../check/store-support.js";

const PROGRAM = COUNTER_PROGRAM;

/** Another replica of `store`'s graph, writing as `author`. */
/**
 * One clock for every replica, after the program's: op ids and timestamps follow the order the test
 * writes in (on the wall clock, two replicas' ops of one millisecond were ordered by their ids'
 * random part, so a concurrent op could sort after a later one).
 */
let clock = 1_790_000_000_000;

function replica(store: Store, author: string): Store {
  const opened = openStore({ log: new MemoryOpLog(opsOf(store)), author, now: () => clock++ });
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.value;
}

describe("graphOverview", () => {
  it("lists every live definition with what it references and its findings", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "filter := Active", "filter := Actve");
    const o = graphOverview(store);
    expect(o.definitions).toHaveLength(11);
    const byName = new Map(o.definitions.map((d) => [`${d.layer}.${d.name}`, d]));
    const id = (q: string) => byName.get(q)!.def;
    expect(new Set(byName.get("tile.Home")!.uses)).toEqual(
      new Set([id("slot.count"), id("slot.label"), id("tile.IncBtn"), id("tile.PickBtn")]),
    );
    expect(byName.get("type.Filter")!.uses).toEqual([]);
    // The seeded mistake is an error on reducer.pick, and in the diagnostics as check gives them.
    expect(byName.get("reducer.pick")!.errors).toBeGreaterThan(0);
    expect(o.diagnostics.some((d) => d.definition === id("reducer.pick") && d.severity === "error")).toBe(
      true,
    );
    expect(o.definitions.filter((d) => d.errors > 0).map((d) => d.name)).toEqual(["pick"]);
    expect(o.ops).toBe([...store.read().graph.ops()].length);
    expect(o.activity).toHaveLength(o.ops);
  });

  it("shows the agents' activity, newest first, and a lost write with the conflict that says why", async () => {
    const store = await storeOf(PROGRAM);
    const a = replica(store, "agent:a");
    const b = replica(store, "agent:b");
    expect((await a.replace({ qname: "slot.label", body: 'Text = "from a"', task: "t-a" })).ok).toBe(true);
    expect((await b.replace({ qname: "slot.label", body: 'Text = "from b"' })).ok).toBe(true);
    expect((await a.lock({ agent: "agent:a", patterns: ["tile.*"] })).ok).toBe(true);
    // Each takes in the other's ops: one replace wins, the other is lost (replace-lost).
    expect((await a.ingest([...b.read().graph.ops()])).ok).toBe(true);
    const o = graphOverview(a);
    expect(o.conflicts.map((c) => c.kind)).toContain("replace-lost");
    const lost = o.activity.find((x) => x.status === "lost")!;
    expect(lost.qname).toBe("slot.label");
    expect(lost.conflict).toBe(o.conflicts.find((c) => c.kind === "replace-lost")!.id);
    expect(o.activity[0]!.op).toBe("lock");
    expect(o.activity.map((x) => x.ts)).toEqual([...o.activity.map((x) => x.ts)].sort((x, y) => y - x));
    expect(o.activity.find((x) => x.task === "t-a")?.author).toBe("agent:a");
    const authors = new Map(o.authors.map((x) => [x.author, x]));
    expect(authors.get("agent:a")!.ops).toBe(2);
    expect(authors.get("agent:b")!.ops + authors.get("agent:a")!.ops).toBe(3);
    expect(authors.get("agent:a")!.lost + authors.get("agent:b")!.lost).toBe(1);
    expect(o.locks.map((l) => l.pattern)).toEqual(["tile.*"]);
    expect(graphOverview(a, { recent: 2 }).activity).toHaveLength(2);
  });
});

describe("definitionPage", () => {
  it("gives the text, links both ways, and the history with each op's text before and after", async () => {
    const store = await storeOf(PROGRAM);
    expect((await store.replace({ qname: "slot.label", body: 'Text = "ho"', task: "wording" })).ok).toBe(
      true,
    );
    expect((await store.rename({ qname: "slot.label", newName: "caption" })).ok).toBe(true);
    const def = store.read().lookup("slot", "caption")!.def;
    const page = definitionPage(store, def);
    if (!page.ok) throw new Error(page.error.message);
    const p = page.value;
    expect(p.view.text).toContain('caption : Text = "ho"');
    expect(p.hash).toMatch(/^[0-9a-z]+/);
    expect(p.usedBy.map((l) => l.qname)).toEqual(["tile.Home"]);
    expect(p.uses).toEqual([]);
    expect(p.history.map((e) => e.op)).toEqual(["add", "replace", "rename"]);
    expect(p.history[0]!.before).toBeUndefined();
    expect(p.history[1]!.before).toContain('"hi"');
    expect(p.history[1]!.after).toContain('"ho"');
    expect(p.history[1]!.task).toBe("wording");
    const home = definitionPage(store, store.read().lookup("tile", "Home")!.def);
    expect(home.ok && home.value.uses.map((l) => l.qname).sort()).toEqual([
      "slot.caption",
      "slot.count",
      "tile.IncBtn",
      "tile.PickBtn",
    ]);
  });

  it("refuses what is not a definition of the graph, saying what to give", async () => {
    const store = await storeOf(PROGRAM);
    for (const bad of ["slot.label", "def_0000000000000000000000000", "x".repeat(500)]) {
      const r = definitionPage(store, bad);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("not-found");
        expect(r.error.message).toContain("def_");
        expect(r.error.message.length).toBeLessThan(200);
      }
    }
  });
});
