import { describe, expect, it } from "vitest";
import * as browser from "../src/browser.js";
import * as core from "../src/index.js";
import * as lang from "../src/lang.js";
import * as ops from "../src/ops.js";
import * as rejection from "../src/rejection.js";

// The public surface of @kumiki-graph/core's runtime exports, entry by entry. Adding or removing one
// is a deliberate act: update these lists, the API reports (api/*.api.txt) and CHANGELOG together.
// The main entry is the store and what works on it; the language front-end is ./lang and the op
// wire format ./ops (issue 39: the main entry at most 200 names, types included — the API report
// counts them).
const MAIN = [
  // The store, its logs and its idempotency ledgers.
  "Store",
  "openStore",
  "createStore",
  "DEFAULT_VALIDATORS",
  "MemoryOpLog",
  "SnapshotOpLog",
  "copyStoredOp",
  "DAMAGE_REMEDY",
  "FileIdempotencyLedger",
  "MemoryIdempotencyLedger",
  "Graph",
  "addsStandAlone",
  "remedyStepsOf",
  "parseSelector",
  "parseQualifiedName",
  // A table of every definition, and `view` and `list` from it (what a process answers without folding).
  "definitionTable",
  "viewFromTable",
  "listFromTable",
  "refsFromTable",
  "statusFromTable",
  "statusOfState",
  "definitionRows",
  "changedRows",
  "rowsOf",
  // Refusals as values, and how messages quote what they were given.
  "REJECTION_CODES",
  "withRemedy",
  "clip",
  "quoted",
  "opContentHash",
  // The checker, its diagnostics' table, the write gate, fixes.
  "checkStore",
  "keepCheck",
  "keepLiveCheck",
  "checkProgram",
  "createChecker",
  "resumeChecker",
  // The live view's model (kumiki ui).
  "graphOverview",
  "definitionPage",
  "hasErrors",
  "CODES",
  "BANDS",
  "codeInfo",
  "narrowingOf",
  "createCheckGate",
  "onMergeErrors",
  "applyFixes",
  "proposeFixes",
  "normalizePatch",
  "repairContext",
  // Programs and project folders.
  "importProgram",
  "exportProgram",
  "projectTree",
  "syncFiles",
  "definitionPath",
  "parseDefinitionPath",
  "DEFINITION_EXT",
  "LAYER_DIRS",
  // The workspace folder, its capability manifest and the one durable write.
  "WORKSPACE_DIR",
  "CAPS_FILE",
  "readCapabilityManifest",
  "manifestCapabilities",
  "STANDARD_CAPABILITIES",
  "makeDirs",
  "writeFileAtomic",
  "writeAll",
  "fsyncDir",
  // The language and op basics the store's API speaks in (also on ./lang and ./ops).
  "LAYERS",
  "isLayer",
  "qualifiedName",
  "MAX_IDENTIFIER_LENGTH",
  "isAuthorId",
  "isDefId",
  "isOpId",
  "isDefinitionName",
  "parseOp",
];

/** What needs Node's file system: the main entry has it, the browser entry not. */
const NODE_ONLY = [
  "FileIdempotencyLedger",
  "projectTree",
  "syncFiles",
  "WORKSPACE_DIR",
  "CAPS_FILE",
  "readCapabilityManifest",
  "makeDirs",
  "writeFileAtomic",
  "writeAll",
  "fsyncDir",
];

const LANG = [
  "tokenize",
  "KEYWORDS",
  "MAX_IDENTIFIER_LENGTH",
  "parseProgram",
  "parseDefinition",
  "splitProgram",
  "joinPieces",
  "canonicalForm",
  "computeHashes",
  "hashProgram",
  "ContentHashSchema",
  "referenceSites",
  "REFERENCE_ROLES",
  "resolveProgram",
  "resolveSite",
  "renderDefinition",
  "nearestName",
  "LAYERS",
  "isLayer",
  "qualifiedName",
  "STANDARD_CAPABILITIES",
  "manifestCapabilities",
];

const OPS = [
  "OpSchema",
  "parseOp",
  "isWireOp",
  "WIRE_SCHEMA_VERSION",
  "isDefinitionOp",
  "isControlOp",
  "OP_KINDS",
  "CONTROL_OP_KINDS",
  "OP_LIMITS",
  "RESERVED_WORDS",
  "CONFIG_DEFAULTS",
  "CONFLICT_POLICIES",
  "isConflictPolicy",
  "isDefinitionName",
  "isLockPattern",
  "matchesPattern",
  "matchesLockPattern",
  "refKey",
  "splitRefKey",
  "isRefKey",
  "AuthorIdSchema",
  "DefIdSchema",
  "OpIdSchema",
  "isAuthorId",
  "isDefId",
  "isOpId",
  "defIdOf",
  "createOpIdGenerator",
  "applyPatch",
  "describePatchFailure",
  "composeSource",
  "decomposeSource",
  "normalizeBody",
  "causalOrder",
];

describe("@kumiki-graph/core exports", () => {
  it("are exactly the pinned names, entry by entry (named exports only, no default)", () => {
    expect(Object.keys(core).sort()).toEqual([...MAIN].sort());
    expect(Object.keys(browser).sort()).toEqual(MAIN.filter((n) => !NODE_ONLY.includes(n)).sort());
    expect(Object.keys(lang).sort()).toEqual([...LANG].sort());
    expect(Object.keys(ops).sort()).toEqual([...OPS].sort());
    // The dependency-free entry an edge's error path loads (the CLI's every verb).
    expect(Object.keys(rejection).sort()).toEqual(
      ["REJECTION_CODES", "clip", "quoted", "remedyStepsOf", "withRemedy"].sort(),
    );
    for (const entry of [core, browser, lang, ops]) expect("default" in entry).toBe(false);
  });

  it("a name on two entries is one value (one module behind both)", () => {
    const main = core as Record<string, unknown>;
    for (const entry of [browser, lang, ops, rejection] as Record<string, unknown>[])
      for (const name of Object.keys(entry).filter((n) => n in main))
        expect(entry[name], name).toBe(main[name]);
  });
});
