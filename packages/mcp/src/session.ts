/**
 * One MCP session over a graph (ai-edit.md §9.7): the SDK's low-level `Server` with the tools, the
 * resources and the loss notices, over a store several sessions may share (stdio serves one
 * session; HTTP one per `Mcp-Session-Id`). It is a thin adapter: each tool is one core call; this
 * file owns what is the same for every tool — strict argument validation, the error envelope, the
 * text mirror of every structured result, the declared limits.
 *
 * It is built on the SDK's low-level `Server` rather than `McpServer`, because `McpServer` answers
 * an argument that fails the schema with plain text and no structured content; here every failure
 * of a tool is the `{"error": {...}}` envelope with a stable kind, and names the argument. An
 * unknown tool is a JSON-RPC error (-32602), as the 2025-11-25 spec lists it.
 */
import type { CapabilityManifest, KeptChecks, Store } from "@kumiki-graph/core";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { failure } from "./answers.js";
import { paramsError } from "./json-rpc-guard.js";
import type { Limits } from "./limits.js";
import { listing } from "./listing.js";
import { lossNotices } from "./loss-notices.js";
import { serveResources } from "./resources.js";
import type { Tool, ToolContext } from "./tool.js";
import { type CallSession, callTool } from "./tool-call.js";
import { TOOLS } from "./tools/index.js";
import { MCP_VERSION } from "./version.js";

/** A graph as its sessions share it: the store, its capabilities, the limits and the operator's log. */
export interface McpGraph {
  readonly store: Store;
  /** The workspace's kumiki.caps.json, for check and fix (the store's gate has it already). */
  readonly capabilities?: CapabilityManifest;
  readonly limits: Limits;
  /** The operator's log: details that do not belong in a message to the model. */
  readonly log: (line: string) => void;
  /**
   * Checks kept by earlier processes on the store's workspace: a session's first check (the watch
   * for merge errors, at connect) goes on from one instead of checking every definition.
   */
  readonly keptChecks?: KeptChecks;
}

/** How one session is served. */
export interface McpSessionOptions {
  /**
   * Only the read-only tools are listed, and a write tool is answered `forbidden` (a session of a
   * token that grants read access only).
   */
  readonly readOnly?: boolean;
  /** The author of this session's writes (a token's name), when not the store's own. */
  readonly author?: string;
}

/** One session: connect it to a transport; close it when done (the store stays open). */
export interface McpSession {
  /** The SDK server. */
  readonly server: Server;
  /** The tools this session lists and serves. */
  readonly tools: readonly Tool[];
  /** Serves the session on `transport`. */
  connect(transport: Transport): Promise<void>;
  /**
   * Stops taking tool calls (a call from now on is answered `unavailable`, retryable, nothing
   * done) and resolves once every call in flight has its answer: what a shutdown waits for, so
   * that no write is stored and left unanswered (a client that retried it would write it twice).
   */
  drain(): Promise<void>;
  /** Closes the connection (the graph's store is its owner's to close). */
  close(): Promise<void>;
}

const INSTRUCTIONS = [
  "Kumiki graph store: programs are definitions (layer.name) edited by ops, not files.",
  "Read with kumiki_list and kumiki_view (edit anchors match kumiki_view's text); write with kumiki_add, kumiki_replace, kumiki_edit, kumiki_rename, kumiki_remove: each answers the op-ids it wrote.",
  "A refused write changes nothing. kumiki_check lists diagnostics; kumiki_fix proposes their patches, kumiki_fix_apply applies them.",
  "Writes take an optional idempotency_key: retried with the same key and arguments, a write is answered with its first receipt, not made twice.",
  'Every result is JSON in structuredContent, and the same JSON, whole, in the text item (kumiki_view leads with the Kumiki text, then that JSON). A failed call has isError true and {"error": {"kind", "message", "code"?, "argument"?, "limit"?, "retryable"?, "details"?}}; branch on kind.',
  `Result and error schemas: ${"kumiki://schemas"}. Limits: kumiki://limits.`,
].join("\n");

/** The SDK's server as every session is: its name, version, capabilities and instructions. */
function sdkServer(): Server {
  return new Server(
    { name: "kumiki-graph", title: "Kumiki graph store", version: MCP_VERSION },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true },
        logging: {},
        completions: {},
      },
      instructions: INSTRUCTIONS,
    },
  );
}

/** Builds a session over `graph`. */
export function createMcpSession(graph: McpGraph, options: McpSessionOptions = {}): McpSession {
  const { store, capabilities, log } = graph;
  const ctx: Omit<ToolContext, "write" | "signal" | "progress"> = {
    store,
    limits: graph.limits,
    log,
    ...(capabilities === undefined ? {} : { capabilities }),
  };
  const readOnly = options.readOnly === true;
  const tools = readOnly ? TOOLS.filter((t) => t.annotations.readOnlyHint === true) : TOOLS;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map(listing);

  const server = sdkServer();
  // The op-ids this session's writes answered: the losses and merge errors told to it are of those.
  const wrote = new Set<string>();
  const losses = lossNotices(store, server, log, {
    capabilities,
    mine: (opId) => wrote.has(opId),
    ...(graph.keptChecks === undefined ? {} : { kept: graph.keptChecks }),
  });

  const calls: CallSession = {
    ctx,
    tools: byName,
    readOnly,
    ...(options.author === undefined ? {} : { author: options.author }),
    wrote: (id) => wrote.add(id),
  };

  /** An answer with the losses told since the previous one (loss-notices.ts). */
  const withLosses = (r: CallToolResult): CallToolResult => {
    const told = losses.take();
    if (told.length === 0) return r;
    return {
      ...r,
      content: [...r.content, { type: "text", text: told.map((m) => `NOTICE: ${m.message}`).join("\n") }],
      _meta: { ...r._meta, "kumiki-graph/losses": told },
    };
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  let draining = false;
  let inflight = 0;
  let idle: (() => void) | undefined;
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (draining)
      return failure({
        kind: "unavailable",
        retryable: true,
        message: `${request.params.name}: the server is shutting down; nothing was done — call it again on a new session`,
      });
    inflight++;
    try {
      return withLosses(await callTool(calls, request.params.name, request.params.arguments, extra));
    } finally {
      inflight--;
      if (inflight === 0) idle?.();
    }
  });
  serveResources(server, { store, limits: graph.limits, tools, subscribed: losses.subscribed });

  let closing: Promise<void> | undefined;
  return {
    server,
    tools,
    connect: async (transport) => {
      await server.connect(transport);
      // Params a method does not take are answered here, -32602 in one sentence (the SDK would
      // answer -32603 with its schema library's dump); whatever the transport.
      const inner = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const bad = paramsError(message);
        if (bad === undefined) inner?.(message, extra);
        else void transport.send(bad as JSONRPCMessage).catch(() => undefined);
      };
      losses.start();
    },
    drain() {
      draining = true;
      if (inflight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
    close() {
      closing ??= (async () => {
        losses.stop();
        await server.close().catch((e: unknown) => log(`closing the connection: ${String(e)}`));
      })();
      return closing;
    },
  };
}
