/**
 * `@kumiki-graph/storage-automerge/read`: the one read fast path (a workspace's ops from its
 * verified op-log.jsonl) and the workspace's layout, without loading Automerge or core's checker —
 * what a read-only command (`kumiki view`, `list`, `status`…) starts with. When `ops` is undefined,
 * open the workspace through the main entry.
 */

export { CheckCacheFile } from "./check-cache-file.js";
export { chunkStampsIn } from "./chunk-files.js";
export { type DefinitionRowLookup, DefinitionTableFile, type TableRowHead } from "./definition-table-file.js";
export { KeptChecksFile } from "./kept-checks-file.js";
export {
  findWorkspace,
  readConfig,
  WORKSPACE_FORMAT,
  type WorkspaceConfig,
  type WorkspaceError,
  type WorkspaceErrorCode,
  type WorkspacePaths,
  type WorkspaceResult,
  workspacePaths,
} from "./workspace-layout.js";
export { opsState, readWorkspaceOps, type WorkspaceOps } from "./workspace-read.js";
