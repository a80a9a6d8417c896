/**
 * What an MCP agent's context pays (issue 20): the bytes on the wire of each message of a scripted
 * session on the 179-definition example (05-project-management, with 20 injected misspellings so
 * that check and fix have something to say): tools/list, view, view with deps, add, edit, check,
 * fix. Each is printed beside the same session's bytes before the context-budget change (commit
 * 3576ea6, measured on 2026-12-03 with this script on that commit: fixed figures, below). The
 * time column is one call's, through an in-memory transport (no process, no stdio).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { importProgram, openStore } from "@kumiki-graph/core";
import { createMcpServer } from "@kumiki-graph/mcp";
import { initWorkspace } from "@kumiki-graph/storage-automerge";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { BenchRow } from "./harness.js";
import { corpusFile } from "./paths.js";
import { injectMisspellings } from "./repair.js";

/** The session's steps: a name, and the MCP call (a tool with its arguments, or tools/list). */
const STEPS: readonly [string, string, Record<string, unknown>][] = [
  ["tools/list", "", {}],
  ["kumiki_view slot.tasks", "kumiki_view", { selector: "slot.tasks" }],
  ["kumiki_view slot.tasks with_deps", "kumiki_view", { selector: "slot.tasks", with_deps: true }],
  ["kumiki_add", "kumiki_add", { layer: "slot", name: "benchExtra", body: ": Int = 0" }],
  ["kumiki_edit", "kumiki_edit", { qname: "slot.benchExtra", patch: [{ find: "= 0", replace: "= 1" }] }],
  ["kumiki_check (20 errors)", "kumiki_check", {}],
  ["kumiki_fix E0103 (20 proposals)", "kumiki_fix", { error_code: "E0103" }],
];

/** Bytes of each step's answer before the change (commit 3576ea6, 2026-12-03). */
const BEFORE: Readonly<Record<string, number>> = {
  "tools/list": 33124,
  "kumiki_view slot.tasks": 405,
  "kumiki_view slot.tasks with_deps": 2065,
  kumiki_add: 282,
  kumiki_edit: 200,
  "kumiki_check (20 errors)": 20194,
  "kumiki_fix E0103 (20 proposals)": 33736,
};

/** The bytes of each answer of the session, on the wire (the JSON-RPC message the server sends). */
export async function contextSession(): Promise<Map<string, { bytes: number; ms: number }> | undefined> {
  const file = corpusFile("apps/05-project-management/app.kumiki");
  if (file === undefined) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), "kumiki-bench-context-"));
  try {
    const ws = await initWorkspace(dir);
    if (!ws.ok) throw new Error(ws.error.message);
    const store = openStore({ log: ws.value.log, author: "agent:bench", validators: [] });
    if (!store.ok) throw new Error(store.error.message);
    const imported = await importProgram(store.value, injectMisspellings(readFileSync(file, "utf8"), 20));
    if (!imported.ok) throw new Error(imported.error.message);
    await store.value.close();
    const made = await createMcpServer({ storeDir: dir, author: "agent:bench", log: () => undefined });
    if (!made.ok) throw new Error(made.error.message);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const sizes = new Map<string | number, number>();
    const send = serverSide.send.bind(serverSide);
    serverSide.send = (message: JSONRPCMessage, options) => {
      if ("id" in message && message.id !== undefined)
        sizes.set(message.id, Buffer.byteLength(JSON.stringify(message), "utf8"));
      return send(message, options);
    };
    await made.value.connect(serverSide);
    const client = new Client({ name: "bench", version: "0" });
    await client.connect(clientSide);
    const out = new Map<string, { bytes: number; ms: number }>();
    try {
      for (const [label, tool, args] of STEPS) {
        const before = new Set(sizes.keys());
        const t0 = performance.now();
        if (tool === "") await client.listTools();
        else await client.callTool({ name: tool, arguments: args });
        const ms = performance.now() - t0;
        const id = [...sizes.keys()].find((k) => !before.has(k));
        out.set(label, { bytes: id === undefined ? 0 : sizes.get(id)!, ms });
      }
    } finally {
      await client.close();
      await made.value.close();
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchMcpContext(): Promise<BenchRow[]> {
  const session = await contextSession();
  if (session === undefined) return [];
  const once = (ms: number) => ({ median: ms, min: ms, max: ms, runs: 1 });
  let total = 0;
  let totalBefore = 0;
  let totalMs = 0;
  const rows: BenchRow[] = [...session].map(([label, { bytes, ms }]) => {
    total += bytes;
    totalMs += ms;
    totalBefore += BEFORE[label] ?? 0;
    return {
      name: `MCP context, 05-project-management: ${label}`,
      ours: once(ms),
      note: `${bytes.toLocaleString("en")} bytes (before: ${(BEFORE[label] ?? 0).toLocaleString("en")})`,
    };
  });
  rows.push({
    name: "MCP context, the whole session",
    ours: once(totalMs),
    target: "tools/list ≤ 15 KB (the public Kumiki server's: 15.4 KB)",
    note: `${total.toLocaleString("en")} bytes (before: ${totalBefore.toLocaleString("en")}, ${(total / totalBefore).toFixed(2)}×)`,
  });
  return rows;
}
