/**
 * `@kumiki-graph/core/read`: what a read-only caller needs to fold a store from ops it already
 * holds, the syntax predicates, and the workspace folder's name (what a storage's own read path
 * builds on) — none of it loads the checker. Its modules are the main entry's: a class from here is
 * the main entry's class (`instanceof` holds across them), and a process that loads both (every
 * storage-automerge user) compiles them once. (It shipped as a bundle of its own until 0.x, for the
 * CLI's start-up, which now bundles itself: scripts/bundle-cli.mjs.)
 */

export type { FoldSnapshot, FoldSnapshotHead, PackedNumbers, SnapshotCausal } from "./graph/fold-snapshot.js";
export { isLayer, LAYERS, type Layer } from "./lang/layers.js";
export type { Result } from "./lang/result.js";
export { isAuthorId, isDefId, isOpId } from "./ops/ids.js";
export { isDefinitionName, isWireOp, WIRE_SCHEMA_VERSION } from "./ops/op.js";
// A table of every definition, and `view`, `list` and `refs` from it (store/definition-table.ts, table-reads.ts: all public).
export * from "./store/definition-table.js";
export {
  type AtomicWriteOptions,
  fsyncDir,
  WORKSPACE_DIR,
  writeAll,
  writeFileAtomic,
} from "./store/files.js";
export { MemoryOpLog } from "./store/memory-op-log.js";
export type { StoredOp } from "./store/op-log.js";
export { parseQualifiedName, parseSelector, type QualifiedName } from "./store/selector.js";
export { SnapshotOpLog, type SnapshotSeed } from "./store/snapshot-op-log.js";
// The store layer's factory: no checker in the write gate (this entry is for reading; write
// through the main entry, whose openStore has the checker), so the checker is not bundled here.
export { openStoreWith as openStore, type Store } from "./store/store.js";
export * from "./store/table-reads.js";
export { CAPS_FILE, readCapabilityManifest } from "./workspace/caps.js";
