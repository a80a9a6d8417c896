/**
 * `@kumiki-graph/core/ops`: the op wire format (ai-edit.md §9.3.2) — op kinds and their schema,
 * ids, the text patch an edit op carries, the causal order and the merge's decisions. What a tool
 * that reads, writes or relays ops without a store needs (an exporter, a sync relay, a log
 * inspector); writing ops through a store is the main entry's.
 */
export { type CausalOp, type CausalParts, causalOrder } from "./ops/causality.js";
export { matchesLockPattern, matchesPattern } from "./ops/glob.js";
export {
  type AuthorId,
  AuthorIdSchema,
  createOpIdGenerator,
  type DefId,
  DefIdSchema,
  defIdOf,
  isAuthorId,
  isDefId,
  isOpId,
  type OpId,
  type OpIdGenerator,
  type OpIdGeneratorOptions,
  OpIdSchema,
} from "./ops/ids.js";
export type {
  ApplyFailure,
  Body,
  ConflictPolicy,
  DanglingDecision,
  DanglingEdge,
  DefinitionState,
  NameWrite,
  TextWrite,
} from "./ops/merge.js";
export type { BodyFields, ControlBase, OpBase } from "./ops/op.js";
export {
  type AddOp,
  type Anchor,
  type BodyOp,
  CONFIG_DEFAULTS,
  CONFLICT_POLICIES,
  CONTROL_OP_KINDS,
  type ConfigKey,
  type ConfigOp,
  type ControlOp,
  type ControlOpKind,
  type EditOp,
  isConflictPolicy,
  isControlOp,
  isDefinitionName,
  isDefinitionOp,
  isLockPattern,
  isRefKey,
  isWireOp,
  type LinkOp,
  type LockOp,
  type LogOp,
  type LogOpKind,
  OP_KINDS,
  OP_LIMITS,
  type Op,
  type OpIssue,
  type OpKind,
  OpSchema,
  parseOp,
  RESERVED_WORDS,
  type RefBindings,
  type RefKey,
  type RemoveOp,
  type RenameOp,
  type ReplaceOp,
  refKey,
  splitRefKey,
  type UnlinkOp,
  type UnlockOp,
  WIRE_SCHEMA_VERSION,
} from "./ops/op.js";
export { applyPatch, describePatchFailure, type PatchFailure, type PatchResult } from "./ops/patch.js";
export { composeSource, decomposeSource, normalizeBody, type SourceParts } from "./ops/source.js";
