import { corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { applyFixes } from "../../src/fix/apply.js";
import { normalizePatch } from "../../src/fix/normalize.js";
import { proposeFixes } from "../../src/fix/propose.js";
import { checkStore } from "../../src/integrity/store-check.js";
import type { Store } from "../../src/store/store.js";
import { brief, errorsOf } from "../check/helpers.js";
import { TODO } from "../check/seeds.js";
import { seedMistake, storeOf } from "../check/store-support.js";

const PROGRAM = `slot count : Int = 0
slot label : Text = "hi"
slot total : Int = 0
fn shout(t: Text) -> Text = t
reducer inc on=ui.click(IncBtn)
    do= count := count + 1
reducer reset on=ui.click(ResetBtn)
    do= total := count
tile IncBtn = button(text="+", onClick=inc)
tile ResetBtn = button(text="0", onClick=reset)
tile Home = page(text(count.show), IncBtn, ResetBtn)
tile NotFound = page(text("404"))
app Counter
    caps   = []
    routes = {"/" -> Home, "/404" -> NotFound}
    init   = []
`;

function snapshot(store: Store): { program: string; ops: number } {
  return { program: store.read().program(), ops: store.status().ops };
}

describe("proposeFixes", () => {
  it("proposes the did-you-mean of a misspelled reference as a bundle store.apply takes", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= count := count + 1", "do= count := cuont + 1");
    const [p, ...rest] = proposeFixes(store);
    expect(rest).toEqual([]);
    expect(p?.diagnostic.code).toBe("E0103");
    expect(p?.id).toBe("E0103@reducer.inc.body:2:18");
    expect(p?.bundle).toEqual([
      { op: "edit", qname: "reducer.inc", patch: { "body:2": "replace 'cuont' -> 'count'" } },
    ]);
    expect(p?.summary).toContain("did you mean count?");
    expect(proposeFixes(store, { code: "E0201" })).toEqual([]);
    // Proposing writes nothing.
    expect(checkStore(store).errors).toBe(1);
  });
});

describe("applyFixes", () => {
  it("applies every fix through the regression gate and reports what it did", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= count := count + 1", "do= count := cuont + 1");
    await seedMistake(store, "onClick=reset", "onClick=rest");
    const r = await applyFixes(store, { task: "fix-1" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.applied.map((a) => a.proposal.diagnostic.code).sort()).toEqual(["E0102", "E0103"]);
    expect(r.value.refused).toEqual([]);
    expect(r.value.remaining).toEqual([]);
    expect(checkStore(store).ok).toBe(true);
    const history = store.history("reducer.inc");
    expect(history.ok && history.value[0]?.entries.at(-1)?.task).toBe("fix-1");
  });

  it("refuses a fix that would add an error, and writes nothing", async () => {
    const store = await storeOf(PROGRAM);
    // `shuot` is closest to `shout`, which takes a Text: calling it with 1 is a new E0201.
    await seedMistake(store, "do= total := count", "do= total := shuot(1)");
    const before = snapshot(store);
    const r = await applyFixes(store);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.applied).toEqual([]);
    expect(r.value.refused.map((x) => [x.proposal.diagnostic.code, x.error.code])).toEqual([
      ["E0116", "validation-failed"],
    ]);
    expect(r.value.refused[0]?.error.message).toContain("E0201");
    expect(brief(r.value.remaining)).toEqual(["E0116@reducer.reset.body:2"]);
    expect(snapshot(store)).toEqual(before);
  });

  it("asks confirm before each fix and leaves declined ones alone", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= count := count + 1", "do= count := cuont + 1");
    await seedMistake(store, "onClick=reset", "onClick=rest");
    const asked: string[] = [];
    const r = await applyFixes(store, {
      confirm: async (p) => {
        asked.push(p.diagnostic.code);
        return p.diagnostic.code === "E0102";
      },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(asked.sort()).toEqual(["E0102", "E0103"]);
    expect(r.value.declined.map((p) => p.diagnostic.code)).toEqual(["E0103"]);
    expect(brief(r.value.remaining)).toEqual(["E0103@reducer.inc.body:2"]);
  });

  it("fixes two misspellings in one definition together (the store binds a whole text)", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= total := count", "do= totl := cuont");
    const r = await applyFixes(store);
    expect(r.ok && r.value.remaining).toEqual([]);
    expect(store.view("reducer.reset").ok && store.view("reducer.reset")).toMatchObject({
      value: { text: expect.stringContaining("do= total := count") },
    });
  });

  it("interactive: of two misspellings in one definition, only the one answered yes is written", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= total := count", "do= totl := cuont");
    const asked: string[] = [];
    // Yes to the first proposal, no to the other misspelling of the same definition.
    const r = await applyFixes(store, {
      confirm: async (p) => {
        asked.push(p.id);
        return asked.length === 1;
      },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(asked).toHaveLength(2);
    expect(r.value.applied.map((a) => a.proposal.id)).toEqual([asked[0]]);
    expect(r.value.declined.map((p) => p.id)).toEqual([asked[1]]);
    expect(r.value.remaining.map((d) => d.code)).toEqual(["E0103"]);
    // Yes to the rest: clean.
    const rest = await applyFixes(store, { confirm: async () => true });
    expect(rest.ok && rest.value.applied).toHaveLength(1);
    expect(rest.ok && rest.value.remaining).toEqual([]);
  });

  it("respects locks: a fix to a definition another agent locked is refused", async () => {
    const store = await storeOf(PROGRAM);
    await seedMistake(store, "do= count := count + 1", "do= count := cuont + 1");
    const locked = await store.lock({ agent: "user:alice", patterns: ["reducer.*"] });
    expect(locked.ok, JSON.stringify(locked)).toBe(true);
    const before = snapshot(store);
    const r = await applyFixes(store);
    expect(r.ok && r.value.refused.map((x) => x.error.code)).toEqual(["locked"]);
    expect(snapshot(store)).toEqual(before);
  });

  it("refuses an unknown code", async () => {
    const store = await storeOf(PROGRAM);
    const r = await applyFixes(store, { code: "E9999" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("invalid-input");
  });
});

describe.skipIf(!hasCorpus)("the repair loop of ai-edit.md §9.6.2, on a store", () => {
  it("takes a graph with five different mistakes to ok: check → normalizePatch(auto-patch) → store.apply", async () => {
    const store = await storeOf(corpusProgram(TODO)!.source);
    const mistakes: [string, string][] = [
      ["todos := todos.filter(not $2.done)", "todos := todoss.filter(not $2.done)"],
      ["caps   = [storage.read, storage.write]", "caps   = [storage.read]"],
      ["onClick=clearDone", "onClick=clearDon"],
      ["| Active  -> not t.done", "| Activ  -> not t.done"],
      ["fn itemsLeft(ts: Map(TodoId, Todo))", "fn itemsLeft(ts: Map(TodoId, Tood))"],
      ["        FilterBar,", "        FilterBa,"],
    ];
    for (const [a, b] of mistakes) await seedMistake(store, a, b);
    await seedMistake(store, ', "/404" -> NotFound}', "}");
    let report = checkStore(store);
    expect(new Set(errorsOf(report.diagnostics).map((d) => d.code)).size).toBeGreaterThanOrEqual(5);
    for (let round = 0; !report.ok; round++) {
      expect(round, "the loop does not converge").toBeLessThan(20);
      const fixable = report.diagnostics.find((d) => d.severity === "error" && d["auto-patch"] !== undefined);
      expect(fixable, `no auto-patch among ${JSON.stringify(brief(report.diagnostics))}`).toBeDefined();
      const bundle = normalizePatch(fixable!["auto-patch"]);
      expect(bundle.ok).toBe(true);
      const applied = await store.apply(bundle.ok ? bundle.value : []);
      expect(applied.ok, `${fixable!.code}@${fixable!.location}: ${JSON.stringify(applied)}`).toBe(true);
      const next = checkStore(store);
      expect(next.errors).toBeLessThan(report.errors);
      report = next;
    }
    expect(report.diagnostics).toEqual([]);
  });

  it("applyFixes does the same in one call", async () => {
    const store = await storeOf(corpusProgram(TODO)!.source);
    await seedMistake(store, "onClick=clearDone", "onClick=clearDon");
    await seedMistake(store, "caps   = [storage.read, storage.write]", "caps   = [storage.read]");
    await seedMistake(store, ', "/404" -> NotFound}', "}");
    const r = await applyFixes(store);
    expect(r.ok && r.value.remaining).toEqual([]);
  });
});
