/**
 * The stdio entry: the server speaking MCP on standard input and output, and nothing else on
 * standard output. It runs until the client closes standard input (or SIGTERM/SIGINT), then
 * closes the store, so every write it answered is durable before the process exits.
 */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer, type McpServerOptions, type StartupError } from "./server.js";

/** Options of {@link serveStdio}: the server's, and the streams (default: the process's). */
export interface StdioOptions extends McpServerOptions {
  readonly stdin?: Readable;
  readonly stdout?: Writable;
}

/**
 * Serves one MCP session over stdio. Resolves when the session has ended and the store is closed
 * (`undefined`), or at once with the reason the server could not start.
 */
export async function serveStdio(options: StdioOptions): Promise<StartupError | undefined> {
  const created = await createMcpServer(options);
  if (!created.ok) return created.error;
  const mcp = created.value;
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  let stop = (): void => undefined;
  const ended = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const onSignal = (): void => stop();
  stdin.once("end", stop);
  stdin.once("close", stop);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  mcp.server.onclose = stop;
  try {
    await mcp.connect(new StdioServerTransport(stdin, stdout));
    await ended;
  } finally {
    stdin.off("end", stop);
    stdin.off("close", stop);
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    await mcp.close();
  }
  return undefined;
}
