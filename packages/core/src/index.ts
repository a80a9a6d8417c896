/**
 * @kumiki-graph/core: the Kumiki definition language front-end, the op model and its deterministic
 * merge, and the graph store on Automerge. Named exports only; test/exports.test.ts pins the list.
 */

export {
  type Checker,
  type CheckOptions,
  type CheckSource,
  checkProgram,
  createChecker,
} from "./check/check.js";
export {
  BANDS,
  type Band,
  CODES,
  type CodeInfo,
  codeInfo,
  type Narrowing,
  narrowingOf,
  type OptIn,
  renderErrorsDoc,
  type Severity,
} from "./check/codes.js";
export {
  type AutoPatch,
  type AutoPatchOp,
  autoPatchFor,
  type Diagnostic,
  diagnosticKey,
  hasErrors,
  newDiagnostics,
  type Suggestion,
} from "./check/diagnostic.js";
export type { CheckInput } from "./check/graph.js";
export { type ApplyFixesOptions, applyFixes, type FixProgress, type FixReport } from "./fix/apply.js";
export { type RepairContext, repairContext } from "./fix/context.js";
export { normalizePatch } from "./fix/normalize.js";
export { type FixOptions, type FixProposal, proposeFixes } from "./fix/propose.js";
// Types the exported API mentions (a parameter, a return, a member), exported so a user can name
// them; test/api-report.test.ts holds every entry to it.
export type { Orphan } from "./graph/graph.js";
export {
  type Conflict,
  type ConflictKind,
  Graph,
  type GraphStatus,
  type LockEntry,
  type Quarantined,
} from "./graph/graph.js";
export type { Materializer, ShownSite } from "./graph/materialize.js";
// The reader `Store.read()` returns and the definitions it and `view` give (types only).
export type { BrokenSite, DefinitionView, GraphReader } from "./graph/reader.js";
export { type RemedyStep, remedyStepsOf } from "./graph/remedy.js";
export { addsStandAlone } from "./graph/stand-alone.js";
export type { CheckCache } from "./integrity/check-cache.js";
export { createStore, DEFAULT_VALIDATORS, openStore } from "./integrity/checked-store.js";
export { type CheckGateOptions, checkGate, createCheckGate } from "./integrity/gate.js";
export {
  MERGE_ERRORS_TOLD,
  type MergeErrorNotice,
  onMergeErrors,
} from "./integrity/merge-errors.js";
export { type CheckReport, checkStore, keepCheck } from "./integrity/store-check.js";
export type {
  AnyIdWildcard,
  AppDef,
  AppEvent,
  AppEventKind,
  AssignStmt,
  Binary,
  BinaryOp,
  Bind,
  BindPattern,
  BlockStmt,
  BoolLit,
  Call,
  Capability,
  Definition,
  DefinitionBase,
  DollarRef,
  DurationLit,
  EffectDef,
  EffectEvent,
  Emit,
  EmitStmt,
  EpisodeTest,
  EventPattern,
  Expr,
  Field,
  FnDef,
  For,
  ForStmt,
  Ident,
  If,
  IfStmt,
  Index,
  Let,
  LetStmt,
  ListLit,
  MapEntry,
  MapLit,
  Match,
  MatchArm,
  MatchStmt,
  MatchStmtArm,
  Member,
  MotionDef,
  Node,
  NominalType,
  NoopStmt,
  NowExpr,
  NullLit,
  NumberLit,
  PanicStmt,
  Param,
  Pattern,
  Policy,
  PolicyName,
  Program,
  PropertyTest,
  Props,
  RecordLit,
  RecordType,
  Redirect,
  ReducerDef,
  ReducerTest,
  RefinedType,
  Refinement,
  Retry,
  Route,
  RouteEntry,
  RouteEvent,
  Selector,
  SelfExpr,
  SelfSelector,
  SlotDef,
  SlotModifier,
  SlotWildcard,
  Statement,
  StopTimerStmt,
  StringLit,
  TestBody,
  TestDef,
  ThemeDef,
  TileCall,
  TileDef,
  TileEvent,
  TileTest,
  TimerEvent,
  TokenRef,
  TupleLit,
  TuplePattern,
  TypeDef,
  TypeExpr,
  TypeRef,
  UiEvent,
  UiEventKind,
  Unary,
  UnaryOp,
  UnionType,
  UnitLit,
  VariantDecl,
  VariantPattern,
  When,
  WildcardPattern,
} from "./lang/ast.js";
export { canonicalForm } from "./lang/canonical.js";
export { type ContentHash, ContentHashSchema, computeHashes, type HashNode } from "./lang/hash.js";
export { isLayer, LAYERS, type Layer, qualifiedName } from "./lang/layers.js";
export {
  KEYWORDS,
  type LexResult,
  MAX_IDENTIFIER_LENGTH,
  type Token,
  type TokenKind,
  tokenize,
} from "./lang/lexer.js";
export type { ParseError, ParseResult } from "./lang/parse-error.js";
export { parseDefinition, parseProgram } from "./lang/parser.js";
export {
  REFERENCE_ROLES,
  type ReferenceRole,
  type ReferenceSite,
  referenceSites,
} from "./lang/references.js";
export { type RenderNames, renderDefinition } from "./lang/render.js";
export { hashProgram, type ResolvedDefinition, resolveProgram, resolveSite } from "./lang/resolve.js";
export type { Result } from "./lang/result.js";
export type { NameSuggestion } from "./lang/similarity.js";
export { nearestName } from "./lang/similarity.js";
export type { Span } from "./lang/span.js";
export { joinPieces, type Piece, splitProgram } from "./lang/split.js";
export { type CapabilityManifest, manifestCapabilities, STANDARD_CAPABILITIES } from "./lang/stdlib.js";
export { type CausalOp, causalOrder } from "./ops/causality.js";
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
} from "./ops/op.js";
export { applyPatch, describePatchFailure, type PatchFailure, type PatchResult } from "./ops/patch.js";
export { composeSource, decomposeSource, normalizeBody, type SourceParts } from "./ops/source.js";
export { DEFINITION_EXT, definitionPath, LAYER_DIRS, parseDefinitionPath } from "./project/layout.js";
export { exportProgram, type ImportOptions, importProgram, programOrder } from "./project/program.js";
export { type ProjectReport, projectTree } from "./project/project-tree.js";
export {
  type FileConflict,
  type FileSyncError,
  type FileSyncItem,
  type FileSyncOptions,
  type FileSyncReport,
  syncFiles,
} from "./project/sync-files.js";
export { SYNC_STATE_FILE } from "./project/sync-state.js";
export { type DiffSide, definitionDiff } from "./store/diff.js";
export {
  type AtomicWriteOptions,
  fsyncDir,
  WORKSPACE_DIR,
  writeAll,
  writeFileAtomic,
} from "./store/files.js";
export { fingerprintOps, opContentHash } from "./store/fingerprint.js";
export {
  FileIdempotencyLedger,
  type IdempotencyLedger,
  type IdempotencyRecord,
  MemoryIdempotencyLedger,
} from "./store/idempotency.js";
export {
  type AddInput,
  AddInputSchema,
  type BundleInput,
  type BundleItem,
  BundleItemSchema,
  BundleSchema,
  type EditInput,
  EditInputSchema,
  type IngestInput,
  type LinkInput,
  LinkInputSchema,
  type RemoveInput,
  RemoveInputSchema,
  type RenameInput,
  RenameInputSchema,
  type ReplaceInput,
  ReplaceInputSchema,
  type SpecBundleItem,
  type SpecForm,
  type UnlinkInput,
  UnlinkInputSchema,
} from "./store/inputs.js";
export type { LossNotice } from "./store/loss-watch.js";
export { makeDirs } from "./store/make-dirs.js";
export { copyStoredOp, MemoryOpLog } from "./store/memory-op-log.js";
export { DAMAGE_REMEDY, type OpLog, type StoreDamage, type StoredOp } from "./store/op-log.js";
export {
  clip,
  quoted,
  REJECTION_CODES,
  type Rejection,
  type RejectionCode,
  type StoreResult,
  withRemedy,
} from "./store/result.js";
export {
  parseQualifiedName,
  parseSelector,
  type QualifiedName,
  type Selector as DefinitionSelector,
} from "./store/selector.js";
export { SnapshotOpLog } from "./store/snapshot-op-log.js";
export { Store } from "./store/store.js";
export type {
  ApplyOptions,
  ChangeEvent,
  DefinitionHistory,
  HistoryEntry,
  ListEntry,
  OpFate,
  OpStatus,
  Preview,
  Referrer,
  RefsResult,
  StoreOptions,
  StoreStatus,
  ViewResult,
  WriteReceipt,
} from "./store/store-types.js";
export {
  builtinGate,
  type ProposedWrite,
  type ValidationProblem,
  type WriteValidator,
} from "./store/validate.js";
export type { IdempotencyKey, WriteOptions } from "./store/write-options.js";
export { CAPS_FILE, type CapsError, readCapabilityManifest } from "./workspace/caps.js";
