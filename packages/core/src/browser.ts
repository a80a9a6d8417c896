/**
 * `@kumiki-graph/core` as a browser has it (the package's `browser` condition, and `./browser`):
 * the store, its logs and ledgers in memory, the checker, fixes, import and export — everything of
 * the main entry that needs no Node built-in. The main entry (index.ts) is these names and the
 * Node-only ones: the workspace folder's files (durable writes, the capability manifest's reader,
 * the file idempotency ledger) and the project tree on disk. A page stores through a log of its
 * own (an `OpLog` over IndexedDB, say).
 */
export {
  type CheckedDefinition,
  type Checker,
  type CheckerState,
  type CheckOptions,
  type CheckSource,
  checkProgram,
  createChecker,
  resumeChecker,
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
  type Severity,
} from "./check/codes.js";
export {
  type AutoPatch,
  type AutoPatchOp,
  type Diagnostic,
  hasErrors,
  type Suggestion,
} from "./check/diagnostic.js";
export type { CheckInput } from "./check/graph.js";
export { type ApplyFixesOptions, applyFixes, type FixProgress, type FixReport } from "./fix/apply.js";
export { type RepairContext, repairContext } from "./fix/context.js";
export { normalizePatch } from "./fix/normalize.js";
export { type FixOptions, type FixProposal, proposeFixes } from "./fix/propose.js";
export type { FoldSnapshot, FoldSnapshotHead, PackedNumbers, SnapshotCausal } from "./graph/fold-snapshot.js";
// Types the exported API mentions (a parameter, a return, a member), exported so a user can name
// them; test/api-report.test.ts holds every entry to it.
export {
  type Conflict,
  type ConflictKind,
  type DefinitionSummary,
  Graph,
  type GraphStatus,
  type LockEntry,
  type Orphan,
  type Quarantined,
} from "./graph/graph.js";
export type { Materializer, ShownSite } from "./graph/materialize.js";
// The reader `Store.read()` returns and the definitions it and `view` give (types only).
export type { BrokenSite, DefinitionView, GraphReader } from "./graph/reader.js";
export { addsStandAlone } from "./graph/stand-alone.js";
export type { CheckCache, KeptChecks } from "./integrity/check-cache.js";
export { createStore, DEFAULT_VALIDATORS, openStore } from "./integrity/checked-store.js";
export { type CheckGateOptions, createCheckGate } from "./integrity/gate.js";
export type { LiveCheckState } from "./integrity/live.js";
export { type MergeErrorNotice, onMergeErrors } from "./integrity/merge-errors.js";
export { type CheckReport, checkStore, keepCheck, keepLiveCheck } from "./integrity/store-check.js";
// The language and op basics the store's API speaks in; the rest is on ./lang and ./ops.
export type { Definition, Program } from "./lang/ast.js";
export type { ContentHash } from "./lang/hash.js";
export { isLayer, LAYERS, type Layer, qualifiedName } from "./lang/layers.js";
export { MAX_IDENTIFIER_LENGTH } from "./lang/lexer.js";
export type { Result } from "./lang/result.js";
export { type CapabilityManifest, manifestCapabilities, STANDARD_CAPABILITIES } from "./lang/stdlib.js";
export { type AuthorId, type DefId, isAuthorId, isDefId, isOpId, type OpId } from "./ops/ids.js";
export type { ConflictPolicy, DefinitionState } from "./ops/merge.js";
export { isDefinitionName, type LogOp, parseOp } from "./ops/op.js";
export {
  type DefinitionLink,
  type DefinitionPage,
  definitionPage,
  type PageHistoryEntry,
} from "./project/definition-page.js";
export { DEFINITION_EXT, definitionPath, LAYER_DIRS, parseDefinitionPath } from "./project/layout.js";
export {
  type GraphOverview,
  graphOverview,
  type OverviewAuthor,
  type OverviewDefinition,
  type OverviewOp,
  type OverviewOptions,
} from "./project/overview.js";
export { exportProgram, type ImportOptions, importProgram } from "./project/program.js";
// Refusals as values: the dependency-free entry's names, all of them.
export * from "./rejection.js";
// A table of every definition, and `view`, `list` and `refs` from it (store/definition-table.ts, table-reads.ts: all public).
export * from "./store/definition-table.js";
export { opContentHash } from "./store/fingerprint.js";
export {
  type IdempotencyLedger,
  type IdempotencyRecord,
  MemoryIdempotencyLedger,
} from "./store/idempotency.js";
export type {
  AddInput,
  BundleInput,
  BundleItem,
  EditInput,
  IngestInput,
  LinkInput,
  RemoveInput,
  RenameInput,
  ReplaceInput,
  SpecBundleItem,
  SpecForm,
  UnlinkInput,
} from "./store/inputs.js";
export type { LossNotice } from "./store/loss-watch.js";
export { copyStoredOp, MemoryOpLog } from "./store/memory-op-log.js";
export {
  DAMAGE_REMEDY,
  type OpLog,
  type ReadableOpLog,
  type SharedLogExtras,
  type StoreDamage,
  type StoredOp,
} from "./store/op-log.js";
export type { StoreResult } from "./store/result.js";
export {
  parseQualifiedName,
  parseSelector,
  type QualifiedName,
  type Selector as DefinitionSelector,
} from "./store/selector.js";
export { SnapshotOpLog, type SnapshotSeed } from "./store/snapshot-op-log.js";
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
export * from "./store/table-reads.js";
export type { ProposedWrite, ValidationProblem, WriteValidator } from "./store/validate.js";
export type { IdempotencyKey, WriteOptions } from "./store/write-options.js";
