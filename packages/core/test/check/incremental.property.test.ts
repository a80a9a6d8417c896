import { corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CheckOptions, checkProgram, createChecker, resumeChecker } from "../../src/check/check.js";
import type { CheckInput } from "../../src/check/graph.js";
import { brief, inputsOf } from "./helpers.js";

const POOL_PROGRAMS = [
  "apps/02-todomvc/app.kumiki",
  "apps/01-counter/app.kumiki",
  "features/25-stop-timer.kumiki",
  "features/21-timer.kumiki",
  "features/40-nested-routes.kumiki",
  "features/41-link-prefetch.kumiki",
  "features/32-panic-boundary.kumiki",
  "features/03-union-and-match.kumiki",
];

/** Programs with mistakes in them, so that the graph always has diagnostics to keep up to date. */
const SEEDED = [
  // An app without "/404" (E0001 names the NotFound tile when there is one), a duplicate timer.
  `slot n : Int = 0
reducer a on=timer(1s, name=tick) do= n := n + 1
reducer b on=timer(2s, name=tick) do= n := n + 2
reducer c on=ui.click(NotFound) do= stop-timer(tick)
tile NotFound = button(text="x", onClick=c)
app Seeded
    caps = []
    routes = {"/" -> NotFound}
`,
];

/**
 * Definitions of several programs in one graph, with opaque identities (`p3:tile.App`) as a store
 * has them: names collide across programs, identities never do.
 */
function pool(): CheckInput[] {
  const out: CheckInput[] = [];
  [...POOL_PROGRAMS.map((id) => corpusProgram(id)!.source), ...SEEDED].forEach((source, p) => {
    for (const n of inputsOf(source)) {
      out.push({
        ...n,
        id: `p${p}:${n.id}`,
        targets: n.targets.map((t) => (t === null ? null : `p${p}:${t}`)),
      });
    }
  });
  return out;
}

type Op =
  | { readonly op: "remove"; readonly pick: number }
  | { readonly op: "add"; readonly pick: number }
  | { readonly op: "rename"; readonly pick: number; readonly name: number; readonly typo: boolean }
  | {
      readonly op: "retarget";
      readonly pick: number;
      readonly site: number;
      readonly to: number;
      readonly nullify: boolean;
    }
  | { readonly op: "replace"; readonly pick: number; readonly with: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("remove" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("add" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("rename" as const), pick: fc.nat(), name: fc.nat(), typo: fc.boolean() }),
  fc.record({
    op: fc.constant("retarget" as const),
    pick: fc.nat(),
    site: fc.nat(),
    to: fc.nat(),
    nullify: fc.boolean(),
  }),
  fc.record({ op: fc.constant("replace" as const), pick: fc.nat(), with: fc.nat() }),
);

/** Applies `op` to `graph`; returns the identities it changed. */
function apply(graph: Map<string, CheckInput>, all: readonly CheckInput[], op: Op): string[] {
  const present = [...graph.keys()].sort();
  const absent = all.filter((n) => !graph.has(n.id));
  switch (op.op) {
    case "remove": {
      const id = present[op.pick % Math.max(1, present.length)];
      if (id === undefined) return [];
      graph.delete(id);
      return [id];
    }
    case "add": {
      const n = absent[op.pick % Math.max(1, absent.length)];
      if (n === undefined) return [];
      graph.set(n.id, n);
      return [n.id];
    }
    case "rename": {
      const id = present[op.pick % Math.max(1, present.length)];
      if (id === undefined) return [];
      const node = graph.get(id)!;
      const peers = all.filter((n) => n.def.layer === node.def.layer).map((n) => n.def.name.name);
      let name = peers[op.name % peers.length] ?? node.def.name.name;
      if (op.typo) name = `${name.slice(0, -1)}${name.endsWith("x") ? "y" : "x"}`;
      graph.set(id, { ...node, def: { ...node.def, name: { ...node.def.name, name } } });
      return [id];
    }
    case "retarget": {
      const id = present[op.pick % Math.max(1, present.length)];
      if (id === undefined) return [];
      const node = graph.get(id)!;
      if (node.targets.length === 0) return [];
      const i = op.site % node.targets.length;
      const targets = [...node.targets];
      targets[i] = op.nullify ? null : (all[op.to % all.length]?.id ?? null);
      graph.set(id, { ...node, targets });
      return [id];
    }
    case "replace": {
      const id = present[op.pick % Math.max(1, present.length)];
      if (id === undefined) return [];
      const node = graph.get(id)!;
      const same = all.filter((n) => n.def.layer === node.def.layer);
      const other = same[op.with % same.length];
      if (other === undefined) return [];
      graph.set(id, { ...other, id });
      return [id];
    }
  }
}

function expectSame(graph: Map<string, CheckInput>, actual: unknown, options: CheckOptions): void {
  expect(actual).toEqual(checkProgram(graph.values(), options));
}

describe.skipIf(!hasCorpus)("incremental checking", () => {
  // A skipped describe still runs its body to collect the tests: without the corpus there is no pool.
  const all = hasCorpus ? pool() : [];

  for (const options of [{}, { a11y: true, requireApp: false }] satisfies CheckOptions[]) {
    it(`gives the diagnostics of a full check after any sequence of edits (${JSON.stringify(options)})`, () => {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 1, maxLength: 25 }), fc.nat(), (ops, seed) => {
          // Start from a random part of the pool, so that some references dangle from the start.
          const graph = new Map(all.filter((_, i) => (i * 7 + seed) % 3 !== 0).map((n) => [n.id, n]));
          const checker = createChecker(graph, options);
          expectSame(graph, checker.diagnostics(), options);
          for (const op of ops) {
            const changed = apply(graph, all, op);
            expectSame(graph, checker.update(changed), options);
          }
        }),
        { numRuns: 60 },
      );
    });
  }

  it("gives the diagnostics of a full check after any sequence of edits, resumed from a state between them", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 0, maxLength: 8 }),
        fc.array(opArb, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        (before, after, seed) => {
          const graph = new Map(all.filter((_, i) => (i * 7 + seed) % 3 !== 0).map((n) => [n.id, n]));
          const checker = createChecker(graph);
          for (const op of before) checker.update(apply(graph, all, op));
          // Another process goes on from the state as it was kept (JSON), over the same definitions.
          const state = JSON.parse(JSON.stringify(checker.state()));
          const resumed = resumeChecker(graph, {}, state);
          expect(resumed).toBeDefined();
          expectSame(graph, resumed!.diagnostics(), {});
          // The first update after a resume reads the state's reads as they are; later ones index them.
          for (const op of after) expectSame(graph, resumed!.update(apply(graph, all, op)), {});
          // What it keeps goes on again to the same diagnostics.
          const again = resumeChecker(graph, {}, JSON.parse(JSON.stringify(resumed!.state())));
          expectSame(graph, again!.diagnostics(), {});
        },
      ),
      { numRuns: 60 },
    );
  });

  it("re-checks a changed definition and its referrers, not the whole graph", () => {
    const graph = new Map(all.map((n) => [n.id, n]));
    const checker = createChecker(graph);
    const total = graph.size;
    const slot = [...graph.values()].find((n) => n.id === "p0:slot.draft")!;
    graph.set(slot.id, { ...slot });
    checker.update([slot.id]);
    expect(checker.rechecked).toBeGreaterThan(1);
    expect(checker.rechecked).toBeLessThan(total / 10);
  });

  it("re-checks what looked a name up when a definition of that name appears", () => {
    const source = `tile Home = text("x")
tile Other = text("y")
app A
    caps = []
    routes = {"/" -> Home}
`;
    const graph = new Map(inputsOf(source).map((n) => [n.id, n]));
    const checker = createChecker(graph);
    expect(checker.diagnostics()[0]?.message).toMatch(/and a NotFound tile/);
    // The E0001 repair adds a NotFound tile only while there is none.
    const other = graph.get("tile.Other")!;
    graph.set(other.id, { ...other, def: { ...other.def, name: { ...other.def.name, name: "NotFound" } } });
    const after = checker.update([other.id]);
    expect(after).toEqual(checkProgram(graph.values()));
    expect(after[0]?.message).not.toMatch(/and a NotFound tile/);
    // The same, resumed from the first check's state in another process: its first update reads
    // the state's reads as they are, and finds the name looked up there.
    graph.set(other.id, other);
    const first = createChecker(graph);
    const resumed = resumeChecker(graph, {}, JSON.parse(JSON.stringify(first.state())));
    graph.set(other.id, { ...other, def: { ...other.def, name: { ...other.def.name, name: "NotFound" } } });
    expect(resumed!.update([other.id])).toEqual(after);
  });

  it("follows identity across a rename, and reports a reference whose target is removed", () => {
    const source = corpusProgram("apps/02-todomvc/app.kumiki")!.source;
    const graph = new Map(inputsOf(source).map((n) => [n.id, n]));
    const checker = createChecker(graph);
    expect(checker.diagnostics()).toEqual([]);
    // A rename in the store keeps the identity; every reference follows it.
    const draft = graph.get("slot.draft")!;
    graph.set(draft.id, { ...draft, def: { ...draft.def, name: { ...draft.def.name, name: "scratch" } } });
    expect(checker.update([draft.id])).toEqual([]);
    graph.delete(draft.id);
    expect(brief(checker.update([draft.id]))).toEqual([
      "E0103@reducer.addTodo.body:4",
      "E0103@reducer.addTodo.body:5",
      "E0103@tile.NewTodoForm.body:3",
    ]);
    graph.set(draft.id, draft);
    expect(checker.update([draft.id])).toEqual([]);
  });
});
