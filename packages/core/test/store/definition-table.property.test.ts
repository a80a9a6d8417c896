import { corpusMissingMessage, corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { importProgram } from "../../src/project/program.js";
import { definitionTable, viewFromTable } from "../../src/store/definition-table.js";
import type { Store } from "../../src/store/store.js";
import { memoryStore, must } from "../project/helpers.js";

/**
 * `view <layer.name>` answered from a table of every definition (what a process of its own reads
 * from the cache a writer kept, as JSON) is the store's `view`, whatever was renamed, removed,
 * replaced or added: the same definitions, texts with the names of now, versions and lines.
 */

const SOURCE = corpusProgram("apps/02-todomvc/app.kumiki")?.source ?? "";

/** The table as a process reads it back from its file. */
function kept(store: Store): unknown {
  return JSON.parse(JSON.stringify(definitionTable(store)));
}

/** Every selector the table answers, checked against the store; returns how many it answered. */
function sameAsStore(store: Store): number {
  const table = kept(store);
  let answered = 0;
  for (const d of store.read().definitions()) {
    const fromTable = viewFromTable(table, d.qname);
    if (!d.visible) {
      expect(fromTable, d.qname).toBeUndefined();
      continue;
    }
    expect(fromTable, d.qname).toEqual(must(store.view(d.qname)));
    answered++;
  }
  return answered;
}

const write = fc.oneof(
  fc.record({
    kind: fc.constant("rename" as const),
    at: fc.nat(),
    name: fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/),
  }),
  fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), n: fc.nat({ max: 9 }) }),
  fc.record({ kind: fc.constant("add" as const), name: fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/) }),
);

describe.skipIf(!hasCorpus)("view from a table of every definition", () => {
  if (!hasCorpus) console.warn(corpusMissingMessage);

  it("answers every name that shows as the store's view does, after any sequence of writes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 8 }), async (writes) => {
        const store = memoryStore();
        must(await importProgram(store, SOURCE));
        for (const w of writes) {
          const live = store.read().definitions();
          const d = live[("at" in w ? w.at : 0) % live.length]!;
          if (w.kind === "rename") {
            // Keeps a type's capital (a type read in lowercase is a value); refused when taken.
            const upper = d.name[0] === d.name[0]!.toUpperCase();
            await store.rename({
              qname: d.qname,
              newName: upper ? `${w.name.toUpperCase()}R` : `${w.name}R`,
            });
          } else if (w.kind === "remove") {
            // Forced: what referenced it now shows a dangling name.
            await store.remove({ qname: d.qname, force: true });
          } else if (w.kind === "replace") {
            if (d.layer === "slot") await store.replace({ qname: d.qname, body: `Int = ${w.n}` });
          } else {
            await store.add({ layer: "slot", name: `${w.name}A`, body: "Int = 0" });
          }
        }
        expect(sameAsStore(store)).toBeGreaterThan(0);
      }),
      { numRuns: 40 },
    );
  });

  it("answers nothing it cannot answer as the store does: patterns, identities, names nothing shows under, a damaged table", async () => {
    const store = memoryStore();
    must(await importProgram(store, SOURCE));
    const table = kept(store);
    const [first] = store.read().definitions();
    expect(viewFromTable(table, first!.qname)).toEqual(must(store.view(first!.qname)));
    expect(viewFromTable(table, "slot.*")).toBeUndefined();
    expect(viewFromTable(table, first!.def)).toBeUndefined();
    expect(viewFromTable(table, `${first!.layer}.noSuchName`)).toBeUndefined();
    expect(viewFromTable(table, "not a selector")).toBeUndefined();
    must(await store.remove({ qname: first!.qname, force: true }));
    expect(viewFromTable(kept(store), first!.qname)).toBeUndefined();
    // Hand-edited: not a table, a row cut short, a row claiming a name it does not show under.
    expect(viewFromTable({ v: 2, rows: [] }, first!.qname)).toBeUndefined();
    const rows = (table as { rows: unknown[][] }).rows;
    const at = rows.findIndex((r) => r[0] === first!.def);
    const cut = { v: 1, rows: rows.map((r, i) => (i === at ? r.slice(0, 5) : r)) };
    expect(viewFromTable(cut, first!.qname)).toBeUndefined();
    const hidden = {
      v: 1,
      rows: rows.map((r, i) => (i === at ? r.map((x, j) => (j === 4 ? false : x)) : r)),
    };
    expect(viewFromTable(hidden, first!.qname)).toBeUndefined();
  });
});
