import { REJECTION_CODES, type Rejection } from "@kumiki-graph/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromRejection, WIRE_ERROR_KINDS, wireKindOf } from "../src/index.js";

describe("wire errors from core rejections", () => {
  it("give every core code a wire kind, by its meaning", () => {
    for (const code of REJECTION_CODES) expect(WIRE_ERROR_KINDS).toContain(wireKindOf(code));
    expect(wireKindOf("not-found")).toBe("not-found");
    expect(wireKindOf("unknown-op")).toBe("not-found");
    expect(wireKindOf("invalid-selector")).toBe("invalid-request");
    expect(wireKindOf("invalid-input")).toBe("invalid-request");
    expect(wireKindOf("duplicate-name")).toBe("rejected");
    expect(wireKindOf("referenced")).toBe("rejected");
    expect(wireKindOf("storage-failed")).toBe("unavailable");
  });

  it("keep code, message and details, except storage failures, whose message goes to the log", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...REJECTION_CODES),
        fc.string(),
        fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined }),
        (code, text, details) => {
          // A marker no fixed message holds, so "not leaked" cannot pass by accident or fail on " ".
          const message = `\u0001${text}`;
          const logged: string[] = [];
          const r: Rejection = details === undefined ? { code, message } : { code, message, details };
          const w = fromRejection(r, (l) => logged.push(l));
          expect(w.code).toBe(code);
          expect(w.kind).toBe(wireKindOf(code));
          if (w.kind === "unavailable") {
            expect(w.message).not.toContain(message);
            expect(logged).toEqual([`store ${code}: ${message}`]);
          } else {
            expect(w.message).toBe(message);
            expect(w.details).toEqual(details);
            expect(logged).toEqual([]);
          }
        },
      ),
    );
  });

  it("say a storage failure may be retried", () => {
    const w = fromRejection(
      { code: "storage-failed", message: "EIO /home/alice/app/.kumiki" },
      () => undefined,
    );
    expect(w).toMatchObject({ kind: "unavailable", retryable: true });
    expect(w.message).not.toContain("/home/alice");
  });
});
