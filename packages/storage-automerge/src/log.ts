/**
 * What both entries export of the graph's op log (the main entry, and the browser entry beside its
 * page opener): the log of a Repo, its storage's shape, the document layout, a graph's place on a
 * sync server. One list, so the two cannot drift.
 */
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
