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
import {
  type CapabilityManifest,
  opContentHash,
  quoted,
  type Store,
  type WriteOptions,
} from "@kumiki-graph/core";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { argumentError, failure, isWireError, protocolError, result } from "./answers.js";
import { paramsError } from "./json-rpc-guard.js";
import type { Limits } from "./limits.js";
import { listing } from "./listing.js";
import { lossNotices } from "./loss-notices.js";
import { serveResources } from "./resources.js";
import type { Outcome, Tool, ToolContext } from "./tool.js";
import { TOOLS } from "./tools/index.js";
import { MCP_VERSION } from "./version.js";
import { fromRejection, limitExceeded } from "./wire-error.js";

/** A graph as its sessions share it: the store, its capabilities, the limits and the operator's log. */
export interface McpGraph {
  readonly store: Store;
  /** The workspace's kumiki.caps.json, for check and fix (the store's gate has it already). */
  readonly capabilities?: CapabilityManifest;
  readonly limits: Limits;
  /** The operator's log: details that do not belong in a message to the model. */
  readonly log: (line: string) => void;
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

/** The op-ids a write's answer holds (every `opIds` array in it, at any depth). */
function opIdsIn(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 4 || typeof v !== "object" || v === null) return;
    if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else
      for (const [k, x] of Object.entries(v))
        if (k === "opIds" && Array.isArray(x))
          out.push(...x.filter((s): s is string => typeof s === "string"));
        else walk(x, depth + 1);
  };
  walk(value, 0);
  return out;
}

/** Builds a session over `graph`. */
export function createMcpSession(graph: McpGraph, options: McpSessionOptions = {}): McpSession {
  const { store, capabilities, log } = graph;
  const ctx: Omit<ToolContext, "write"> = {
    store,
    limits: graph.limits,
    log,
    ...(capabilities === undefined ? {} : { capabilities }),
  };
  const readOnly = options.readOnly === true;
  const tools = readOnly ? TOOLS.filter((t) => t.annotations.readOnlyHint === true) : TOOLS;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map(listing);

  const server = new Server(
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
  // The op-ids this session's writes answered: the losses and merge errors told to it are of those.
  const wrote = new Set<string>();
  const losses = lossNotices(store, server, log, { capabilities, mine: (opId) => wrote.has(opId) });

  const call = async (
    name: string,
    raw: Record<string, unknown> | undefined,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const signal = extra.signal;
    const tool = byName.get(name);
    if (tool === undefined && readOnly && TOOLS.some((t) => t.name === name))
      return failure({
        kind: "forbidden",
        message: `${name} writes, and this session may only read (its token grants read access); nothing was done — use a token with write access`,
      });
    if (tool === undefined) {
      // The 2025-11-25 spec lists an unknown tool as a protocol error (-32602), not a tool result.
      throw protocolError(
        ErrorCode.InvalidParams,
        `no tool ${quoted(name)}; the tools are ${tools.map((t) => t.name).join(", ")}`,
        { kind: "unknown-tool", tools: tools.map((t) => t.name) },
      );
    }
    const args = raw ?? {};
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) return failure(argumentError(tool, args, parsed.error));
    let outcome: Awaited<ReturnType<Tool["run"]>>;
    const { idempotency_key: key, ...request } = parsed.data as { idempotency_key?: unknown };
    // A request the client cancels (notifications/cancelled) before its write is stored stores
    // nothing: core looks at the signal under the lock, just before the append. The SDK sends no
    // answer to a cancelled request, as the spec has it.
    const token = extra._meta?.progressToken;
    // A retry with the same key and arguments is answered with the first call's receipt (core
    // records the key with the op-ids, durably, before it appends them).
    const digest = typeof key === "string" ? opContentHash({ tool: name, arguments: request }) : "";
    const author = options.author;
    const write: WriteOptions = {
      signal,
      ...(author === undefined ? {} : { author }),
      ...(typeof key === "string" && tool.idempotency === "write"
        ? { idempotency: { key, request: digest } }
        : {}),
    };
    const callCtx: ToolContext = {
      ...ctx,
      signal,
      write,
      ...(token === undefined
        ? {}
        : {
            progress: (progress: number, total?: number, message?: string) =>
              void extra
                .sendNotification({
                  method: "notifications/progress",
                  params: {
                    progressToken: token,
                    progress,
                    ...(total === undefined ? {} : { total }),
                    ...(message === undefined ? {} : { message }),
                  },
                })
                .catch(() => undefined),
          }),
    };
    const run = () => tool.run(parsed.data, callCtx);
    // A client that cancels at once writes the cancellation right behind the request, but the
    // two can reach this process in separate reads, and a write can take its lock, draft and pass
    // its last look at the signal without awaiting anything in between: let the input under way
    // be read first. This runs in the poll phase that read the request; a 1 ms timer puts at least
    // one more poll phase (and a millisecond for the client's next write) before the write, at
    // about 1 ms a write (a stored write takes 10-40 ms).
    if (tool.annotations.readOnlyHint !== true) await new Promise<void>((resolve) => setTimeout(resolve, 1));
    // Every write acknowledged before this call began, by any server of a shared storage, is in
    // the graph it reads and judges against (a workspace's store looks at its folder anyway).
    try {
      await store.fence();
    } catch (e) {
      log(`${name}: the storage could not be read: ${e instanceof Error ? e.message : String(e)}`);
      return failure({
        kind: "unavailable",
        retryable: true,
        message: `${name}: the graph's storage could not be read just now; nothing was done — call it again`,
      });
    }
    try {
      if (typeof key !== "string" || tool.idempotency === "write") outcome = await run();
      else {
        // A tool of several writes: its whole answer is recorded under the key when it finishes
        // (a cancelled run included, with what it wrote), and a retry is answered with it.
        const once = await store.once(key, digest, run as () => Promise<Outcome<object>>);
        outcome = once.ok
          ? once
          : { ok: false, error: isWireError(once.error) ? once.error : fromRejection(once.error, log) };
      }
    } catch (e) {
      log(`${name}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      return failure({
        kind: "internal",
        message: `${name} failed inside the server (a bug); nothing is known to have changed`,
      });
    }
    if (!outcome.ok) return failure(outcome.error);
    const checked = tool.output.safeParse(outcome.value);
    if (!checked.success) {
      log(`${name}: result does not match its output schema: ${checked.error.message}`);
      return failure({
        kind: "internal",
        message: `${name} produced a result that does not match its schema (a bug)`,
      });
    }
    const value = outcome.value as object;
    const lead = outcome.text;
    const bytes = Buffer.byteLength(JSON.stringify(value), "utf8") + Buffer.byteLength(lead ?? "", "utf8");
    if (bytes > graph.limits.responseBytes) {
      const hint =
        tool.annotations.readOnlyHint === true
          ? "ask for less (one definition instead of a pattern, with_deps off, a check scope)"
          : "the write was done: read its effect back with kumiki_view or kumiki_history";
      return failure(
        limitExceeded(
          "responseBytes",
          graph.limits.responseBytes,
          bytes,
          `the size in bytes of the ${name} result`,
          hint,
        ),
      );
    }
    if (tool.annotations.readOnlyHint !== true) for (const id of opIdsIn(value)) wrote.add(id);
    return result(value, false, lead);
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
      return withLosses(await call(request.params.name, request.params.arguments, extra));
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
