/**
 * `kumiki serve` serves MCP over Streamable HTTP for each graph at `/g/<graph>/mcp`, on the server's
 * own copy, under the sync tokens: the real bin, a workspace pushed to it with the real sync, the
 * SDK's StreamableHTTPClientTransport. A write through MCP is answered once the server stored it
 * and reaches a workspace by its next sync; a write pushed by a sync is read through MCP at once;
 * each write is authored by its token's name; a read token gets a read-only session; a token for
 * another graph, no token and a withdrawn token are refused.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { syncWorkspace } from "@kumiki-graph/sync-server";
import { hasCorpus, kumikiShared } from "@kumiki-graph/test-support/corpus";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanup,
  initializeOver,
  runBin,
  startBin,
  startServe as startServeBin,
  stopBin,
  tempDir,
} from "./support.js";

const TOKENS = {
  alice: "alice-token-0123456789abcdef",
  reader: "reader-token-0123456789abcdef",
  stranger: "stranger-token-0123456789abcdef",
};

function tokenFile(graph: string, withAlice = true): string {
  return JSON.stringify({
    format: 1,
    tokens: [
      ...(withAlice ? [{ name: "agent:alice", token: TOKENS.alice, graphs: { [graph]: "write" } }] : []),
      { name: "agent:reader", token: TOKENS.reader, graphs: { [graph]: "read" } },
      {
        name: "stranger",
        token: TOKENS.stranger,
        graphs: { "automerge:2j9knpCseyhnK8izDmLpGP5WMdZQ": "write" },
      },
    ],
  });
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  cleanup(...dirs.splice(0));
});

async function startServe(
  root: string,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const started = await startServeBin(root, extra);
  children.push(started.child);
  return started;
}

async function mcpClient(endpoint: string, token?: string): Promise<Client> {
  const client = new Client({ name: "serve-mcp-test", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint), {
      ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    }),
  );
  return client;
}

interface Answer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { text: string }[];
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  return (await client.callTool({ name, arguments: args })) as Answer;
}

/** A workspace at root/ws holding `slot count`, and the token file for its graph. */
async function seeded(root: string): Promise<{ ws: string; graph: string }> {
  const ws = path.join(root, "ws");
  const opened = await openWorkspaceStore(ws, { author: "agent:local", create: true });
  if (!opened.ok) throw new Error(opened.error.message);
  const graph = opened.value.workspace.config.graph;
  const added = await opened.value.store.add({ layer: "slot", name: "count", body: ": Int = 0" });
  if (!added.ok) throw new Error(added.error.message);
  await opened.value.close();
  fs.writeFileSync(path.join(root, "tokens.json"), tokenFile(graph));
  return { ws, graph };
}

describe("kumiki serve: MCP for each graph", () => {
  it("reads and writes the server's copy under the sync tokens, live both ways", async () => {
    const root = tempDir("serve-mcp");
    dirs.push(root);
    const { ws, graph } = await seeded(root);
    const server = await startServe(root);
    const sync = () => syncWorkspace(ws, { url: server.url, token: TOKENS.alice, timeoutMs: 30_000 });
    expect((await sync()).ok).toBe(true);
    const endpoint = `${server.url.replace(/^ws/, "http")}/g/${graph}/mcp`;

    const alice = await mcpClient(endpoint, TOKENS.alice);
    const reader = await mcpClient(endpoint, TOKENS.reader);
    try {
      // What the sync pushed is there.
      expect((await call(alice, "kumiki_view", { selector: "slot.count" })).content[0]!.text).toBe(
        "slot count : Int = 0\n",
      );
      // A write through MCP, authored by the token's name, reaches the workspace by its next sync.
      const written = await call(alice, "kumiki_add", { layer: "slot", name: "viaMcp", body: ": Int = 7" });
      expect(written.isError).toBe(false);
      expect((await sync()).ok).toBe(true);
      const local = await openWorkspaceStore(ws, { author: "agent:local" });
      if (!local.ok) throw new Error(local.error.message);
      try {
        const seen = local.value.store.view("slot.viaMcp");
        expect(seen.ok && seen.value.text).toBe("slot viaMcp : Int = 7\n");
        const history = local.value.store.history("slot.viaMcp");
        expect(history.ok && history.value[0]!.entries.map((o) => o.author)).toEqual(["agent:alice"]);
        // A write pushed by a sync is read through MCP at once.
        const pushed = await local.value.store.replace({ qname: "slot.count", body: ": Int = 5" });
        if (!pushed.ok) throw new Error(pushed.error.message);
      } finally {
        await local.value.close();
      }
      expect((await sync()).ok).toBe(true);
      let text = "";
      for (let i = 0; i < 100 && !text.includes("= 5"); i++) {
        text = (await call(reader, "kumiki_view", { selector: "slot.count" })).content[0]!.text;
        if (!text.includes("= 5")) await new Promise((r) => setTimeout(r, 20));
      }
      expect(text).toBe("slot count : Int = 5\n");
      // The read token: a read-only session (only the read tools, a write refused by kind).
      const tools = (await reader.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("kumiki_view");
      expect(tools).not.toContain("kumiki_add");
      const refused = await call(reader, "kumiki_add", { layer: "slot", name: "no", body: ": Int = 0" });
      expect(refused.isError).toBe(true);
      expect((refused.structuredContent as { error: { kind: string } }).error.kind).toBe("forbidden");
      // Refused before any session: no token, a token of another graph, an unknown token.
      for (const [token, status] of [
        [undefined, 401],
        [TOKENS.stranger, 403],
        ["nobody-token-0123456789abcdef", 403],
      ] as const) {
        const r = await initializeOver(
          endpoint,
          token === undefined ? {} : { authorization: `Bearer ${token}` },
        );
        expect(r.status, String(token)).toBe(status);
      }
      // The MCP requests are timed on /metrics by HTTP status: answered ones and refused ones.
      const metrics = await (await fetch(`${server.url.replace(/^ws/, "http")}/metrics`)).text();
      const count = (status: number) =>
        Number(
          new RegExp(`^kumiki_mcp_request_seconds_count\\{status="${status}"\\} (\\d+)$`, "m").exec(
            metrics,
          )?.[1],
        );
      expect(count(200)).toBeGreaterThanOrEqual(6);
      expect([count(401), count(403)]).toEqual([1, 2]);
      // Alice's token withdrawn (SIGHUP reads the file again): her session is ended, her next call refused.
      fs.writeFileSync(path.join(root, "tokens.json"), tokenFile(graph, false));
      server.child.kill("SIGHUP");
      let after: unknown;
      for (let i = 0; i < 100 && after === undefined; i++) {
        try {
          await call(alice, "kumiki_list", {});
          await new Promise((r) => setTimeout(r, 20));
        } catch (e) {
          after = e;
        }
      }
      expect(String(after)).toMatch(/403|404|not accepted|session/i);
    } finally {
      await alice.close().catch(() => undefined);
      await reader.close().catch(() => undefined);
      expect(await stopBin(server.child)).toBe(0);
    }
  }, 120_000);

  it("takes the MCP endpoints' limits and browser origins: --mcp-limit, --mcp-origin", async () => {
    const root = tempDir("serve-mcp-limits");
    dirs.push(root);
    const { ws, graph } = await seeded(root);
    // A bad limit stops the server before it listens, with the rule, exit 2.
    const bad = runBin(
      ["serve", "--port", "0", "--data", path.join(root, "server"), "--mcp-limit", "sessions=3"],
      {
        cwd: root,
        env: {},
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/unknown limit "sessions".*httpSessions/);
    const server = await startServe(root, [
      "--mcp-limit",
      "httpSessions=1",
      "--mcp-origin",
      "http://app.example",
    ]);
    try {
      expect((await syncWorkspace(ws, { url: server.url, token: TOKENS.alice, timeoutMs: 30_000 })).ok).toBe(
        true,
      );
      const endpoint = `${server.url.replace(/^ws/, "http")}/g/${graph}/mcp`;
      const auth = { authorization: `Bearer ${TOKENS.alice}` };
      const foreign = await initializeOver(endpoint, { ...auth, origin: "http://evil.example" });
      expect(foreign.status).toBe(403);
      const allowed = await initializeOver(endpoint, { ...auth, origin: "http://app.example" });
      expect(allowed.status).toBe(200);
      await allowed.body?.cancel();
      // One session is the limit: the next is refused until it ends.
      const second = await initializeOver(endpoint, auth);
      expect(second.status).toBe(503);
      expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(/httpSessions/);
    } finally {
      expect(await stopBin(server.child)).toBe(0);
    }
  }, 120_000);

  it.skipIf(!hasCorpus)(
    "checks every graph with the manifest --caps names, as the workspace with it beside does",
    async () => {
      const root = tempDir("serve-mcp-caps");
      dirs.push(root);
      const { ws, graph } = await seeded(root);
      const manifest = path.join(kumikiShared, "examples/features/kumiki.caps.json");
      fs.copyFileSync(manifest, path.join(ws, "kumiki.caps.json"));
      const env = { KUMIKI_AUTHOR: "agent:local" };
      expect(
        runBin(["import", path.join(kumikiShared, "examples/features/27-custom-capability.kumiki")], {
          cwd: ws,
          env,
        }).code,
      ).toBe(0);
      const local = JSON.parse(runBin(["check", "--json"], { cwd: ws, env }).out) as {
        ok: boolean;
        errors: number;
      };
      expect(local).toMatchObject({ ok: true, errors: 0 });
      const capsDir = path.join(root, "caps");
      fs.mkdirSync(capsDir);
      fs.copyFileSync(manifest, path.join(capsDir, "kumiki.caps.json"));
      // Two servers: one told the manifest, one not.
      const told = await startBin([
        "serve",
        "--port",
        "0",
        "--data",
        path.join(root, "told"),
        "--caps",
        capsDir,
      ]);
      const untold = await startBin(["serve", "--port", "0", "--data", path.join(root, "untold")]);
      children.push(told.child, untold.child);
      try {
        const checks: { ok: boolean; errors: number }[] = [];
        for (const server of [told, untold]) {
          expect((await syncWorkspace(ws, { url: server.url, timeoutMs: 30_000 })).ok).toBe(true);
          const client = await mcpClient(`${server.url.replace(/^ws/, "http")}/g/${graph}/mcp`);
          const r = await call(client, "kumiki_check", {});
          checks.push(r.structuredContent as { ok: boolean; errors: number });
          await client.close();
        }
        expect({ ok: checks[0]!.ok, errors: checks[0]!.errors }).toEqual({
          ok: local.ok,
          errors: local.errors,
        });
        // Without it, the custom capability is unknown there, as in a workspace without the file.
        expect(checks[1]!.ok).toBe(false);
      } finally {
        for (const s of [told, untold]) expect(await stopBin(s.child)).toBe(0);
      }
    },
    120_000,
  );
});
