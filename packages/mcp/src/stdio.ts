/**
 * The stdio entry: the server speaking MCP on standard input and output, and nothing else on
 * standard output. It runs until the client closes standard input (or SIGTERM/SIGINT), then
 * closes the store, so every write it answered is durable before the process exits.
 */
import type { Readable, Writable } from "node:stream";
import { letStorageFaultsGo } from "@kumiki-graph/storage-automerge";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type JsonRpcErrorAnswer, lineError } from "./json-rpc-guard.js";
import { LineLimiter, type OversizedRequest, REQUEST_BYTES } from "./line-limit.js";
import { createMcpServer, type McpServerOptions, type StartupError } from "./server.js";

/** How long a shutdown waits for the calls in flight to answer. */
const DRAIN_MS = 10_000;

/** Options of {@link serveStdio}: the server's, and the streams (default: the process's). */
export interface StdioOptions extends McpServerOptions {
  readonly stdin?: Readable;
  readonly stdout?: Writable;
}

/**
 * Serves one MCP session over stdio. Resolves when the session has ended and the store is closed
 * (`undefined`), or at once with the reason the server could not start. The process is the
 * server's: a background save of its store that fails (a full disk) does not end it (storage's
 * `letStorageFaultsGo`; the write that needed the save is refused by its own flush).
 */
export async function serveStdio(options: StdioOptions): Promise<StartupError | undefined> {
  letStorageFaultsGo();
  const created = await createMcpServer(options);
  if (!created.ok) return created.error;
  const mcp = created.value;
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  // Why the session ended: the first reason is the one logged (the operator's stderr).
  let reason: string | undefined;
  let resolveEnded = (): void => undefined;
  const ended = new Promise<void>((resolve) => {
    resolveEnded = resolve;
  });
  const stopWith = (why: string) => (): void => {
    reason ??= why;
    resolveEnded();
  };
  const onEnd = stopWith("the client closed standard input");
  const onSigterm = stopWith("SIGTERM");
  const onSigint = stopWith("SIGINT");
  stdin.once("end", onEnd);
  stdin.once("close", onEnd);
  process.once("SIGTERM", onSigterm);
  process.once("SIGINT", onSigint);
  mcp.server.onclose = stopWith("the connection closed");
  // One message per line, each at most REQUEST_BYTES: a bigger one is answered with an error and
  // the session goes on (the SDK alone would close it).
  let answerOversized = (_r: OversizedRequest): void => undefined;
  let answerMalformed = (_e: JsonRpcErrorAnswer): void => undefined;
  // A line that is not a JSON-RPC message is answered (-32700, -32600) and not passed on: the
  // SDK would drop it without an answer. Blank lines are skipped.
  const keep = (line: Buffer): boolean => {
    const text = line.toString("utf8").replace(/\r$/, "");
    if (text.trim() === "") return false;
    const bad = lineError(text);
    if (bad !== undefined) answerMalformed(bad);
    return bad === undefined;
  };
  const limited = stdin.pipe(new LineLimiter((r) => answerOversized(r), REQUEST_BYTES, keep));
  const transport = new StdioServerTransport(limited, stdout);
  answerMalformed = (e) => void transport.send(e as JSONRPCMessage).catch(() => undefined);
  answerOversized = ({ id, bytes }) => {
    const message = `the request is ${bytes.toLocaleString("en")} bytes; a request may be at most ${REQUEST_BYTES.toLocaleString("en")} bytes (send large texts in parts); nothing was done`;
    options.log?.(message) ?? process.stderr.write(`kumiki mcp: ${message}\n`);
    if (id !== undefined)
      void transport.send({
        jsonrpc: "2.0",
        id,
        error: { code: -32600, message, data: { kind: "limit-exceeded", limit: "requestBytes", bytes } },
      });
  };
  // Answers being written: a shutdown waits for them, after the calls in flight have answered.
  const sending = new Set<Promise<void>>();
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    const p = send(message);
    sending.add(p);
    void p.finally(() => sending.delete(p)).catch(() => undefined);
    return p;
  };
  try {
    await mcp.connect(transport);
    await ended;
  } finally {
    stdin.off("end", onEnd);
    stdin.off("close", onEnd);
    process.off("SIGTERM", onSigterm);
    process.off("SIGINT", onSigint);
    const line = `session ended: ${reason ?? "the transport failed"}; answering the calls in flight, then closing the store`;
    options.log?.(line) ?? process.stderr.write(`kumiki mcp: ${line}\n`);
    // A signal ends the session gracefully: every call in flight is answered before the
    // connection closes (bounded: a call is a store write, which takes milliseconds).
    await Promise.race([mcp.drain(), new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
    // The SDK sends an answer in a continuation of the call's handler: let those run, then wait
    // for the answers they started writing.
    await new Promise((r) => setImmediate(r));
    await Promise.allSettled([...sending]);
    await mcp.close();
  }
  return undefined;
}
