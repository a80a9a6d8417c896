import { checkProgram } from "@kumiki-graph/core";
import { parseProgram, resolveProgram } from "@kumiki-graph/core/lang";
import { corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { generateProgram } from "../bench/generate.js";

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
