/**
 * The MCP server over one workspace's graph store (ai-edit.md §9.7). It is a thin adapter: each
 * tool is one core call; this file owns what is the same for every tool — strict argument
 * validation, the error envelope, the text mirror of every structured result, the declared limits.
 *
 * It is built on the SDK's low-level `Server` rather than `McpServer`, because `McpServer` answers
 * an argument that fails the schema with plain text and no structured content; here every failure
 * of a tool is the `{"error": {...}}` envelope with a stable kind, and names the argument. An
 * unknown tool is a JSON-RPC error (-32602), as the 2025-11-25 spec lists it.
 */
import {
  clip,
  opContentHash,
  quoted,
  type Rejection,
  type Store,
  withCancellation,
  withIdempotency,
} from "@kumiki-graph/core";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type JSONRPCMessage,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
  SubscribeRequestSchema,
  type Tool as ToolListing,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { paramsError } from "./json-rpc-guard.js";
import { LIMITS_URI, type Limits, limitsDocument, resolveLimits } from "./limits.js";
import { CONFLICTS_URI, lossNotices } from "./loss-notices.js";
import type { Outcome, Tool, ToolContext } from "./tool.js";
import { TOOLS } from "./tools/index.js";
import { MCP_VERSION } from "./version.js";
import { fromRejection, limitExceeded, WIRE_ERROR_KINDS, type WireError } from "./wire-error.js";

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

/** The JSON of a failure that produced no answer. */
export const ErrorEnvelopeSchema = z.object({
  error: z.object({
    kind: z.enum(WIRE_ERROR_KINDS),
    message: z.string(),
    code: z.string().optional(),
    argument: z.string().optional(),
    limit: z.string().optional(),
    retryable: z.boolean().optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** The default author of the ops the server writes. */
export const DEFAULT_AUTHOR = "agent:mcp";

const INSTRUCTIONS = [
  "Kumiki graph store: programs are definitions (layer.name) edited by ops, not files.",
  "Read with kumiki_list and kumiki_view (edit anchors match kumiki_view's text); write with kumiki_add, kumiki_replace, kumiki_edit, kumiki_rename, kumiki_remove: each answers the op-ids it wrote.",
  "A refused write changes nothing. kumiki_check lists diagnostics; kumiki_fix proposes their patches, kumiki_fix_apply applies them.",
  "Writes take an optional idempotency_key: retried with the same key and arguments, a write is answered with its first receipt, not made twice.",
  'Every result is JSON in structuredContent, and the same JSON, whole, in the text item (kumiki_view leads with the Kumiki text, then that JSON). A failed call has isError true and {"error": {"kind", "message", "code"?, "argument"?, "limit"?, "retryable"?, "details"?}}; branch on kind.',
  `Result and error schemas: ${"kumiki://schemas"}. Limits: kumiki://limits.`,
].join("\n");

/** The URI of the result schemas: each tool's result and the error envelope, published once. */
export const SCHEMAS_URI = "kumiki://schemas";

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-7", io }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * A tool's `outputSchema` as tools/list declares it: the result's top level — each field with its
 * JSON type, the fields a success always has — or the error envelope (`{error: {…}}`), which a
 * failed call returns as its structured content too. The whole result schemas, every level with
 * its descriptions, are published once at {@link SCHEMAS_URI}: inline they made a 33 KB listing
 * (18.8 KB with the descriptions left out); this keeps tools/list under 15 KB while every client
 * can rely on, and the SDK's client checks, the structured content of every answer.
 */
function outputSchemaOf(tool: Tool): NonNullable<ToolListing["outputSchema"]> {
  const full = jsonSchemaOf(tool.output, "output") as {
    properties?: Record<string, { type?: unknown }>;
    required?: string[];
  };
  const properties: Record<string, object> = { error: { type: "object" } };
  for (const [name, p] of Object.entries(full.properties ?? {}))
    properties[name] = p.type === undefined ? {} : { type: p.type };
  const required = full.required ?? [];
  return {
    type: "object",
    properties,
    ...(required.length === 0 ? {} : { anyOf: [{ required }, { required: ["error"] }] }),
  };
}

/**
 * The tools/list entry of a tool: its strict input schema, its top-level output schema
 * ({@link outputSchemaOf}) and its hints, each said once. Hints at their MCP default (readOnlyHint
 * false, idempotentHint false, destructiveHint true) are left out, and the title is the tool's own.
 */
function listing(tool: Tool): ToolListing {
  const a = tool.annotations;
  const annotations: ToolListing["annotations"] = {
    ...(a.readOnlyHint === true ? { readOnlyHint: true } : {}),
    ...(a.readOnlyHint !== true && a.destructiveHint === false ? { destructiveHint: false } : {}),
    ...(a.idempotentHint === true ? { idempotentHint: true } : {}),
    ...(a.openWorldHint === false ? { openWorldHint: false } : {}),
  };
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, "input") as ToolListing["inputSchema"],
    outputSchema: outputSchemaOf(tool),
    annotations,
  };
}

/** The document at {@link SCHEMAS_URI}: the error envelope and every tool's result, as JSON Schema. */
export function schemasDocument(tools: readonly Tool[]): Record<string, unknown> {
  return {
    error: jsonSchemaOf(ErrorEnvelopeSchema, "output"),
    results: Object.fromEntries(tools.map((t) => [t.name, jsonSchemaOf(t.output, "output")])),
  };
}

/**
 * A result: the JSON as structuredContent, and the same JSON as the text item, whole, whatever its
 * size (bounded by the responseBytes limit, which refuses a larger answer by name): a client that
 * reads only `content` gets the whole answer too. (Until 0.x a result over 2 KB put an outline
 * there — `proposals: 113 items (…)` — and such a client lost the answer.)
 */
function result(value: object, isError: boolean, lead?: string): CallToolResult {
  const json: CallToolResult["content"][number] = { type: "text", text: JSON.stringify(value) };
  return {
    content: lead === undefined ? [json] : [{ type: "text", text: lead }, json],
    structuredContent: value as Record<string, unknown>,
    isError,
  };
}

/**
 * A JSON-RPC error to throw from a handler: the SDK answers with its `code`, `message` and `data`.
 * Not an McpError, whose message starts "MCP error -32602:", which the client's McpError then
 * prefixes again.
 */
function protocolError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

/** A tool's own failure, told from a core rejection (which has no `kind`). */
function isWireError(e: WireError | Rejection): e is WireError {
  return "kind" in e;
}

/** How long a failure's message may be, and how large its details, on the wire. */
const MESSAGE_CHARS = 2_000;
const DETAILS_BYTES = 16_384;

/**
 * A failure, bounded: a message that quotes a huge input (a 1 MiB selector, name or anchor) is
 * cut, saying how much was left out, and details over their bound are left out, saying so. An
 * error never costs a client more context than the call that caused it is worth.
 */
function failure(error: WireError): CallToolResult {
  let bounded: WireError = error;
  if (error.message.length > MESSAGE_CHARS) {
    const cut = error.message.length - MESSAGE_CHARS;
    bounded = {
      ...bounded,
      message: `${error.message.slice(0, MESSAGE_CHARS)}… (${cut} more characters left out)`,
    };
  }
  if (error.details !== undefined) {
    const size = Buffer.byteLength(JSON.stringify(error.details), "utf8");
    if (size > DETAILS_BYTES) {
      const { details: _, ...rest } = bounded;
      bounded = {
        ...rest,
        details: { omitted: `${size} bytes of details left out (over ${DETAILS_BYTES})` },
      };
    }
  }
  return result({ error: bounded }, true);
}

/** The wire error for arguments that fail a tool's input schema: the first issue, naming the argument. */
function argumentError(tool: Tool, args: Record<string, unknown>, error: z.ZodError): WireError {
  const takes = Object.keys(tool.input.shape).join(", ");
  const issue = error.issues[0]!;
  const at = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const name = [...at, issue.keys[0]!].join(".");
    return {
      kind: "unknown-argument",
      argument: name,
      message: `${tool.name} has no argument ${JSON.stringify(name)}${at.length === 0 ? ` (it takes: ${takes})` : ""}; nothing was done`,
      details: { arguments: issue.keys.map((k) => [...at, k].join(".")) },
    };
  }
  const name = at.join(".");
  if (at.length === 1 && args[at[0]!] === undefined) {
    return {
      kind: "invalid-argument",
      argument: name,
      message: `${tool.name} needs the argument ${JSON.stringify(name)} (it takes: ${takes}); nothing was done`,
    };
  }
  return {
    kind: "invalid-argument",
    argument: name === "" ? "(arguments)" : name,
    message: `${tool.name}: argument ${JSON.stringify(name)}: ${issue.message}; nothing was done`,
  };
}

/**
 * Opens the workspace at (or above) `storeDir` and builds the server over its store. A store that
 * cannot be opened stops the server here, before any call, with the reason for the operator.
 */
export async function createMcpServer(
  options: McpServerOptions,
): Promise<{ ok: true; value: KumikiMcpServer } | { ok: false; error: StartupError }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`kumiki mcp: ${line}\n`));
  const limits = resolveLimits(options.limits);
  if (!limits.ok) return { ok: false, error: { code: "invalid-limit", message: limits.message } };
  // Core's one way to open a workspace: its kumiki.caps.json reaches the gate, check and fix,
  // exactly as for the CLI.
  const opened = await openWorkspaceStore(options.storeDir, {
    author: options.author ?? DEFAULT_AUTHOR,
    // --store DIR names the workspace or a folder inside it, as the CLI takes it.
    walkUp: true,
  });
  if (!opened.ok) return { ok: false, error: opened.error };
  const { store, capabilities } = opened.value;
  const ctx: ToolContext = {
    store,
    limits: limits.value,
    log,
    ...(capabilities === undefined ? {} : { capabilities }),
  };
  const tools = TOOLS;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map(listing);

  const server = new Server(
    { name: "kumiki-graph", title: "Kumiki graph store", version: MCP_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: true }, logging: {} },
      instructions: INSTRUCTIONS,
    },
  );
  const losses = lossNotices(store, server, log, capabilities);

  const call = async (
    name: string,
    raw: Record<string, unknown> | undefined,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const signal = extra.signal;
    const tool = byName.get(name);
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
    const callCtx: ToolContext = {
      ...ctx,
      signal,
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
    const run = () => withCancellation(signal, () => tool.run(parsed.data, callCtx));
    // A client that cancels at once writes the cancellation right behind the request, but the
    // two can reach this process in separate reads, and a write can take its lock, draft and pass
    // its last look at the signal without awaiting anything in between: let the input under way
    // be read first. This runs in the poll phase that read the request; a 1 ms timer puts at least
    // one more poll phase (and a millisecond for the client's next write) before the write, at
    // about 1 ms a write (a stored write takes 10-40 ms).
    if (tool.annotations.readOnlyHint !== true) await new Promise<void>((resolve) => setTimeout(resolve, 1));
    try {
      // A retry with the same key and arguments is answered with the first call's receipt (core
      // records the key with the op-ids, durably, before it appends them).
      const digest = typeof key === "string" ? opContentHash({ tool: name, arguments: request }) : "";
      if (typeof key !== "string") outcome = await run();
      else if (tool.idempotency === "write") outcome = await withIdempotency(key, digest, run);
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
    if (bytes > limits.value.responseBytes) {
      const hint =
        tool.annotations.readOnlyHint === true
          ? "ask for less (one definition instead of a pattern, with_deps off, a check scope)"
          : "the write was done: read its effect back with kumiki_view or kumiki_history";
      return failure(
        limitExceeded(
          "responseBytes",
          limits.value.responseBytes,
          bytes,
          `the size in bytes of the ${name} result`,
          hint,
        ),
      );
    }
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
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: LIMITS_URI,
        name: "limits",
        title: "Limits of this server",
        description: "Every limit a call can hit, by the name a limit-exceeded error gives",
        mimeType: "application/json",
      },
      {
        uri: CONFLICTS_URI,
        name: "conflicts",
        title: "Conflict records",
        description:
          "Every conflict record of the graph as it is now (kumiki_conflicts); subscribe to be told when a write of this session loses a merge",
        mimeType: "application/json",
      },
      {
        uri: SCHEMAS_URI,
        name: "schemas",
        title: "Result and error schemas",
        description:
          "JSON Schema of each tool's structured result (results.<tool>) and of the error envelope (error)",
        mimeType: "application/json",
      },
    ],
  }));
  const documents: Record<string, () => unknown> = {
    [LIMITS_URI]: () => limitsDocument(limits.value),
    [SCHEMAS_URI]: () => schemasDocument(tools),
    [CONFLICTS_URI]: () => ({ conflicts: store.conflicts() }),
  };
  /** The document at `uri`; a URI this server has none at is -32602, naming the resources. */
  const known = (uri: string): (() => unknown) => {
    const document = Object.hasOwn(documents, uri) ? documents[uri] : undefined;
    if (document === undefined)
      throw protocolError(
        ErrorCode.InvalidParams,
        `no resource ${clip(uri)}; the resources are ${Object.keys(documents).join(", ")}`,
      );
    return document;
  };
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    known(request.params.uri);
    losses.subscribed.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    known(request.params.uri);
    losses.subscribed.delete(request.params.uri);
    return {};
  });
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const uri = request.params.uri;
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(known(uri)()) }] };
  });

  let closing: Promise<void> | undefined;
  return {
    ok: true,
    value: {
      server,
      store,
      limits: limits.value,
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
          await store.close();
        })();
        return closing;
      },
    },
  };
}
