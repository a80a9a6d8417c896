import { corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import type { Definition, Program } from "../../src/lang/ast.js";
import { LAYERS } from "../../src/lang/layers.js";
import { parseDefinition, parseProgram } from "../../src/lang/parser.js";

const programs = corpusPrograms();

/** Top-level definitions counted without the parser: a line starting with a layer keyword and a name. */
function countDefinitionLines(source: string): number {
  const head = new RegExp(`^(${LAYERS.join("|")})[ \\t]+[A-Za-z]`);
  return source.split(/\r?\n/).filter((line) => head.test(line)).length;
}

function parsed(source: string): Program {
  const r = parseProgram(source);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

const lineStartsCache = new Map<string, number[]>();

/** 1-based line and column of `offset`, from the line starts (computed once per source). */
function lineColumn(source: string, offset: number): [number, number] {
  let starts = lineStartsCache.get(source);
  if (starts === undefined) {
    starts = [0];
    for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) starts.push(i + 1);
    lineStartsCache.set(source, starts);
  }
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return [lo + 1, offset - starts[lo]! + 1];
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * Structural invariants of every node: plain JSON, a `kind` and a `span` inside the source and
 * inside its parent's span, no `undefined`, identifiers whose span text is their name, strings
 * whose span covers the quotes.
 */
function checkNode(
  node: Json,
  source: string,
  parent: { offset: number; end: number },
  path: string,
  problems: string[],
): void {
  if (problems.length > 10) return;
  if (Array.isArray(node)) {
    node.forEach((item, i) => {
      checkNode(item, source, parent, `${path}[${i}]`, problems);
    });
    return;
  }
  if (node === null || typeof node !== "object") return;
  if (Object.getPrototypeOf(node) !== Object.prototype) problems.push(`${path}: not a plain object`);
  const kind = node.kind;
  const span = node.span as { offset: number; end: number; line: number; column: number } | undefined;
  if (typeof kind !== "string") problems.push(`${path}: no kind`);
  if (span === undefined || typeof span.offset !== "number") {
    problems.push(`${path} (${String(kind)}): no span`);
    return;
  }
  if (span.offset < parent.offset || span.end > parent.end || span.end < span.offset) {
    problems.push(
      `${path} (${String(kind)}): span ${span.offset}-${span.end} outside its parent ${parent.offset}-${parent.end}`,
    );
  }
  const [line, column] = lineColumn(source, span.offset);
  if (line !== span.line || column !== span.column)
    problems.push(`${path}: line/column ${span.line}:${span.column} != ${line}:${column}`);
  const text = source.slice(span.offset, span.end);
  if (kind === "Ident" && text !== node.name && !(text.startsWith('"') && text.endsWith('"'))) {
    problems.push(`${path}: Ident ${String(node.name)} spans ${JSON.stringify(text)}`);
  }
  if (kind === "String" && !(text.startsWith('"') && text.endsWith('"')))
    problems.push(`${path}: string span ${text}`);
  for (const [key, value] of Object.entries(node)) {
    if (value === undefined) problems.push(`${path}.${key}: undefined`);
    if (key === "span") continue;
    checkNode(value as Json, source, span, `${path}.${key}`, problems);
  }
}

describe("the structural check itself", () => {
  it("accepts a well-formed tree and catches broken ones", () => {
    const source = "slot a : Int = b";
    const tree = parsed(source) as unknown as Json;
    const problems: string[] = [];
    checkNode(tree, source, { offset: 0, end: source.length }, "program", problems);
    expect(problems).toEqual([]);
    const broken = JSON.parse(
      JSON.stringify(tree).replace('"name":"b"', '"name":"c"').replace('"column":16', '"column":15'),
    );
    checkNode(broken, source, { offset: 0, end: source.length }, "program", problems);
    expect(problems.join("\n")).toMatch(/Ident c spans "b"/);
    expect(problems.join("\n")).toMatch(/line\/column 1:15 != 1:16/);
  });
});

describe.skipIf(!hasCorpus)("the conformance corpus parses", () => {
  it("has all 77 programs", () => {
    expect(programs.length).toBe(77);
  });

  for (const program of programs) {
    it(program.id, () => {
      const r = parseProgram(program.source);
      if (!r.ok) expect.fail(`${program.id}: ${r.error.message}`);
      const defs: readonly Definition[] = r.value.definitions;
      expect(defs.length).toBe(countDefinitionLines(program.source));
      for (const def of defs) {
        const text = program.source.slice(def.span.offset, def.span.end);
        expect(text, `${def.layer} ${def.name.name}`).toMatch(
          new RegExp(`^${def.layer}\\s+${def.name.name}\\b`),
        );
        // A definition ends at its last token: never on whitespace or a comment.
        expect(text, `${def.layer} ${def.name.name}`).toMatch(/[^\s]$/);
        expect(program.source.slice(def.name.span.offset, def.name.span.end)).toBe(def.name.name);
      }
      const problems: string[] = [];
      checkNode(
        r.value as unknown as Json,
        program.source,
        { offset: 0, end: program.source.length },
        "program",
        problems,
      );
      expect(problems).toEqual([]);
    });
  }

  it("every definition parses alone from its own text, to the same AST modulo offsets", () => {
    for (const program of programs) {
      for (const def of parsed(program.source).definitions) {
        const text = program.source.slice(def.span.offset, def.span.end);
        const alone = parseDefinition(text);
        if (!alone.ok) expect.fail(`${program.id} ${def.layer} ${def.name.name}: ${alone.error.message}`);
        expect(JSON.stringify(alone.value, (k, v) => (k === "span" ? undefined : v))).toBe(
          JSON.stringify(def, (k, v) => (k === "span" ? undefined : v)),
        );
      }
    }
  });
});
