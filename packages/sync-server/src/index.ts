/**
 * @kumiki-graph/sync-server: peer sync of Kumiki graph workspaces (ai-edit.md §9.8) over
 * automerge-repo's WebSocket protocol, with token access control (docs/sync.md).
 */
export {
  type CloneOptions,
  type CloneReport,
  type ConnectOptions,
  cloneWorkspace,
  fetchGraphDocument,
  type RolledBack,
  type SyncOptions,
  type SyncReport,
  syncWorkspace,
} from "./client.js";
export { type ClientAdapterOptions, KumikiClientAdapter, type TrafficStats } from "./client-adapter.js";
export { GraphStores, SERVER_AUTHOR } from "./graph-stores.js";
export {
  type LiveView,
  type LiveViewOptions,
  type LiveViewWriter,
  LOOPBACK_NAMES,
  liveView,
} from "./live-view.js";
export { type LiveViewRoutes, liveViewRoutes } from "./live-view-routes.js";
export { jsonServerLogger, type LogFields, type LogLevel, type ServerLogger } from "./logger.js";
export {
  type PostgresFault,
  PostgresStorageAdapter,
  type PostgresStorageOptions,
  redactedUrl,
} from "./postgres-storage.js";
export { type PostgresTokenOptions, PostgresTokenTable } from "./postgres-tokens.js";
export {
  CLOSE_FORBIDDEN,
  CLOSE_REFUSED,
  type FlushReply,
  type FlushRequest,
} from "./protocol.js";
export {
  addRemote,
  checkServerUrl,
  graphSocketUrl,
  parseGraphAddress,
  pickRemote,
  REMOTES_FORMAT,
  type Remote,
  readRemotes,
  readTokenFile,
  remotesFile,
  removeRemote,
} from "./remotes.js";
export { fail, ok, type SyncError, type SyncErrorCode, type SyncResult } from "./result.js";
export {
  CLOSE_GOING_AWAY,
  DEFAULT_DRAIN_MS,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_CHANGE_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  HEALTH_DAMAGE_LIMIT,
  type RequestAccess,
  type ServerStorage,
  type SyncServer,
  type SyncServerHealth,
  type SyncServerOptions,
  startSyncServer,
} from "./server.js";
export {
  AccessControlledServerAdapter,
  type CheckVerdict,
  type RefusalCode,
  type RefusalEvent,
  type ServerChecks,
  type SlowPeerEvent,
} from "./server-adapter.js";
export { type SyncService, type SyncServiceOptions, startSyncService } from "./service.js";
export {
  type Access,
  ChangingTokenTable,
  type Grant,
  loadTokenFile,
  MIN_TOKEN_LENGTH,
  OPEN_GRANT,
  parseTokenEntries,
  parseTokenFile,
  TOKEN_FILE_FORMAT,
  type TokenEntry,
  TokenFileTable,
  type TokenTable,
  tokenDigest,
  tokenTableOf,
} from "./tokens.js";
