import { describe, expect, it } from "vitest";
import * as mcp from "../src/index.js";

// The public surface of @kumiki-graph/mcp. Adding or removing a runtime export is a deliberate act:
// update this list, and docs/mcp.md, in the same change.
const EXPECTED = [
  "CHECK_SCOPES",
  "DEFAULT_AUTHOR",
  "DEFAULT_LIMITS",
  "EPISODE_NOTE",
  "ErrorEnvelopeSchema",
  "LIMITS_URI",
  "LIMIT_DESCRIPTIONS",
  "LIMIT_NAMES",
  "MCP_VERSION",
  "SPEC_VERSION",
  "TOOLS",
  "WIRE_ERROR_KINDS",
  "createMcpServer",
  // Sessions over a graph opened once (one per HTTP client).
  "createMcpSession",
  "openMcpGraph",
  // Streamable HTTP: the endpoint's handler, the local server, its resumable event store.
  "EVENTS_KEPT",
  "LOOPBACK_HOSTS",
  "SessionEventStore",
  "mcpHttpHandler",
  "serveHttp",
  // The MCP endpoints of a sync server's graphs (kumiki serve).
  "mcpGraphRoutes",
  "fromRejection",
  "limitsDocument",
  "parseLimitAssignments",
  "resolveLimits",
  "runDoctor",
  "serveStdio",
  "versions",
  "wireKindOf",
  // Result schemas published once (kumiki://schemas), and the text mirror's bound.
  "SCHEMAS_URI",
  "schemasDocument",
];

describe("@kumiki-graph/mcp exports", () => {
  it("are exactly the documented ones", () => {
    expect(Object.keys(mcp).sort()).toEqual([...EXPECTED].sort());
  });

  it("hold the twelve tools of ai-edit.md §9.7, in its order, then kumiki_fix_apply, kumiki_conflicts, kumiki_apply and kumiki_revert", () => {
    expect(mcp.TOOLS.map((t) => t.name)).toEqual([
      "kumiki_view",
      "kumiki_list",
      "kumiki_add",
      "kumiki_replace",
      "kumiki_edit",
      "kumiki_rename",
      "kumiki_remove",
      "kumiki_check",
      "kumiki_fix",
      "kumiki_refs",
      "kumiki_history",
      "kumiki_episode",
      "kumiki_fix_apply",
      "kumiki_conflicts",
      "kumiki_apply",
      "kumiki_revert",
    ]);
  });
});
