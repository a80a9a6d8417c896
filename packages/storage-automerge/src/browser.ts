/**
 * @kumiki-graph/storage-automerge in a browser (its `browser` condition, and `./browser`): a graph's
 * store in a page over IndexedDB, synced live with `kumiki serve` ({@link openBrowserStore}), and the
 * op log of a Repo the page holds ({@link RepoOpLog.attach}) with the document layout it writes.
 * Nothing here imports a Node built-in; the workspace on disk (`.kumiki/`) is the main entry's.
 */
export {
  type BrowserServer,
  type BrowserStore,
  type BrowserStoreError,
  type BrowserStoreOptions,
  openBrowserStore,
} from "./browser-store.js";
export { graphSocketUrl } from "./graph-url.js";
export type { DamagedChunk, LogStorage } from "./log-storage.js";
export {
  CHUNK_SIZE,
  emptyOpLogDocument,
  forEachStoredOp,
  type InvalidEntry,
  OP_LOG_FORMAT,
  OP_LOG_KIND,
  type OpLogDocument,
  pushBundle,
} from "./op-log-document.js";
export {
  OpLogOpenError,
  RepoOpLog,
  type RepoOpLogParts,
  StoreDamagedError,
  WorkspaceReplacedError,
} from "./repo-op-log.js";
