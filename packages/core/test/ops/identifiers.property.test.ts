import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasIdentifier, identifiers } from "../../src/ops/merge.js";

// Texts from the characters that decide an identifier's bounds (letters, digits, _ and -, and
// what ends one), so that names occur inside, beside and across identifiers often.
const char = fc.constantFrom("a", "b", "A", "1", "_", "-", " ", ".", "(", '"', "é");
const text = fc.array(char, { maxLength: 40 }).map((cs) => cs.join(""));
const name = fc.oneof(
  fc
    .array(fc.constantFrom("a", "b", "A", "1", "_", "-"), { minLength: 0, maxLength: 4 })
    .map((cs) => cs.join("")),
  fc.constantFrom("a", "ab", "a-b", "b_1", "1a", "-a", ""),
);

describe("hasIdentifier", () => {
  it("answers exactly whether identifiers(text) holds name, for every text and name", () => {
    fc.assert(
      fc.property(text, name, (t, n) => {
        expect(hasIdentifier(t, n)).toBe(identifiers(t).has(n));
      }),
      { numRuns: 5000 },
    );
  });

  it("finds a name after a digit or an underscore run, never inside a longer identifier", () => {
    expect(hasIdentifier("1-abc", "abc")).toBe(true);
    expect(hasIdentifier("_abc", "abc")).toBe(true);
    expect(hasIdentifier("a1-abc", "abc")).toBe(false);
    expect(hasIdentifier("abc-d abc", "abc")).toBe(true);
    expect(hasIdentifier("abcd", "abc")).toBe(false);
  });
});
