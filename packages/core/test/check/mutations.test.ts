/**
 * Mutation kinds of our own, generated from every program of ../shared/kumiki/examples (never a
 * copied program), each with the verdict language.md's rules give:
 *
 * - `wrong-arm`: a fn whose declared return type is a primitive and whose body is a `match` gets a
 *   literal of another primitive in one arm (`| Active -> "x"` in a fn `-> Bool`): the arm is the
 *   fn's value, so E0201 on that arm's line;
 * - `map-as-int`: a slot declared as a Map and indexed somewhere (`tasks[id]`) is declared `Int`
 *   instead: every index of it is an E0201 (an Int cannot be indexed), on the indexing line.
 *
 * Were: clean, both (only literals in a fn body's own position, and no index was judged).
 */

import { corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import type { Expr, FnDef, SlotDef } from "../../src/lang/ast.js";
import { parseProgram } from "../../src/lang/parser.js";
import { check } from "./helpers.js";

const PRIMITIVES: Readonly<Record<string, string>> = { Bool: '"x"', Int: '"x"', Float: '"x"', Text: "true" };

/** The file line of an offset. */
function lineAt(source: string, offset: number): number {
  return source.slice(0, offset).split("\n").length;
}

/** The errors of `source`, as `code@file line`. */
function placedErrors(source: string): string[] {
  const parsed = parseProgram(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const first = new Map(parsed.value.definitions.map((d) => [`${d.layer}.${d.name.name}`, d.span.line]));
  return check(source)
    .filter((d) => d.severity === "error")
    .map((d) => {
      const m = /^([a-z]+\.[^.]+(?:\.[^.]+)*)\.body:(\d+)$/.exec(d.location);
      const at = m === null ? undefined : first.get(m[1]!);
      return `${d.code}@${at === undefined ? d.location : at + Number(m![2]) - 1}`;
    });
}

const programs = hasCorpus ? corpusPrograms().filter((p) => parseProgram(p.source).ok) : [];
/** The corpus programs that check clean as written (a mutation's errors are then its own). */
const clean = programs.filter((p) => placedErrors(p.source).length === 0);

describe.skipIf(!hasCorpus)("mutation kinds generated from the corpus", () => {
  it("wrong-arm: a literal of another primitive in a match arm of a fn's value is an E0201 there", () => {
    let made = 0;
    for (const p of clean) {
      const defs = parseProgram(p.source);
      if (!defs.ok) continue;
      for (const d of defs.value.definitions) {
        if (d.kind !== "FnDef") continue;
        const fn = d as FnDef;
        const ret = fn.returnType;
        if (ret?.kind !== "TypeRef" || ret.args !== undefined || !(ret.name.name in PRIMITIVES)) continue;
        if (fn.body.kind !== "Match") continue;
        const arm = fn.body.arms[0]!.body as Expr & { span: { offset: number; end: number } };
        const mutated = `${p.source.slice(0, arm.span.offset)}${PRIMITIVES[ret.name.name]}${p.source.slice(arm.span.end)}`;
        const errors = placedErrors(mutated);
        expect(errors, `${p.id}: fn ${fn.name.name}`).toContain(`E0201@${lineAt(p.source, arm.span.offset)}`);
        made++;
      }
    }
    expect(made).toBeGreaterThanOrEqual(5);
  });

  it("map-as-int: every index of a Map slot declared Int instead is an E0201 on its line", () => {
    let made = 0;
    let indexes = 0;
    for (const p of clean) {
      const defs = parseProgram(p.source);
      if (!defs.ok) continue;
      for (const d of defs.value.definitions) {
        if (d.kind !== "SlotDef") continue;
        const slot = d as SlotDef;
        if (slot.type.kind !== "TypeRef" || slot.type.name.name !== "Map") continue;
        const name = slot.name.name;
        // Reads and writes `name[…]` outside the slot's own definition, as whole words.
        const uses = [...p.source.matchAll(new RegExp(`(?<![\\w$.-])${name}\\[`, "g"))].map((m) => m.index!);
        if (uses.length === 0) continue;
        const mutated =
          `${p.source.slice(0, slot.type.span.offset)}Int${p.source.slice(slot.type.span.end)}`.replace(
            /(slot\s+\S+\s*:\s*Int\s*=\s*)\{\}/,
            "$10",
          );
        const errors = placedErrors(mutated);
        for (const at of uses) {
          expect(errors, `${p.id}: ${name}[ at line ${lineAt(p.source, at)}`).toContain(
            `E0201@${lineAt(p.source, at)}`,
          );
          indexes++;
        }
        made++;
      }
    }
    expect(made).toBeGreaterThanOrEqual(5);
    expect(indexes).toBeGreaterThanOrEqual(20);
  });
});
