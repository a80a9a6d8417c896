import { corpusProgram, corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { exportProgram, importProgram } from "../../src/project/program.js";
import { memoryStore, must } from "./helpers.js";

const PROGRAM = [
  "# Header of the file",
  "",
  "# About count",
  "slot count : Int = 0   # trailing",
  "",
  "",
  "# ====== Tiles ======",
  "",
  "tile App = column(",
  "    text(count.show))",
  "",
  "# the end",
  "",
].join("\n");

describe("importProgram / exportProgram", () => {
  it("gives an unedited program back byte for byte: comments, blank lines, banners and the tail", async () => {
    const store = memoryStore();
    const r = must(await importProgram(store, PROGRAM, { task: "import" }));
    expect(r.ops.map((o) => o.op)).toEqual(["add", "add"]);
    expect(r.ops.every((o) => o.task === "import")).toBe(true);
    expect(exportProgram(store)).toBe(PROGRAM);
  });

  it("keeps a program without a final newline, same-line definitions and CRLF", async () => {
    for (const text of [
      "type A = Int\ntype B = Text",
      "type A = Int  type B = Text\n",
      "# c\r\ntype A = Int\r\n\r\n",
    ]) {
      const store = memoryStore();
      must(await importProgram(store, text));
      expect(exportProgram(store)).toBe(text);
    }
  });

  it("keeps the order of import; a rename keeps its place, new definitions follow in the order added", async () => {
    const store = memoryStore();
    must(await importProgram(store, "type Z = Int\ntype A = Z\nslot b : A = 0\n"));
    must(await store.rename({ qname: "type.Z", newName: "Y" }));
    must(await store.add({ source: "type C = Int" }));
    must(await store.add({ source: "fn f(x: Int) -> Int = x" }));
    expect(exportProgram(store)).toBe(
      "type Y = Int\ntype A = Y\nslot b : A = 0\ntype C = Int\nfn f(x: Int) -> Int = x",
    );
  });

  it("puts a line break between texts only where they would run together", async () => {
    const store = memoryStore();
    must(await importProgram(store, "type A = Int # no newline"));
    must(await store.add({ source: "  type B = Int" }));
    must(await store.add({ source: "type C = Int" }));
    expect(exportProgram(store)).toBe("type A = Int # no newline\n  type B = Int\ntype C = Int");
  });

  it("strict: refuses a text that does not parse, with its position, and writes nothing", async () => {
    const store = memoryStore();
    const r = await importProgram(store, "type A = Int\n\nslot b : = 0\n", { strict: true });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("parse-error");
    expect(r.error.details).toMatchObject({ line: 3 });
    expect(r.error.message).toContain("nothing was imported");
    expect(store.status().ops).toBe(0);
  });

  it("refuses text before the first definition that is neither blank nor a comment, writing nothing", async () => {
    const store = memoryStore();
    const r = await importProgram(store, "oops\ntype A = Int\n\nslot b : = 0\n");
    expect(r.ok || r.error.code).toBe("parse-error");
    if (r.ok) return;
    expect(r.error.details).toMatchObject({ line: 1 });
    expect(store.status().ops).toBe(0);
  });

  it("refuses a program the store refuses (a name already taken), naming the definition and its line", async () => {
    const store = memoryStore();
    must(await importProgram(store, "type A = Int\n"));
    const r = await importProgram(store, "type B = Int\n\ntype A = Text\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("duplicate-name");
    expect(r.error.message).toContain("type.A at line 3");
    expect(exportProgram(store)).toBe("type A = Int\n");
  });

  it("refuses a program with no definition", async () => {
    const store = memoryStore();
    const r = await importProgram(store, "# only a comment\n\n");
    expect(r.ok ? "ok" : r.error.code).toBe("program-empty");
  });

  it("reports progress: split, each definition read, then stored", async () => {
    const seen: [number, number][] = [];
    must(await importProgram(memoryStore(), PROGRAM, { onProgress: (d, t) => seen.push([d, t]) }));
    expect(seen).toEqual([
      [0, 2],
      [1, 2],
      [2, 2],
      [2, 2],
    ]);
  });

  it("moves through a large import in about a hundred steps (was: 0, then all at once)", async () => {
    const n = 1_000;
    const source = Array.from({ length: n }, (_, i) => `slot s${i} : Int = ${i}\n`).join("\n");
    const seen: number[] = [];
    must(await importProgram(memoryStore(), source, { onProgress: (d, t) => (t === n ? seen.push(d) : 0) }));
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(n);
    expect(seen.filter((d) => d > 0 && d < n).length).toBeGreaterThanOrEqual(90);
    expect(seen.every((d, i) => i === 0 || d >= seen[i - 1]!)).toBe(true);
  });
});

describe.skipIf(!hasCorpus)("every corpus program", () => {
  for (const p of corpusPrograms()) {
    it(`${p.id}: text → store → text is byte-identical`, async () => {
      const store = memoryStore();
      const r = await importProgram(store, p.source);
      must(r);
      expect(exportProgram(store)).toBe(p.source);
    });
  }
});

describe.skipIf(!hasCorpus)("with the full write gate (the checker)", () => {
  it("imports the todomvc app and exports it byte for byte", async () => {
    const p = corpusProgram("apps/02-todomvc/app.kumiki")!;
    const store = memoryStore("agent:test", true);
    must(await importProgram(store, p.source));
    expect(exportProgram(store)).toBe(p.source);
  });
});

describe("an import of a large program", () => {
  /** `n` definitions: slots, and a function per ten slots reading the slot before it. */
  const program = (n: number): string => {
    const lines: string[] = [];
    for (let i = 0; i < n; i++)
      lines.push(i % 10 === 9 ? `fn f${i} (x: Int) : Int = x + s${i - 1}` : `slot s${i} : Int = ${i}`);
    return `${lines.join("\n")}\n`;
  };

  it("takes more than 10,000 definitions in one bundle (the old limit), and exports them back", async () => {
    const store = memoryStore();
    const text = program(12_000);
    const r = must(await importProgram(store, text));
    expect(r.ops).toHaveLength(12_000);
    expect(exportProgram(store)).toBe(text);
  }, 60_000);

  it("refuses a program over one import's limit by its size, with what to do, and writes nothing", async () => {
    const store = memoryStore();
    const r = await importProgram(store, program(100_001));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("invalid-input");
    expect(r.error.message).toBe(
      "the program holds 100,001 definitions; one import takes at most 100,000: split it and import the parts one after another, each after the parts it references; nothing was imported",
    );
    expect(store.status().ops).toBe(0);
  }, 60_000);
});
