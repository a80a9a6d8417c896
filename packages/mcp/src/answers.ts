/**
 * How a session answers: a result (the JSON as structuredContent and as the text item), a bounded
 * failure envelope, a JSON-RPC error to throw from a handler, and the error for arguments that fail
 * a tool's input schema. The same for every transport.
 */
import type { Rejection } from "@kumiki-graph/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Tool } from "./tool.js";
import type { WireError } from "./wire-error.js";

/**
 * A result: the JSON as structuredContent, and the same JSON as the text item, whole, whatever its
 * size (bounded by the responseBytes limit, which refuses a larger answer by name): a client that
 * reads only `content` gets the whole answer too. (Until 0.x a result over 2 KB put an outline
 * there — `proposals: 113 items (…)` — and such a client lost the answer.)
 */
export function result(value: object, isError: boolean, lead?: string): CallToolResult {
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
export function protocolError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

/** A tool's own failure, told from a core rejection (which has no `kind`). */
export function isWireError(e: WireError | Rejection): e is WireError {
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
export function failure(error: WireError): CallToolResult {
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
export function argumentError(tool: Tool, args: Record<string, unknown>, error: z.ZodError): WireError {
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
