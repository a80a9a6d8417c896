/**
 * Test support: a workspace built from a corpus program, and a real MCP client talking to a real
 * server process over stdio.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openStore } from "@kumiki-graph/core";
import { splitProgram } from "@kumiki-graph/core/lang";
import { initWorkspace } from "@kumiki-graph/storage-automerge";
import { repoRoot } from "@kumiki-graph/test-support/corpus";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";
import { expect } from "vitest";

/** The built CLI launcher (tests of the bin use dist: run `npx tsc -b` first). */
export const kumikiBin = path.join(repoRoot, "packages/cli/bin/kumiki.js");

/** A temporary directory, removed by `dispose`. */
export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `kumiki-mcp-${prefix}-`));
}

export async function dispose(dir: string | undefined): Promise<void> {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
}

/**
 * A workspace in `dir` holding `source` (one bundle of `{op: "add", source}` items, one per
 * definition). With `withErrors`, the checker's write gate is off for the import, so the graph can
 * start with errors (as one can after a merge) for kumiki_fix to repair.
 */
export async function workspaceFrom(
  dir: string,
  source: string,
  options: { withErrors?: boolean } = {},
): Promise<void> {
  const ws = await initWorkspace(dir);
  if (!ws.ok) throw new Error(ws.error.message);
  const store = openStore({
    log: ws.value.log,
    author: "user:fixture",
    ...(options.withErrors === true ? { validators: [] } : {}),
  });
  if (!store.ok) throw new Error(store.error.message);
  try {
    if (source === "") return;
    const pieces = splitProgram(source);
    if (!pieces.ok) throw new Error(pieces.error.message);
    const items = pieces.value.flatMap((p) =>
      p.kind === "definition" ? [{ op: "add" as const, source: p.text }] : [],
    );
    // With errors: as a faithful import takes a program (references to nothing stored unbound).
    const r = await store.value.apply(items, options.withErrors === true ? { keepErrors: true } : {});
    if (!r.ok) throw new Error(`fixture import refused: ${r.error.code}: ${r.error.message}`);
  } finally {
    await store.value.close();
  }
}

/**
 * A call's outcome, after checking its structuredContent against the tool's result schema (or the
 * error envelope) from kumiki://schemas, and its text item: the same JSON, whole.
 */
export interface Called {
  readonly isError: boolean;
  readonly value: Record<string, unknown>;
}

/** An MCP session with a server process. */
export interface Session {
  readonly client: Client;
  /** The server process's pid (to signal it). */
  readonly pid: number | null;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** Calls a tool; asserts the result's shape (structured, mirrored, isError set). */
  call(name: string, args: Record<string, unknown>): Promise<Called>;
  close(): Promise<void>;
}

/** The structured result of a call, asserted to be a success. */
export function ok(c: Called): Record<string, unknown> {
  expect(c.isError, JSON.stringify(c.value)).toBe(false);
  return c.value;
}

/** The error envelope of a failed call, asserted to be one. */
export function errorOf(c: Called): {
  kind: string;
  message: string;
  code?: string;
  argument?: string;
  limit?: string;
} {
  expect(c.isError).toBe(true);
  const e = c.value.error as { kind: string; message: string };
  expect(typeof e.kind).toBe("string");
  expect(typeof e.message).toBe("string");
  return e;
}

/**
 * Starts `command args` as an MCP server over stdio and connects a client (tools listed, so outputs
 * are validated). No result may contain `hostPath` (the store's directory): messages are for the model.
 */
export async function connect(
  command: string,
  args: readonly string[],
  options: { hostPath?: string } = {},
): Promise<Session> {
  const transport = new StdioClientTransport({
    command,
    args: [...args],
    env: { ...getDefaultEnvironment(), KUMIKI_AUTHOR: "agent:test" },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (b: Buffer) => {
    err += b.toString("utf8");
  });
  return over(
    transport,
    () => err,
    () => transport.pid,
    options,
  );
}

/**
 * Connects a real MCP client over Streamable HTTP to `url` (the SDK's StreamableHTTPClientTransport),
 * with the same checks of every answer as over stdio. `headers` go with every request (a token).
 */
export function connectHttp(
  url: string,
  options: { hostPath?: string; headers?: Record<string, string>; serverLog?: () => string } = {},
): Promise<Session> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(options.headers === undefined ? {} : { requestInit: { headers: options.headers } }),
  });
  return over(transport, options.serverLog ?? (() => ""), () => null, options);
}

async function over(
  transport: Transport,
  stderr: () => string,
  pid: () => number | null,
  options: { hostPath?: string },
): Promise<Session> {
  const client = new Client({ name: "kumiki-mcp-test", version: "0.0.0" });
  const ajv = new AjvJsonSchemaValidator();
  let validate: (name: string, isError: boolean, value: unknown) => void;
  try {
    await client.connect(transport);
    await client.listTools();
    // The result schemas are published once, as a resource (tools/list stays small).
    const read = await client.readResource({ uri: "kumiki://schemas" });
    const doc = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      error: JsonSchemaType;
      results: Record<string, JsonSchemaType>;
    };
    const envelope = ajv.getValidator(doc.error);
    const results = new Map(Object.entries(doc.results).map(([n, sch]) => [n, ajv.getValidator(sch)]));
    validate = (name, isError, value) => {
      const v = isError ? envelope : results.get(name);
      if (v === undefined) return;
      const r = v(value);
      expect(r.valid, `${name}: ${r.errorMessage ?? ""}`).toBe(true);
    };
  } catch (e) {
    await client.close().catch(() => undefined);
    throw new Error(`${(e as Error).message}\nserver stderr:\n${stderr()}`);
  }
  return {
    client,
    get pid() {
      return pid();
    },
    stderr,
    async call(name, a) {
      const r = (await client.callTool({ name, arguments: a })) as {
        isError?: boolean;
        structuredContent?: Record<string, unknown>;
        content: { type: string; text?: string }[];
        _meta?: Record<string, unknown>;
      };
      expect(r.structuredContent, `${name}: structuredContent`).toBeDefined();
      // kumiki_view leads with the Kumiki text itself, sent once; then, as every answer, the JSON.
      const lead = name === "kumiki_view" && r.isError !== true ? r.content[0]!.text : undefined;
      const items = r.content.slice(lead === undefined ? 0 : 1);
      // A second JSON item only to tell losses learned since the last answer (loss-notices.ts).
      expect(items).toHaveLength(r._meta?.["kumiki-graph/losses"] === undefined ? 1 : 2);
      expect(r.content.every((c) => c.type === "text")).toBe(true);
      const json = JSON.stringify(r.structuredContent);
      // The whole JSON, whatever its size: a client that reads only text loses nothing.
      expect(items[0]!.text).toBe(json);
      expect(typeof r.isError).toBe("boolean");
      validate(name, r.isError === true, r.structuredContent);
      for (const c of r.content)
        if (options.hostPath !== undefined) expect(c.text).not.toContain(options.hostPath);
      if (lead === undefined) return { isError: r.isError === true, value: r.structuredContent! };
      // Sent once: the structured result (and so its JSON) does not carry the text again.
      expect(json).not.toContain(JSON.stringify(lead.trimEnd()).slice(1, -1));
      // Each definition's line points at its text in the lead: line 1 first, in order, in range.
      const defs = r.structuredContent!.definitions as { line: number }[];
      const total = lead.split("\n").length - 1;
      expect(lead.endsWith("\n")).toBe(true);
      expect(defs[0]?.line).toBe(1);
      defs.forEach((d, i) => {
        expect(d.line).toBeLessThanOrEqual(total);
        if (i > 0) expect(d.line).toBeGreaterThan(defs[i - 1]!.line);
      });
      return { isError: false, value: { ...r.structuredContent!, text: lead } };
    },
    close: () => client.close(),
  };
}

/** A session with `kumiki mcp serve --store dir` of this repository's built bin. */
export function serve(dir: string, extra: readonly string[] = []): Promise<Session> {
  return connect(process.execPath, [kumikiBin, "mcp", "serve", "--store", dir, ...extra], { hostPath: dir });
}
