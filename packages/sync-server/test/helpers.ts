import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore, type Store } from "@kumiki-graph/core";
import { initWorkspace, openWorkspace } from "@kumiki-graph/storage-automerge";
import { parseTokenFile, type SyncServer, startSyncServer, type TokenTable } from "../src/index.js";

/** A temporary directory removed by {@link cleanup}. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `kumiki-sync-${prefix}-`));
}

export const TOKENS = {
  alice: "alice-token-0123456789abcdef",
  bob: "bob-token-0123456789abcdef",
  reader: "reader-token-0123456789abcdef",
  stranger: "stranger-token-0123456789abcdef",
  admin: "admin-token-0123456789abcdef",
} as const;

/** The token file of the tests: alice and bob write `graph`, reader reads it, stranger has another graph. */
export function tokenFileFor(graph: string): string {
  return JSON.stringify({
    format: 1,
    tokens: [
      { name: "alice", token: TOKENS.alice, graphs: { [graph]: "write" } },
      { name: "bob", token: TOKENS.bob, graphs: { [graph]: "write" } },
      { name: "reader", token: TOKENS.reader, graphs: { [graph]: "read" } },
      {
        name: "stranger",
        token: TOKENS.stranger,
        graphs: { "automerge:2j9knpCseyhnK8izDmLpGP5WMdZQ": "write" },
      },
      { name: "admin", token: TOKENS.admin, graphs: { "*": "write" } },
    ],
  });
}

export function tokensFor(graph: string): TokenTable {
  const t = parseTokenFile(tokenFileFor(graph));
  if (!t.ok) throw new Error(t.error.message);
  return t.value;
}

export async function serve(dataDir: string, tokens?: TokenTable): Promise<SyncServer> {
  const s = await startSyncServer({ dataDir, ...(tokens === undefined ? {} : { tokens }) });
  if (!s.ok) throw new Error(s.error.message);
  return s.value;
}

/** Creates a workspace and returns its graph URL. */
export async function newWorkspace(dir: string): Promise<string> {
  const ws = await initWorkspace(dir);
  if (!ws.ok) throw new Error(ws.error.message);
  const url = ws.value.config.graph;
  await ws.value.log.close();
  return url;
}

/** Runs `fn` on the workspace's store (opened without network) and closes it. */
export async function withStore<T>(dir: string, author: string, fn: (s: Store) => Promise<T>): Promise<T> {
  const ws = await openWorkspace(dir);
  if (!ws.ok) throw new Error(ws.error.message);
  const s = openStore({ log: ws.value.log, author });
  if (!s.ok) throw new Error(s.error.message);
  try {
    return await fn(s.value);
  } finally {
    await s.value.close();
  }
}

/** Everything a reader of the graph sees: every definition's text, the conflicts, the heads. */
export async function viewOf(dir: string): Promise<string> {
  return withStore(dir, "user:viewer", async (s) => {
    const list = s.list();
    if (!list.ok) throw new Error(list.error.message);
    const texts = list.value.map((e) => {
      const v = s.view(e.qname);
      return v.ok ? v.value.text : `(${v.error.code})`;
    });
    return JSON.stringify({ texts, conflicts: s.conflicts(), heads: s.status().heads });
  });
}

export function must<T>(
  r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } },
): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}
