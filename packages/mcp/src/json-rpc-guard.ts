/**
 * JSON-RPC 2.0 errors where the SDK gives none or the wrong one. The SDK's stdio transport drops a
 * line that is not JSON, or not a JSON-RPC message, with no answer (the client waits for ever); and
 * a request whose params its method does not take is answered -32603 with a dump of the schema
 * library's issues. Here: -32700 for a line that is not JSON, -32600 for JSON that is no JSON-RPC
 * 2.0 message, -32602 with one short sentence for params a known method does not take — as the
 * JSON-RPC 2.0 specification defines them, each naming what is wrong.
 */
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** A JSON-RPC error answer (`id` null when the request's id could not be read). */
export interface JsonRpcErrorAnswer {
  readonly jsonrpc: "2.0";
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string };
}

/** The request schemas of the methods this server answers, by method. */
const REQUESTS: Readonly<Record<string, { safeParse(v: unknown): { success: boolean; error?: unknown } }>> = {
  initialize: InitializeRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "resources/subscribe": SubscribeRequestSchema,
  "resources/unsubscribe": UnsubscribeRequestSchema,
  "logging/setLevel": SetLevelRequestSchema,
};

/** The first issue of a schema failure, as `params.uri: expected string`. */
function firstIssue(error: unknown): string {
  const issue = (error as { issues?: { path?: PropertyKey[]; message?: string }[] } | undefined)?.issues?.[0];
  if (issue === undefined) return "not what the method takes";
  const at = (issue.path ?? []).map(String).join(".");
  return `${at === "" ? "the message" : at}: ${issue.message ?? "invalid"}`;
}

/** The id of a parsed value that is an object with a JSON-RPC id, else null. */
function idOf(value: unknown): string | number | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

const answer = (id: string | number | null, code: number, message: string): JsonRpcErrorAnswer => ({
  jsonrpc: "2.0",
  id,
  error: { code, message },
});

/** The error answer for one input line, or undefined when it is a JSON-RPC 2.0 message. */
export function lineError(line: string): JsonRpcErrorAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    const why = e instanceof Error ? e.message : "not JSON";
    return answer(null, ErrorCode.ParseError, `Parse error: the line is not JSON (${why.slice(0, 200)})`);
  }
  if (JSONRPCMessageSchema.safeParse(value).success) return undefined;
  const shape =
    value === null || typeof value !== "object" || Array.isArray(value)
      ? "a JSON-RPC message is an object (batches are not taken)"
      : (value as { jsonrpc?: unknown }).jsonrpc !== "2.0"
        ? 'a JSON-RPC message has "jsonrpc": "2.0"'
        : "a request has an id and a method, a notification a method, a response an id and a result or an error";
  return answer(idOf(value), ErrorCode.InvalidRequest, `Invalid Request: ${shape}`);
}

/**
 * The error answer for a request whose params its method does not take (-32602, one sentence),
 * or undefined (the request is fine, not a request, or of a method this table does not know).
 */
export function paramsError(message: JSONRPCMessage): JsonRpcErrorAnswer | undefined {
  if (!("method" in message) || !("id" in message)) return undefined;
  const schema = Object.hasOwn(REQUESTS, message.method) ? REQUESTS[message.method] : undefined;
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(message);
  if (parsed.success) return undefined;
  return answer(
    message.id,
    ErrorCode.InvalidParams,
    `Invalid params of ${message.method}: ${firstIssue(parsed.error)}`,
  );
}
