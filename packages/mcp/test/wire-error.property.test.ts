import { REJECTION_CODES, type Rejection, type RejectionCode } from "@kumiki-graph/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromRejection, WIRE_ERROR_KINDS, type WireErrorKind, wireKindOf } from "../src/index.js";

/**
 * Every core code's wire kind, decided here one by one: typed by core's `RejectionCode`, so a code
 * core adds fails to compile until it is placed, and a code misspelt in the server's own sets
 * (which would silently fall to `rejected`) fails below.
 */
const KIND: Record<RejectionCode, WireErrorKind> = {
  "invalid-input": "invalid-request",
  "invalid-layer": "invalid-request",
  "invalid-name": "invalid-request",
  "invalid-selector": "invalid-request",
  "invalid-ref": "invalid-request",
  "invalid-author": "invalid-request",
  "bundle-empty": "invalid-request",
  "invalid-policy": "invalid-request",
  "invalid-op-id": "invalid-request",
  "not-found": "not-found",
  "unknown-op": "not-found",
  "parse-error": "rejected",
  "definition-mismatch": "rejected",
  "duplicate-name": "rejected",
  "undefined-reference": "rejected",
  "projection-mismatch": "rejected",
  "no-change": "rejected",
  "ref-not-in-text": "rejected",
  "anchor-not-found": "rejected",
  "anchor-ambiguous": "rejected",
  "anchors-overlap": "rejected",
  "anchor-empty": "rejected",
  referenced: "rejected",
  "would-conflict": "rejected",
  "validation-failed": "rejected",
  "not-revertable": "rejected",
  "revert-diverged": "rejected",
  locked: "rejected",
  "undo-diverged": "rejected",
  "fingerprint-mismatch": "rejected",
  "dependency-changed": "rejected",
  "unknown-op-kind": "rejected",
  "invalid-op": "rejected",
  "unknown-parent": "rejected",
  "unknown-definition": "rejected",
  "op-id-reused": "rejected",
  "store-not-empty": "rejected",
  "idempotency-key-reused": "rejected",
  cancelled: "rejected",
  "program-empty": "rejected",
  "tree-unreadable": "rejected",
  "storage-failed": "unavailable",
  "store-closed": "unavailable",
  "read-only": "rejected",
  "store-damaged": "unavailable",
  "workspace-replaced": "unavailable",
  "write-lost": "lost",
};

describe("wire errors from core rejections", () => {
  it("give every core code the wire kind its meaning calls for", () => {
    expect(Object.keys(KIND).sort()).toEqual([...REJECTION_CODES].sort());
    for (const code of REJECTION_CODES) expect(wireKindOf(code), code).toBe(KIND[code]);
    // The five kinds a core refusal can have are wire kinds clients are told of.
    for (const kind of new Set(Object.values(KIND))) expect(WIRE_ERROR_KINDS).toContain(kind);
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
