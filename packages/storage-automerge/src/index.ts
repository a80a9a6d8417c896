/**
 * @kumiki-graph/storage-automerge: the Kumiki graph's op log on Automerge. A workspace on disk
 * (`.kumiki/`: the graph document's URL, automerge-repo's storage with atomic fsynced writes, the
 * inter-process lock, the readable `op-log.jsonl`), the one way every edge opens one
 * (`openWorkspaceStore`), its repair from sound chunks, and the change validator a sync server runs
 * on every peer's changes. A graph's store in a page is the browser entry's (`./browser`, also the
 * `browser` condition of this one). `@kumiki-graph/core` holds everything else and loads no Automerge.
 */
export { AutomergeOpLog, type AutomergeOpLogOptions } from "./automerge-op-log.js";
export {
  type ChangeCheckOptions,
  checkBundle,
  checkChanges,
  type DocumentShape,
  decodeChanges,
  type OpClaim,
  type OpHashes,
  shapeOf,
  splitChunks,
} from "./change-check.js";
export { type ChunkKind, chunkDamage, walkChunks } from "./chunk-check.js";
export { FileLock, type FileLockOptions, LockTimeoutError } from "./file-lock.js";
export {
  DurableFSStorageAdapter,
  type DurableStorageOptions,
  isStorageFault,
  letStorageFaultsGo,
  type StorageFault,
} from "./fs-storage.js";
// The browser entry's names but its page opener (which would load IndexedDB and the WebSocket
// client into every CLI call): the log of a Repo, the document layout (log.ts).
export * from "./log.js";
export type { MirrorUpdate, OpLogFile } from "./op-log-file.js";
export { OpLogFileError } from "./op-log-file-error.js";
export {
  defaultAuthor,
  IDEMPOTENCY_FILE,
  openWorkspaceStore,
  type WorkspaceStore,
  type WorkspaceStoreError,
  type WorkspaceStoreOptions,
} from "./open-store.js";
export {
  PENDING_DIR,
  type PendingBundle,
  PendingBundles,
  type PendingSource,
} from "./pending-bundles.js";
export { openQuickWrite, PENDING_MOST, type QuickWorkspaceStore } from "./quick-write.js";
// The read entry's names (the workspace layout, the read fast path) are this entry's too: one list.
export * from "./read.js";
export {
  type RepairedChunk,
  type RepairOptions,
  type RepairReport,
  repairWorkspace,
} from "./repair.js";
export type { ContestedOp, ContestedReport } from "./repair-contested.js";
export type { StoreOverOptions } from "./store-over.js";
export {
  initWorkspace,
  openWorkspace,
  openWorkspaceReader,
  type Workspace,
  type WorkspaceInitOptions,
  type WorkspaceOpenOptions,
  type WorkspaceReader,
} from "./workspace.js";
