import { corpusMissingMessage, corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { importProgram } from "../../src/project/program.js";
import {
  changedRows,
  type DefinitionTable,
  definitionTable,
  rowsOf,
} from "../../src/store/definition-table.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";
import { listFromTable, refsFromTable, statusFromTable, viewFromTable } from "../../src/store/table-reads.js";
import { memoryStore, must } from "../project/helpers.js";

/**
 * `view <layer.name>` answered from a table of every definition (what a process of its own reads
 * from the cache a writer kept, as JSON) is the store's `view`, whatever was renamed, removed,
 * replaced or added: the same definitions, texts with the names of now, versions and lines.
 */

const SOURCE = corpusProgram("apps/02-todomvc/app.kumiki")?.source ?? "";

/** The program with a second `slot draft` (a faithful import keeps both; the later shows, the first is hidden). */
const WITH_CONFLICT = `${SOURCE}\nslot draft : Int = 0\n`;

/** The table's rows as a process reads them back from JSON. */
function kept(store: Store): ReturnType<typeof rowsOf> {
  return rowsOf(JSON.parse(JSON.stringify(definitionTable(store))) as DefinitionTable);
}

/** Patterns a view takes: every definition, a layer's, a name's in any layer, parts of names. */
const PATTERNS = ["*", "slot.*", "tile.*", "*.todos", "*.*e*", "tile.T*", "type.*", "app.*", "fn.noSuch*"];

/**
 * Every selector and list the table answers, checked against the store: each name that shows,
 * every definition by identity (removed and hidden ones too), patterns, the list of each layer and
 * of all. Returns how many names it answered.
 */
function sameAsStore(store: Store): number {
  const table = kept(store);
  for (const s of store.read().graph.definitions()) {
    expect(viewFromTable(table, s.def), s.def).toEqual(must(store.view(s.def)));
    expect(viewFromTable(table, s.def, { withDeps: true }), `${s.def} with deps`).toEqual(
      must(store.view(s.def, { withDeps: true })),
    );
    expect(refsFromTable(table, s.def), `refs ${s.def}`).toEqual(must(store.refs(s.def)));
  }
  for (const p of PATTERNS) {
    expect(viewFromTable(table, p), p).toEqual(must(store.view(p)));
    expect(viewFromTable(table, p, { withDeps: true }), `${p} with deps`).toEqual(
      must(store.view(p, { withDeps: true })),
    );
    // A pattern that matches nothing is the store's refusal (not-found).
    const refs = store.refs(p);
    expect(refsFromTable(table, p), `refs ${p}`).toEqual(refs.ok ? refs.value : undefined);
  }
  const status = store.status();
  expect(statusFromTable(table, status.author)).toEqual(status);
  for (const layer of [undefined, "slot", "tile", "type", "app"] as const)
    expect(listFromTable(table, layer), layer).toEqual(must(store.list(layer)));
  let answered = 0;
  for (const d of store.read().definitions()) {
    // A hidden definition's name shows the one that wins it (or, renamed apart, nothing: refused).
    const fromStore = store.view(d.qname);
    const fromTable = viewFromTable(table, d.qname);
    if (fromStore.ok) {
      expect(fromTable, d.qname).toEqual(fromStore.value);
      expect(viewFromTable(table, d.qname, { withDeps: true }), `${d.qname} with deps`).toEqual(
        must(store.view(d.qname, { withDeps: true })),
      );
    } else expect(fromTable, d.qname).toBeUndefined();
    const refs = store.refs(d.qname);
    expect(refsFromTable(table, d.qname), `refs ${d.qname}`).toEqual(refs.ok ? refs.value : undefined);
    if (d.visible) answered++;
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
        must(await importProgram(store, WITH_CONFLICT));
        expect(
          store
            .read()
            .definitions()
            .filter((d) => !d.visible),
        ).toHaveLength(1);
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

  it("takes a write's changed rows to the table after it, for every add, replace, rename and remove; says so for the rest", async () => {
    let clock = 1_780_000_000_000;
    const log = new MemoryOpLog();
    const opened = openStore({ log, author: "agent:test", now: () => clock++, validators: [] });
    if (!opened.ok) throw new Error(opened.error.message);
    const base = opened.value;
    // Two claimants of slot.draft: a rename or a remove of the one that shows shows the other.
    must(await importProgram(base, WITH_CONFLICT));
    const byDef = (rows: readonly (readonly unknown[])[]) =>
      new Map(rows.map((r) => [r[0], JSON.stringify(r)]));
    let taken = 0;
    let renamedOrRemoved = 0;
    const draft = fc.record({
      kind: fc.constantFrom("renameDraft" as const, "removeDraft" as const, "cascade" as const),
      at: fc.nat(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(write, draft), { minLength: 1, maxLength: 10 }), async (writes) => {
        // Each run on a copy of the imported program.
        const runLog = new MemoryOpLog();
        await runLog.append(log.all());
        const r = openStore({ log: runLog, author: "agent:test", now: () => clock++, validators: [] });
        if (!r.ok) throw new Error(r.error.message);
        const store = r.value;
        let table = byDef(definitionTable(store).rows);
        for (const w of writes) {
          const live = store.read().definitions();
          const d = live[("at" in w ? w.at : 0) % live.length]!;
          const held = runLog.all().length;
          // By identity: a definition a name conflict hides is renamed or removed too.
          if (w.kind === "rename") await store.rename({ qname: d.def, newName: `${w.name}R` });
          else if (w.kind === "remove") await store.remove({ qname: d.def, force: true });
          else if (w.kind === "renameDraft") await store.rename({ qname: "slot.draft", newName: "draftR" });
          else if (w.kind === "removeDraft") await store.remove({ qname: "slot.draft", force: true });
          else if (w.kind === "cascade") await store.remove({ qname: d.def, cascade: true });
          else if (w.kind === "replace" && d.layer === "slot")
            await store.replace({ qname: d.qname, body: `Int = ${w.n}` });
          else if (w.kind === "add") await store.add({ layer: "slot", name: `${w.name}A`, body: "Int = 0" });
          const written = runLog.all().slice(held);
          const after = byDef(definitionTable(store).rows);
          const rows = changedRows(store, written);
          if (rows !== undefined) {
            taken++;
            if (written.some((o) => ["rename", "remove"].includes(String((o as { op?: unknown }).op))))
              renamedOrRemoved++;
            for (const row of rows) table.set(row[0], JSON.stringify(row));
            expect(table).toEqual(after);
          }
          table = after;
        }
      }),
      { numRuns: 40 },
    );
    // Each kind was among the writes (the property held for them, not only for the rest).
    expect(taken).toBeGreaterThan(20);
    expect(renamedOrRemoved).toBeGreaterThan(20);
  });

  it("answers nothing it cannot answer as the store does: names nothing shows under, identities it does not hold, a damaged table", async () => {
    const store = memoryStore();
    must(await importProgram(store, SOURCE));
    const table = kept(store);
    const [first] = store.read().definitions();
    expect(viewFromTable(table, first!.qname)).toEqual(must(store.view(first!.qname)));
    expect(viewFromTable(table, `${first!.layer}.noSuchName`)).toBeUndefined();
    expect(viewFromTable(table, "def_00000000000000000000000000")).toBeUndefined();
    expect(viewFromTable(table, "not a selector")).toBeUndefined();
    expect(listFromTable(table, "noSuchLayer")).toBeUndefined();
    must(await store.remove({ qname: first!.qname, force: true }));
    expect(viewFromTable(kept(store), first!.qname)).toBeUndefined();
    // Hand-edited: a row cut short, a row claiming a name it does not show under, a row of another name.
    const rows = (JSON.parse(JSON.stringify(definitionTable(store))) as DefinitionTable).rows.map((r) => [
      ...r,
    ]);
    const [live] = store.read().definitions();
    const at = rows.findIndex((r) => r[0] === live!.def);
    const edited = (edit: (r: unknown[]) => unknown[]) =>
      rowsOf({
        v: 1,
        rows: rows.map((r, i) => (i === at ? edit(r) : r)) as unknown as DefinitionTable["rows"],
      });
    expect(
      viewFromTable(
        edited((r) => r),
        live!.qname,
      ),
    ).toEqual(must(store.view(live!.qname)));
    expect(
      viewFromTable(
        edited((r) => r.slice(0, 5)),
        live!.qname,
      ),
    ).toBeUndefined();
    expect(
      viewFromTable(
        edited((r) => r.map((x, j) => (j === 4 ? false : x))),
        live!.qname,
      ),
    ).toBeUndefined();
    // A list or a pattern from a table with one row cut short: the store answers, not a list without it.
    const cut = edited((r) => r.slice(0, 4));
    expect(listFromTable(cut)).toBeUndefined();
    expect(viewFromTable(cut, "*")).toBeUndefined();
    // A row whose head and whole row disagree (a file edited between the two reads).
    const torn = rowsOf(JSON.parse(JSON.stringify(definitionTable(store))) as DefinitionTable);
    const tornRows = {
      ...torn,
      every: () =>
        torn.every()?.map((h) => ({
          head: h.head,
          row: () =>
            rows[at] === undefined
              ? undefined
              : [...rows[at]!.slice(0, 2), "otherName", ...rows[at]!.slice(3)],
        })),
    };
    expect(viewFromTable(tornRows, `${live!.layer}.*`)).toBeUndefined();
    const other = {
      shownAs: () => rows[at === 0 ? 1 : 0],
      rowOf: () => undefined,
      every: () => undefined,
      referencing: () => undefined,
      status: () => undefined,
    };
    expect(statusFromTable(other, "agent:test")).toBeUndefined();
    expect(viewFromTable(other, live!.qname)).toBeUndefined();
    expect(refsFromTable(other, live!.qname)).toBeUndefined();
    // refs: a table that cannot say what references a name, or hands a row cut short as a referrer.
    expect(refsFromTable(cut, "*")).toBeUndefined();
    const whole = kept(store);
    expect(refsFromTable(whole, live!.qname)).toEqual(must(store.refs(live!.qname)));
    expect(refsFromTable({ ...whole, referencing: () => undefined }, live!.qname)).toBeUndefined();
    expect(
      refsFromTable({ ...whole, referencing: () => [rows[at]!.slice(0, 4)] }, live!.qname),
    ).toBeUndefined();
    // A kept status edited by hand: a count that is not one, a field it does not have.
    const { author, ...status } = store.status();
    expect(statusFromTable({ ...whole, status: () => status }, author)).toEqual(store.status());
    expect(statusFromTable({ ...whole, status: () => ({ ...status, ops: -1 }) }, author)).toBeUndefined();
    expect(statusFromTable({ ...whole, status: () => ({ ...status, extra: 1 }) }, author)).toBeUndefined();
  });
});
