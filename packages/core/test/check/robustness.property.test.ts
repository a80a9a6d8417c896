import { corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { codeInfo } from "../../src/check/codes.js";
import { parseProgram } from "../../src/lang/parser.js";
import { check } from "./helpers.js";

describe.skipIf(!hasCorpus)("robustness", () => {
  const programs = corpusPrograms();

  it("never throws on a damaged program that still parses, and reports only registered codes", () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.array(fc.record({ at: fc.nat(), len: fc.integer({ min: 1, max: 12 }), dup: fc.boolean() }), {
          minLength: 1,
          maxLength: 4,
        }),
        (pick, cuts) => {
          let source = programs[pick % programs.length]!.source;
          for (const c of cuts) {
            const at = c.at % Math.max(1, source.length);
            const piece = source.slice(at, at + c.len);
            source = c.dup
              ? source.slice(0, at) + piece + source.slice(at)
              : source.slice(0, at) + source.slice(at + c.len);
          }
          if (!parseProgram(source).ok) return;
          for (const d of check(source, { a11y: true })) {
            expect(codeInfo(d.code)?.kinds).toContain(d.kind);
            expect(d.location).toMatch(/^program$|^[a-z]+\.[^.\s]+\.body:\d+$/);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
