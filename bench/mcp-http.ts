/**
 * MCP over Streamable HTTP against stdio (issue 37): calls per second and per-call latency (p50,
 * p99) of `kumiki_view` and `kumiki_add` on apps/05-project-management, through the SDK's clients to
 * real processes, in the same run:
 *
 * - baseline: one stdio session of `kumiki mcp serve` on a workspace, calls one after another;
 * - `kumiki mcp serve --http` on a copy of that workspace, 10 sessions calling at once;
 * - `kumiki serve` (one server, folder storage), the graph pushed to it, 10 sessions at once on
 *   `/g/<graph>/mcp`; with PostgreSQL, two servers on one database, 5 sessions on each;
 * - with PostgreSQL: the time from an add acknowledged on server 1 to the first read on server 2
 *   that sees it (30 adds, median and p99).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { importProgram, openStore } from "@kumiki-graph/core";
import { initWorkspace } from "@kumiki-graph/storage-automerge";
import { syncWorkspace } from "@kumiki-graph/sync-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type BenchRow, summarize, type Timing } from "./harness.js";
import { corpusFile } from "./paths.js";
import { type BinProcess, benchSchema, KUMIKI_BIN, startBin } from "./services.js";

const SESSIONS = 10;
const CALLS = 30;

async function httpClient(url: string): Promise<Client> {
  const c = new Client({ name: "bench", version: "0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

/** `sessions` clients each making CALLS calls of `tool` at once: per-call latencies and calls/s. */
async function load(
  clients: readonly Client[],
  tool: string,
  args: (session: number, i: number) => Record<string, unknown>,
): Promise<{ latency: Timing; p99: number; perSecond: number }> {
  const times: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c, s) => {
      for (let i = 0; i < CALLS; i++) {
        const t = performance.now();
        const r = (await c.callTool({ name: tool, arguments: args(s, i) })) as { isError?: boolean };
        if (r.isError === true) throw new Error(`${tool} failed: ${JSON.stringify(r)}`);
        times.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - t0;
  const sorted = [...times].sort((a, b) => a - b);
  return {
    latency: summarize(times),
    p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!,
    perSecond: (times.length / wall) * 1000,
  };
}

function row(
  name: string,
  r: { latency: Timing; p99: number; perSecond: number },
  base?: { name: string; r: { latency: Timing; perSecond: number } },
): BenchRow {
  return {
    name,
    ours: r.latency,
    ...(base === undefined ? {} : { baseline: { name: base.name, timing: base.r.latency } }),
    note: `${r.perSecond.toFixed(0)} calls/s, p99 ${r.p99.toFixed(1)} ms${base === undefined ? "" : ` (stdio: ${base.r.perSecond.toFixed(0)} calls/s)`}`,
  };
}

const view = () => ({ selector: "slot.tasks", with_deps: true });
const add = (prefix: string) => (s: number, i: number) => ({
  layer: "slot",
  name: `${prefix}s${s}n${i}`,
  body: ": Int = 0",
});

export async function benchMcpHttp(): Promise<BenchRow[]> {
  const file = corpusFile("apps/05-project-management/app.kumiki");
  if (file === undefined) return [];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-mcp-http-"));
  const procs: BinProcess[] = [];
  const clients: Client[] = [];
  const db = await benchSchema("kumiki_bench_http");
  try {
    const ws = path.join(root, "ws");
    const made = await initWorkspace(ws);
    if (!made.ok) throw new Error(made.error.message);
    const graph = made.value.config.graph;
    const store = openStore({ log: made.value.log, author: "agent:bench" });
    if (!store.ok) throw new Error(store.error.message);
    const imported = await importProgram(store.value, fs.readFileSync(file, "utf8"));
    if (!imported.ok) throw new Error(imported.error.message);
    await store.value.close();
    const copy = path.join(root, "copy");
    fs.cpSync(ws, copy, { recursive: true });
    const rows: BenchRow[] = [];

    // Baseline: stdio, one session.
    const stdio = new Client({ name: "bench", version: "0" });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [KUMIKI_BIN, "mcp", "serve", "--store", ws],
        stderr: "ignore",
      }),
    );
    clients.push(stdio);
    const stdioView = await load([stdio], "kumiki_view", view);
    const stdioAdd = await load([stdio], "kumiki_add", add("io"));
    rows.push(row("MCP stdio, 1 session: kumiki_view slot.tasks with_deps", stdioView));
    rows.push(row("MCP stdio, 1 session: kumiki_add", stdioAdd));

    // kumiki mcp serve --http, 10 sessions.
    const local = await startBin(["mcp", "serve", "--http", "0", "--store", copy], /serving MCP on (\S+)/);
    procs.push(local);
    const localClients = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(local.line)));
    clients.push(...localClients);
    rows.push(
      row(
        `MCP HTTP (mcp serve --http), ${SESSIONS} sessions: kumiki_view`,
        await load(localClients, "kumiki_view", view),
        {
          name: "stdio",
          r: stdioView,
        },
      ),
    );
    rows.push(
      row(
        `MCP HTTP (mcp serve --http), ${SESSIONS} sessions: kumiki_add`,
        await load(localClients, "kumiki_add", add("lh")),
        {
          name: "stdio",
          r: stdioAdd,
        },
      ),
    );

    // kumiki serve, folder storage, the graph pushed to it.
    const server = await startBin(
      ["serve", "--port", "0", "--data", path.join(root, "server")],
      /listening on (ws:\/\/\S+)/,
    );
    procs.push(server);
    const pushed = await syncWorkspace(ws, { url: server.line, timeoutMs: 60_000 });
    if (!pushed.ok) throw new Error(pushed.error.message);
    const endpoint = (s: BinProcess) => `${s.line.replace(/^ws/, "http")}/g/${graph}/mcp`;
    const serveClients = await Promise.all(
      Array.from({ length: SESSIONS }, () => httpClient(endpoint(server))),
    );
    clients.push(...serveClients);
    rows.push(
      row(
        `MCP HTTP (kumiki serve, FS), ${SESSIONS} sessions: kumiki_view`,
        await load(serveClients, "kumiki_view", view),
        {
          name: "stdio",
          r: stdioView,
        },
      ),
    );
    rows.push(
      row(
        `MCP HTTP (kumiki serve, FS), ${SESSIONS} sessions: kumiki_add`,
        await load(serveClients, "kumiki_add", add("fs")),
        {
          name: "stdio",
          r: stdioAdd,
        },
      ),
    );

    const pgUrl = db.url;
    if (pgUrl !== undefined) {
      const one = await startBin(["serve", "--port", "0", "--storage", pgUrl], /listening on (ws:\/\/\S+)/);
      const two = await startBin(["serve", "--port", "0", "--storage", pgUrl], /listening on (ws:\/\/\S+)/);
      procs.push(one, two);
      const pgPushed = await syncWorkspace(ws, { url: one.line, timeoutMs: 60_000 });
      if (!pgPushed.ok) throw new Error(pgPushed.error.message);
      const pgClients = await Promise.all(
        Array.from({ length: SESSIONS }, (_, i) => httpClient(endpoint(i % 2 === 0 ? one : two))),
      );
      clients.push(...pgClients);
      rows.push(
        row(
          `MCP HTTP (2 × kumiki serve, one PostgreSQL), ${SESSIONS} sessions: kumiki_view`,
          await load(pgClients, "kumiki_view", view),
          {
            name: "stdio",
            r: stdioView,
          },
        ),
      );
      rows.push(
        row(
          `MCP HTTP (2 × kumiki serve, one PostgreSQL), ${SESSIONS} sessions: kumiki_add`,
          await load(pgClients, "kumiki_add", add("pg")),
          {
            name: "stdio",
            r: stdioAdd,
          },
        ),
      );
      // Acknowledged on server 1 → seen by a read on server 2.
      const [writer, reader] = [pgClients[0]!, pgClients[1]!];
      const delays: number[] = [];
      for (let i = 0; i < 30; i++) {
        const name = `seen${i}`;
        const w = (await writer.callTool({
          name: "kumiki_add",
          arguments: { layer: "slot", name, body: ": Int = 1" },
        })) as {
          isError?: boolean;
        };
        if (w.isError === true) throw new Error("the add failed");
        const acked = performance.now();
        for (let k = 0; k < 2000; k++) {
          const r = (await reader.callTool({
            name: "kumiki_view",
            arguments: { selector: `slot.${name}` },
          })) as {
            isError?: boolean;
          };
          if (r.isError !== true) break;
        }
        delays.push(performance.now() - acked);
      }
      const sorted = [...delays].sort((a, b) => a - b);
      rows.push({
        name: "MCP HTTP, 2 × kumiki serve on one PostgreSQL: add acknowledged on server 1 → read on server 2 sees it",
        ours: summarize(delays),
        note: `30 adds; p99 ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(1)} ms`,
      });
    }
    return rows;
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const p of procs) await p.stop();
    await db.drop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
