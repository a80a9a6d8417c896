/**
 * The MCP server over one workspace (`kumiki mcp serve`): opens the workspace's store and serves
 * sessions over it (session.ts), one on stdio (stdio.ts), or one per client over Streamable HTTP
 * (http.ts).
 */
import { keepLiveCheck, type Store } from "@kumiki-graph/core";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type Limits, resolveLimits } from "./limits.js";
import { createMcpSession, type McpGraph } from "./session.js";
import type { Tool } from "./tool.js";
import { versions } from "./version.js";

/** How {@link createMcpServer} is called. */
export interface McpServerOptions {
  /** The workspace: a folder holding `.kumiki/`, or one below it. */
  readonly storeDir: string;
  /** Who the ops are written as (default `agent:mcp`). */
  readonly author?: string;
  /** Limits other than the defaults (see kumiki://limits). */
  readonly limits?: Readonly<Record<string, number>>;
  /** The operator's log; default: standard error. Never standard output, which carries MCP. */
  readonly log?: (line: string) => void;
}

/** A running server: connect it to a transport, close it when done (closing flushes the store). */
export interface KumikiMcpServer {
  /** The SDK server. */
  readonly server: Server;
  readonly store: Store;
  readonly limits: Limits;
  readonly tools: readonly Tool[];
  /** Serves the session on `transport` (stdio, or an HTTP session's). */
  connect(transport: Transport): Promise<void>;
  /**
   * Stops taking tool calls (a call from now on is answered `unavailable`, retryable, nothing
   * done) and resolves once every call in flight has its answer: what a shutdown waits for, so
   * that no write is stored and left unanswered (a client that retried it would write it twice).
   */
  drain(): Promise<void>;
  /** Closes the connection, then the store (after the writes in flight). */
  close(): Promise<void>;
}

/** Why the server could not start: a core or workspace code and a message for the operator. */
export interface StartupError {
  readonly code: string;
  readonly message: string;
}

/** The default author of the ops the server writes. */
export const DEFAULT_AUTHOR = "agent:mcp";

/** A workspace opened for MCP sessions: the graph they share, and how to close its store. */
export interface OpenedGraph extends McpGraph {
  /** Closes the store (after the writes in flight); close the sessions first. */
  close(): Promise<void>;
}

/**
 * Opens the workspace at (or above) `storeDir` for MCP sessions. A store that cannot be opened
 * stops the server here, before any call, with the reason for the operator.
 */
export async function openMcpGraph(
  options: McpServerOptions,
): Promise<{ ok: true; value: OpenedGraph } | { ok: false; error: StartupError }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`kumiki mcp: ${line}\n`));
  const limits = resolveLimits(options.limits);
  if (!limits.ok) return { ok: false, error: { code: "invalid-limit", message: limits.message } };
  // Core's one way to open a workspace: its kumiki.caps.json reaches the gate, check and fix,
  // exactly as for the CLI.
  const opened = await openWorkspaceStore(options.storeDir, {
    author: options.author ?? DEFAULT_AUTHOR,
    // --store DIR names the workspace or a folder inside it, as the CLI takes it.
    walkUp: true,
    checkStamp: checkStamp(),
    checkFile: CHECK_FILE,
  });
  if (!opened.ok) return { ok: false, error: opened.error };
  const { store, capabilities, keptChecks } = opened.value;
  return {
    ok: true,
    value: {
      store,
      limits: limits.value,
      log,
      ...(capabilities === undefined ? {} : { capabilities }),
      ...(keptChecks === undefined ? {} : { keptChecks }),
      async close() {
        // The next server on this workspace (an agent's next session) goes on from this check.
        if (keptChecks !== undefined)
          try {
            keepLiveCheck(store, capabilities === undefined ? {} : { capabilities }, keptChecks);
          } catch (e) {
            log(`keeping the check for the next server: ${String(e)}`);
          }
        await store.close();
      },
    },
  };
}

/**
 * Where this server keeps its check across processes (`.kumiki/cache/`): a file of its own, since
 * a file holds one stamp's states and the CLI's `live-check.jsonl` is of the CLI's code.
 */
const CHECK_FILE = "live-check-mcp.jsonl";

/**
 * What checked, for the states kept: this server's version, the version of the core it loads (the
 * checker is core's) and this module's place (in the CLI's bundle a chunk whose name carries a hash
 * of its content and of what it imports), so an upgraded build never goes on from an older one's
 * state.
 */
function checkStamp(): string {
  const v = versions();
  return `mcp ${v.server} core ${v.core} ${import.meta.url}`;
}

/** Opens the workspace and builds one session over its store (what stdio serves). */
export async function createMcpServer(
  options: McpServerOptions,
): Promise<{ ok: true; value: KumikiMcpServer } | { ok: false; error: StartupError }> {
  const opened = await openMcpGraph(options);
  if (!opened.ok) return opened;
  const graph = opened.value;
  const session = createMcpSession(graph);
  let closing: Promise<void> | undefined;
  return {
    ok: true,
    value: {
      server: session.server,
      store: graph.store,
      limits: graph.limits,
      tools: session.tools,
      connect: (transport) => session.connect(transport),
      drain: () => session.drain(),
      close() {
        closing ??= (async () => {
          await session.close();
          await graph.close();
        })();
        return closing;
      },
    },
  };
}
