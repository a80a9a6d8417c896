import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  LIMIT_NAMES,
  limitsDocument,
  parseLimitAssignments,
  resolveLimits,
} from "../src/index.js";

describe("limits", () => {
  it("parse NAME=N assignments into the limits in effect, for every name and value", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...LIMIT_NAMES), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })),
        (set) => {
          const parsed = parseLimitAssignments(Object.entries(set).map(([k, v]) => `${k}=${v}`));
          expect(parsed.ok).toBe(true);
          const resolved = resolveLimits(parsed.ok ? parsed.value : {});
          expect(resolved).toEqual({ ok: true, value: { ...DEFAULT_LIMITS, ...set } });
        },
      ),
    );
  });

  it("refuse an unknown name, a value that is not a positive integer, or another shape, naming it", () => {
    expect(parseLimitAssignments(["bodyByte=10"])).toEqual({
      ok: false,
      message:
        'unknown limit "bodyByte": one of bodyBytes, responseBytes, wildcardResults, httpSessions, idleSeconds',
    });
    expect(parseLimitAssignments(["bodyBytes=0"])).toMatchObject({ ok: false });
    expect(parseLimitAssignments(["bodyBytes"])).toMatchObject({
      ok: false,
      message: expect.stringContaining('"bodyBytes" is not NAME=N'),
    });
    expect(parseLimitAssignments(["responseBytes=-1"])).toMatchObject({ ok: false });
  });

  it("are published with what each one bounds", () => {
    const doc = limitsDocument(DEFAULT_LIMITS);
    expect(doc.limits.map((l) => l.name)).toEqual([...LIMIT_NAMES]);
    for (const l of doc.limits) {
      expect(l.value).toBe(DEFAULT_LIMITS[l.name]);
      expect(l.applies.length).toBeGreaterThan(0);
    }
  });
});
