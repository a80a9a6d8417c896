import { describe, expect, it } from "vitest";
import * as core from "../src/index.js";

// The public surface of @kumiki-graph/core. Adding or removing a runtime export is a deliberate act:
// update this list, and the docs, in the same change.
const EXPECTED = [
  "BANDS",
  "CODES",
  "STANDARD_CAPABILITIES",
  "autoPatchFor",
  "checkProgram",
  "codeInfo",
  "createChecker",
  "diagnosticKey",
  "hasErrors",
  "manifestCapabilities",
  "narrowingOf",
  "nearestName",
  "newDiagnostics",
  "renderErrorsDoc",
  "ContentHashSchema",
  "KEYWORDS",
  "LAYERS",
  "MAX_IDENTIFIER_LENGTH",
  "REFERENCE_ROLES",
  "canonicalForm",
  "computeHashes",
  "hashProgram",
  "isLayer",
  "joinPieces",
  "parseDefinition",
  "parseProgram",
  "qualifiedName",
  "referenceSites",
  "renderDefinition",
  "resolveProgram",
  "resolveSite",
  "splitProgram",
  "tokenize",
];

describe("@kumiki-graph/core exports", () => {
  it("are exactly the pinned names (named exports only, no default)", () => {
    expect(Object.keys(core).sort()).toEqual([...EXPECTED].sort());
    expect("default" in core).toBe(false);
  });
});
