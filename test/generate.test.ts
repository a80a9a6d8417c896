import { checkProgram } from "@kumiki-graph/core";
import { parseProgram, resolveProgram } from "@kumiki-graph/core/lang";
import { corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { atSize, atSizeInParts, generateProgram } from "../bench/generate.js";

describe.skipIf(!hasCorpus)("the benchmark generator scales real programs", () => {
  const base = () => {
    const p = corpusProgram("apps/05-project-management/app.kumiki");
    if (p === undefined) throw new Error("corpus program missing");
    return { name: "05-project-management", text: p.source };
  };

  for (const size of [1000, 5000]) {
    it(`makes exactly ${size} definitions that parse, resolve and check with no error`, () => {
      const g = generateProgram(base(), size, 1);
      const parsed = parseProgram(g.text);
      if (!parsed.ok) throw new Error(parsed.error.message);
      expect(parsed.value.definitions).toHaveLength(size);
      const resolved = resolveProgram(parsed.value);
      // A copy that renamed a name but not its use would show here as an E01xx undefined reference.
      const errors = checkProgram(resolved.map((r) => ({ ...r, source: g.text }))).filter(
        (d) => d.severity === "error",
      );
      expect(errors.map((d) => `${d.code} ${d.location}`)).toEqual([]);
      const names = new Set(parsed.value.definitions.map((d) => `${d.layer}.${d.name.name}`));
      expect(names.size).toBe(size);
    });
  }

  it("cuts a program between copies: each part at most the bound, together the program, each checked alone with no error", () => {
    const whole = atSize(base().text, 2500);
    const parts = atSizeInParts(base().text, 2500, 1000);
    expect(parts.length).toBe(3);
    const counts = parts.map((p) => {
      const parsed = parseProgram(p);
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.value.definitions.length;
    });
    expect(counts.every((n) => n <= 1000)).toBe(true);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2500);
    // The parts in order are the program's definitions in order, text for text.
    const defs = (text: string) => {
      const parsed = parseProgram(text);
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.value.definitions.map((d) => text.slice(d.span.offset, d.span.end));
    };
    expect(parts.flatMap(defs)).toEqual(defs(whole));
    // A copy references only itself: the first part (with the app) checks alone with no error.
    const first = parseProgram(parts[0]!);
    if (!first.ok) throw new Error(first.error.message);
    const errors = checkProgram(resolveProgram(first.value).map((r) => ({ ...r, source: parts[0]! }))).filter(
      (d) => d.severity === "error",
    );
    expect(errors.map((d) => `${d.code} ${d.location}`)).toEqual([]);
  });

  it("is deterministic from its seed, and another seed gives another program", () => {
    const a = generateProgram(base(), 1000, 42);
    expect(generateProgram(base(), 1000, 42).text).toBe(a.text);
    expect(generateProgram(base(), 1000, 43).text).not.toBe(a.text);
  });

  it("keeps the first copy's definitions byte for byte and renames the others", () => {
    const g = generateProgram(base(), 1000, 3);
    const original = parseProgram(base().text);
    const parsed = parseProgram(g.text);
    if (!original.ok || !parsed.ok) throw new Error("parse failed");
    const text = (src: string, d: { span: { offset: number; end: number } }) =>
      src.slice(d.span.offset, d.span.end);
    original.value.definitions.forEach((d, i) => {
      const copy = parsed.value.definitions[i];
      expect(copy && text(g.text, copy)).toBe(text(base().text, d));
    });
    const second = g.copies[1]?.suffix;
    expect(second).toMatch(/^X[0-9a-z]+$/);
    expect(parsed.value.definitions.some((d) => d.name.name.endsWith(second as string))).toBe(true);
  });
});
