import { corpusMissingMessage, corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exportProgram, importProgram } from "../../src/project/program.js";
import type { Store } from "../../src/store/store.js";
import { memoryStore, must } from "./helpers.js";

/**
 * Export shows every definition with the names of now, whichever were renamed: a definition whose
 * names are all as written is shown without being parsed (Materializer.render), the others are
 * rendered. What a user notices is the exported program: imported again, it is the same program —
 * the same definitions under their current names, each referencing the same definitions.
 */

/** Each live definition's qname → the qnames its sites reference, sorted. */
function referenceGraph(store: Store): Map<string, string[]> {
  const reader = store.read();
  const out = new Map<string, string[]>();
  for (const v of reader.definitions()) {
    const targets = (reader.sites(v.def) ?? [])
      .map((s) => (s.target === null ? `?${s.site.name}` : reader.get(s.target)?.qname))
      .filter((q): q is string => q !== undefined);
    out.set(v.qname, [...new Set(targets)].sort());
  }
  return out;
}

const SOURCE = corpusProgram("apps/02-todomvc/app.kumiki")?.source ?? "";

describe.skipIf(!hasCorpus)("export after renames", () => {
  if (!hasCorpus) console.warn(corpusMissingMessage);

  it("imports back as the same program, for every sequence of renames (back to old names too)", async () => {
    const base = memoryStore();
    must(await importProgram(base, SOURCE));
    const qnames = base
      .read()
      .definitions()
      .map((v) => v.qname);
    // A rename: a definition by index, and a new name, or its first name again (the text's own).
    const rename = fc.record({
      at: fc.nat({ max: qnames.length - 1 }),
      name: fc.oneof(fc.constant(""), fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,6}$/)),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(rename, { minLength: 1, maxLength: 8 }), async (renames) => {
        const store = memoryStore();
        must(await importProgram(store, SOURCE));
        const defs = store
          .read()
          .definitions()
          .map((v) => ({ def: v.def, layer: v.layer, first: v.name }));
        for (const { at, name } of renames) {
          const d = defs[at]!;
          const now = store.read().get(d.def)!;
          // The first letter's case as the old name's: a type read in lowercase is a value.
          const upper = d.first[0] === d.first[0]!.toUpperCase();
          const fresh = `${upper ? name.toUpperCase() : name}R${at}`;
          const newName = name === "" ? d.first : fresh;
          if (newName === now.name) continue;
          // Every new name is free (`…R<index>`, or the definition's own first name): none is refused.
          must(await store.rename({ qname: now.qname, newName }));
        }
        const exported = exportProgram(store);
        const again = memoryStore();
        must(await importProgram(again, exported));
        expect(referenceGraph(again)).toEqual(referenceGraph(store));
        expect(exportProgram(again)).toBe(exported);
      }),
      { numRuns: 60 },
    );
  });

  it("shows a definition as stored when a rename is undone, and renders it while it is not", async () => {
    const store = memoryStore();
    must(await importProgram(store, SOURCE));
    must(await store.rename({ qname: "type.Todo", newName: "Item" }));
    const renamed = exportProgram(store);
    expect(renamed).not.toContain("type Todo ");
    expect(renamed).toContain("type Item ");
    expect(renamed).not.toMatch(/\bTodo\b(?!Id|Filter|Row|s\b)/);
    must(await store.rename({ qname: "type.Item", newName: "Todo" }));
    expect(exportProgram(store)).toBe(SOURCE);
  });
});
