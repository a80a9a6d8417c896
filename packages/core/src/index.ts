/**
 * @kumiki-graph/core: the graph store of Kumiki programs — the store over an `OpLog` seam, the
 * checker, fixes, import and export, and the workspace folder's files. The language front-end is
 * `./lang`, the op wire format `./ops`. Named exports only; test/exports.test.ts pins the lists.
 */

// Everything that runs in a browser too (browser.ts), then what needs Node's file system.
export * from "./browser.js";
export { type ProjectReport, projectTree } from "./project/project-tree.js";
export {
  type FileConflict,
  type FileSyncError,
  type FileSyncItem,
  type FileSyncOptions,
  type FileSyncReport,
  syncFiles,
} from "./project/sync-files.js";
export { FileIdempotencyLedger } from "./store/file-idempotency-ledger.js";
export {
  type AtomicWriteOptions,
  fsyncDir,
  WORKSPACE_DIR,
  writeAll,
  writeFileAtomic,
} from "./store/files.js";
export { makeDirs } from "./store/make-dirs.js";
export { CAPS_FILE, type CapsError, readCapabilityManifest } from "./workspace/caps.js";
