/**
 * @kumiki-graph/mcp: the Model Context Protocol server over the Kumiki graph store (ai-edit.md
 * §9.7), `kumiki mcp serve --store DIR`. Named exports only; test/exports.test.ts pins the list.
 */
export { type DoctorCheck, type DoctorReport, runDoctor } from "./doctor.js";
export { EVENTS_KEPT, SessionEventStore } from "./event-store.js";
export {
  type GraphHost,
  type McpGraphRoutes,
  type McpGraphRoutesOptions,
  mcpGraphRoutes,
} from "./graph-routes.js";
export {
  type HttpAccess,
  type HttpMcpServer,
  type HttpServeOptions,
  LOOPBACK_HOSTS,
  type McpHttpHandler,
  type McpHttpOptions,
  mcpHttpHandler,
  serveHttp,
} from "./http.js";
export {
  DEFAULT_LIMITS,
  LIMIT_DESCRIPTIONS,
  LIMIT_NAMES,
  LIMITS_URI,
  type LimitName,
  type Limits,
  limitsDocument,
  parseLimitAssignments,
  resolveLimits,
} from "./limits.js";
export { ErrorEnvelopeSchema, SCHEMAS_URI, schemasDocument } from "./listing.js";
export {
  createMcpServer,
  DEFAULT_AUTHOR,
  type KumikiMcpServer,
  type McpServerOptions,
  type OpenedGraph,
  openMcpGraph,
  type StartupError,
} from "./server.js";
export { createMcpSession, type McpGraph, type McpSession, type McpSessionOptions } from "./session.js";
export { type StdioOptions, serveStdio } from "./stdio.js";
export type { Outcome, Tool, ToolAnnotations, ToolContext } from "./tool.js";
export { CHECK_SCOPES } from "./tools/check.js";
export { EPISODE_NOTE } from "./tools/episode.js";
export { TOOLS } from "./tools/index.js";
export { MCP_VERSION, SPEC_VERSION, type Versions, versions } from "./version.js";
export {
  fromRejection,
  WIRE_ERROR_KINDS,
  type WireError,
  type WireErrorKind,
  wireKindOf,
} from "./wire-error.js";
