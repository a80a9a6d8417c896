/**
 * Import is faithful (BRIEF principle: nothing the user wrote is ever lost): a program with errors
 * imports as written, exports back byte for byte, and `check` then reports its errors, so the
 * repair loop of ai-edit.md §9.6.2 can start from it. `strict` refuses it instead.
 *
 * The broken programs are the conformance corpus's (../shared/kumiki/conformance): each example
 * with one mutation — a misspelt reference, a removed definition still referenced, a wrong
 * argument count, an undeclared capability, a type error, null.
 */

import fs from "node:fs";
import path from "node:path";
import {
  brokenCases,
  conformanceRoot,
  corpusPrograms,
  hasConformance,
  hasCorpus,
} from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { normalizePatch } from "../../src/fix/normalize.js";
import { openStore } from "../../src/integrity/checked-store.js";
import { checkStore } from "../../src/integrity/store-check.js";
import { splitProgram } from "../../src/lang/split.js";
import { exportProgram, importProgram } from "../../src/project/program.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoredOp } from "../../src/store/op-log.js";
import type { Store } from "../../src/store/store.js";
import { memoryStore, must } from "./helpers.js";

const root = conformanceRoot;
const present = hasConformance;
const cases = brokenCases();

describe("faithful import", () => {
  it("a one-typo program imports, exports byte for byte, and check reports the typo with its fix", async () => {
    const source =
      'slot count : Int = 0\ntile Btn = button("+")\nreducer inc on=ui.click(Btn) do= conut := count + 1\n';
    const store = memoryStore("agent:test", true);
    must(await importProgram(store, source));
    expect(exportProgram(store)).toBe(source);
    const report = checkStore(store, { requireApp: false });
    expect(report.diagnostics.map((d) => `${d.code}@${d.location}`)).toEqual(["E0103@reducer.inc.body:1"]);
    expect(report.diagnostics[0]?.["auto-patch"]).toBeDefined();
  });

  it("a name defined twice imports both; references bind to the later (it shows), E0007 falls on the earlier", async () => {
    const source = [
      "slot count : Int = 0",
      'tile Btn = button("old")',
      "reducer inc on=ui.click(Btn) do= count := count + 1",
      'tile Btn = button("new")',
      "",
    ].join("\n");
    const store = memoryStore("agent:test", true);
    const receipt = must(await importProgram(store, source));
    expect(receipt.lost ?? []).toEqual([]);
    expect(exportProgram(store)).toBe(source);
    const g = store.read().graph;
    const [earlier, later] = g.claimants("tile", "Btn").toSorted();
    expect(g.lookup("tile", "Btn")).toBe(later);
    const inc = g.lookup("reducer", "inc")!;
    expect(
      store
        .read()
        .materializer.sites(g.definition(inc)!)
        ?.map((b) => b.target),
    ).toContain(later);
    const report = checkStore(store, { requireApp: false });
    expect(report.diagnostics.map((d) => `${d.code}@${d.definition}`)).toEqual([`E0007@${earlier}`]);
    // The repair: remove the hidden one by its identity; then check is clean.
    must(await store.remove({ qname: earlier! }));
    expect(checkStore(store, { requireApp: false }).diagnostics).toEqual([]);
    expect(exportProgram(store)).toBe(source.replace('tile Btn = button("old")\n', ""));
  });

  it("export keeps a definition a concurrent same-name add hid (nothing live is left out)", async () => {
    const a = memoryStore("agent:a", true);
    const b = memoryStore("agent:b", true);
    must(await a.add({ layer: "slot", name: "x", body: "Int = 1" }));
    must(await b.add({ layer: "slot", name: "x", body: "Int = 2" }));
    const opsOf = (s: typeof a) => JSON.parse(JSON.stringify([...s.read().graph.ops()])) as StoredOp[];
    const [fromA, fromB] = [opsOf(a), opsOf(b)];
    await a.ingest(fromB);
    await b.ingest(fromA);
    const text = exportProgram(a);
    expect(text).toBe(exportProgram(b));
    expect(text).toContain("Int = 1");
    expect(text).toContain("Int = 2");
    expect(checkStore(a, { requireApp: false }).diagnostics.map((d) => d.code)).toEqual(["E0007"]);
  });

  it("a definition that does not parse is stored as its text: E0008, export byte for byte, repaired by a replace", async () => {
    const source = [
      "# counter",
      "slot count : Int = 0",
      "# about inc",
      "reducer inc on=ui.click(Btn)",
      "    do= count := (count + 1",
      "",
      'tile Btn = button("+", onClick=inc)',
      "",
    ].join("\n");
    const store = memoryStore("agent:test", true);
    must(await importProgram(store, source));
    expect(exportProgram(store)).toBe(source);
    const [d, ...rest] = checkStore(store, { requireApp: false }).diagnostics;
    expect(rest).toEqual([]);
    expect(d).toMatchObject({ code: "E0008", kind: "parse-error", location: "reducer.inc.body:3" });
    expect(d?.message).toContain("reducer.inc does not parse");
    // The tile's onClick names the unparsed reducer: bound by name like any other definition.
    const g = store.read().graph;
    const btn = g.definition(g.lookup("tile", "Btn")!)!;
    expect(
      store
        .read()
        .materializer.sites(btn)
        ?.map((b) => b.target),
    ).toContain(g.lookup("reducer", "inc"));
    // Another write is not blocked by the error already there; a replace that parses repairs it.
    must(await store.add({ layer: "slot", name: "other", body: "Int = 1" }));
    must(
      await store.replace({ qname: "reducer.inc", body: "on=ui.click(Btn)\n    do= count := count + 1\n" }),
    );
    expect(checkStore(store, { requireApp: false }).diagnostics).toEqual([]);
    expect(exportProgram(store)).toContain(
      "# about inc\nreducer inc on=ui.click(Btn)\n    do= count := count + 1\n",
    );
  });

  it("§9.6.2 one error at a time: each auto-patch of a definition with two misspellings is accepted as it is", async () => {
    const source =
      'slot count : Int = 0\nslot total : Int = 0\ntile Btn = button("+")\nreducer inc on=ui.click(Btn) do= totl := cuont + 1\n';
    const store = memoryStore("agent:test", true);
    must(await importProgram(store, source));
    const first = checkStore(store, { requireApp: false }).diagnostics;
    expect(first.map((d) => d.code)).toEqual(["E0103", "E0103"]);
    // The first patch alone: it removes one error and adds none, so it is written (the other
    // misspelling stays unbound, as it was).
    must(await store.apply(must(normalizePatch(first[0]!["auto-patch"]))));
    const second = checkStore(store, { requireApp: false }).diagnostics;
    expect(second).toHaveLength(1);
    must(await store.apply(must(normalizePatch(second[0]!["auto-patch"]))));
    expect(checkStore(store, { requireApp: false }).diagnostics).toEqual([]);
    expect(exportProgram(store)).toContain("do= total := count + 1");
    // A write may still not add an unbound name of its own.
    const worse = await store.edit({
      qname: "reducer.inc",
      patch: [{ find: "count + 1", replace: "cnt + 1" }],
    });
    expect(worse.ok || worse.error.code).toBe("undefined-reference");
  });

  it("view shows a definition from its doc comment; the section banner above stays for export", async () => {
    const source = "type A = Int\n\n# ====== Slots ======\n\n# the count\nslot x : Int = 0\n";
    const store = memoryStore("agent:test", true);
    must(await importProgram(store, source));
    const v = store.view("slot.x");
    expect(v.ok && v.value.text).toBe("# the count\nslot x : Int = 0\n");
    expect(exportProgram(store)).toBe(source);
  });

  it("strict refuses a program that does not parse, writing nothing", async () => {
    const store = memoryStore("agent:test", true);
    const r = await importProgram(store, "slot count : Int = (0\n", { strict: true });
    expect(r.ok || r.error.code).toBe("parse-error");
    expect(store.status().ops).toBe(0);
  });

  it("strict refuses it, writing nothing", async () => {
    const store = memoryStore("agent:test", true);
    const r = await importProgram(store, "slot count : Int = 0\nfn f() -> Int = cuont\n", { strict: true });
    expect(r.ok).toBe(false);
    expect(store.status().ops).toBe(0);
  });
});

describe.skipIf(!present)("every broken program of the conformance corpus", () => {
  it.each(cases.map((c) => [c.file, c] as const))("%s imports as written and exports back", async (_f, c) => {
    const source = fs.readFileSync(path.join(root, c.file), "utf8");
    const store = memoryStore("agent:test", true);
    const r = await importProgram(store, source);
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    expect(exportProgram(store)).toBe(source);
    if (c.kind === "duplicate-def") {
      // Both definitions are kept; the later one shows (as upstream reads it); check says E0007.
      const codes = checkStore(store, { requireApp: false }).diagnostics.map((d) => d.code);
      expect(codes).toContain("E0007");
    }
  });
});

/**
 * Each example with a line that does not parse: the middle definition's keyword line gets an
 * unclosed `(` after its first `=`. Deterministic, made in code from ../shared (never copied).
 */
function withBrokenLine(source: string): { text: string; broken: string; original: string } | undefined {
  const split = splitProgram(source);
  if (!split.ok) return undefined;
  const defs = split.value.filter((p) => p.kind === "definition");
  const mid = defs[defs.length >> 1];
  if (mid === undefined || !mid.text.includes("= ")) return undefined;
  const broken = mid.text.replace("= ", "= ( ");
  return { text: source.replace(mid.text, broken), broken: `${mid.layer}.${mid.name}`, original: mid.text };
}

describe.skipIf(!hasCorpus)("every example with a line that does not parse", () => {
  it.each(corpusPrograms().map((p) => [p.id, p] as const))(
    "%s imports, exports byte for byte, and repairs",
    async (_id, p) => {
      const m = withBrokenLine(p.source);
      if (m === undefined) return;
      const store = memoryStore("agent:test", true);
      must(await importProgram(store, m.text));
      expect(exportProgram(store)).toBe(m.text);
      const ds = checkStore(store, { requireApp: false }).diagnostics;
      expect(ds.filter((d) => d.code === "E0008").map((d) => d.location.split(".body")[0])).toEqual([
        m.broken,
      ]);
      // Every other definition is stored as usual; a replace with the original text repairs it.
      const original = memoryStore("agent:test", true);
      must(await importProgram(original, p.source));
      expect(store.status().definitions).toBe(original.status().definitions);
      // The definition from its keyword line: the comments above it stay as the store holds them.
      const fromKeyword = m.original.slice(m.original.search(/^[a-z]+ /m));
      must(await store.replace({ qname: m.broken, source: fromKeyword }));
      expect(exportProgram(store)).toBe(p.source);
      const errors = (s: typeof store) =>
        checkStore(s, { requireApp: false }).diagnostics.map((d) => `${d.code}@${d.location}`);
      expect(errors(store)).toEqual(errors(original));
    },
  );
});

/** A checked memory store over `log` (the log is what `patch export` writes). */
function storeOver(log: MemoryOpLog): Store {
  let clock = 1_780_000_000_000;
  const r = openStore({ log, author: "agent:test", now: () => clock++ });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

describe.skipIf(!present || !hasCorpus)(
  "ops exported from a faithful import apply to an empty workspace",
  () => {
    const sources = [
      ...cases.map((c) => [c.file, fs.readFileSync(path.join(root, c.file), "utf8")] as const),
      ...corpusPrograms().flatMap((p) => {
        const m = withBrokenLine(p.source);
        return m === undefined ? [] : [[`${p.id} with a line that does not parse`, m.text] as const];
      }),
    ];
    it.each(sources)(
      "%s: ingest takes every op, the same program and the same diagnostics",
      async (_f, source) => {
        const log = new MemoryOpLog();
        const a = storeOver(log);
        must(await importProgram(a, source));
        // What a replica holds after sync, and what `patch export | patch apply` carries.
        const b = storeOver(new MemoryOpLog());
        const r = await b.ingest(log.all());
        expect(r.ok, r.ok ? "" : `${r.error.code}: ${r.error.message}`).toBe(true);
        expect(exportProgram(b)).toBe(exportProgram(a));
        const diagnostics = (s: Store) =>
          checkStore(s, { requireApp: false }).diagnostics.map((d) => `${d.code}@${d.location}`);
        expect(diagnostics(b)).toEqual(diagnostics(a));
      },
    );
  },
);
