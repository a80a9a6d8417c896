/**
 * Two `kumiki serve` on one PostgreSQL, six MCP agents over HTTP (three on each server, the SDK's
 * StreamableHTTPClientTransport) and two over stdio on a synced workspace, writing at once:
 * replaces of the same slots, adds of the same names, adds of their own. Every acknowledged write
 * is in the graph or was told lost to the session that made it (a notice, or its own answer), and
 * both servers and the workspace, read through MCP, show the same program. Also: reads see writes
 * acknowledged on the other server, a token withdrawn through one server, a server killed.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { syncWorkspace } from "@kumiki-graph/sync-server";
import {
  dropListenersOf,
  freshTable,
  POSTGRES_URL,
  skipWithoutPostgres,
  sql,
} from "@kumiki-graph/test-support/postgres";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, cleanup, initializeOver, startBin, stopBin, tempDir } from "./support.js";

const skip = await skipWithoutPostgres();

const TOKENS = { alice: "alice-token-0123456789abcdef", bob: "bob-token-0123456789abcdef" };

const dirs: string[] = [];
const children: ChildProcess[] = [];

type Served = { child: ChildProcess; url: string; output(): string };

async function startServe(root: string, storage: string): Promise<Served> {
  const started = await startBin([
    "serve",
    "--port",
    "0",
    "--storage",
    storage,
    "--token-file",
    path.join(root, "tokens.json"),
  ]);
  children.push(started.child);
  return started;
}

/** Stops `s` with SIGTERM and expects a clean exit; a failed one says what the server printed. */
async function expectStopped(s: Served): Promise<void> {
  const code = await stopBin(s.child);
  expect(code, `exit ${code}; the server printed, last:\n${s.output().slice(-3000)}`).toBe(0);
}

/**
 * A graph seeded with `program` (one add per definition), two `kumiki serve` on the test's
 * database (`storage`), a token file with a write token for each of `writers`, and the graph pushed through
 * the first server; the MCP endpoint of the graph on a server.
 */
async function twoServers(
  storage: string,
  prefix: string,
  program: readonly string[],
  writers: readonly (keyof typeof TOKENS)[],
) {
  const root = tempDir(prefix);
  dirs.push(root);
  const ws = path.join(root, "ws");
  const opened = await openWorkspaceStore(ws, { author: "agent:seed", create: true });
  if (!opened.ok) throw new Error(opened.error.message);
  const graph = opened.value.workspace.config.graph;
  const seeded = await opened.value.store.apply(program.map((source) => ({ op: "add" as const, source })));
  if (!seeded.ok) throw new Error(seeded.error.message);
  await opened.value.close();
  const tokens = writers.map((w) => ({ name: `agent:${w}`, token: TOKENS[w], graphs: { [graph]: "write" } }));
  fs.writeFileSync(path.join(root, "tokens.json"), JSON.stringify({ format: 1, tokens }));
  const one = await startServe(root, storage);
  const two = await startServe(root, storage);
  expect((await syncWorkspace(ws, { url: one.url, token: TOKENS.alice, timeoutMs: 30_000 })).ok).toBe(true);
  const endpoint = (s: { url: string }) => `${s.url.replace(/^ws/, "http")}/g/${graph}/mcp`;
  return { one, two, endpoint, ws, root, graph };
}

interface Agent {
  readonly client: Client;
  /** Op-ids of writes answered as done. */
  readonly acked: string[];
  /** Op-ids told lost: by a notice, in an answer's _meta, or by the answer itself. */
  readonly told: Set<string>;
  readonly uniques: string[];
}

async function agentOn(endpoint: string, token: string): Promise<Agent> {
  const client = new Client({ name: "pg-agent", version: "0" });
  const told = new Set<string>();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    for (const id of JSON.stringify(n.params.data).match(/op_[0-9A-Z]{26}/g) ?? []) told.add(id);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return { client, acked: [], told, uniques: [] };
}

/** An agent over stdio: `kumiki mcp serve --store ws`, its own process, writing as `author`. */
async function stdioAgentOn(ws: string, author: string): Promise<Agent> {
  const client = new Client({ name: "stdio-agent", version: "0" });
  const told = new Set<string>();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    for (const id of JSON.stringify(n.params.data).match(/op_[0-9A-Z]{26}/g) ?? []) told.add(id);
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", "--store", ws],
      env: { PATH: process.env.PATH ?? "", KUMIKI_AUTHOR: author, KUMIKI_DAEMON: "off" },
      stderr: "ignore",
    }),
  );
  return { client, acked: [], told, uniques: [] };
}

async function write(agent: Agent, name: string, args: Record<string, unknown>): Promise<void> {
  const r = (await agent.client.callTool({ name, arguments: args })) as unknown as {
    isError?: boolean;
    structuredContent?: { opIds?: string[]; error?: { kind: string } };
    _meta?: Record<string, unknown>;
  };
  for (const id of JSON.stringify(r._meta?.["kumiki-graph/losses"] ?? []).match(/op_[0-9A-Z]{26}/g) ?? [])
    agent.told.add(id);
  if (r.structuredContent?.error?.kind === "lost")
    for (const id of JSON.stringify(r.structuredContent).match(/op_[0-9A-Z]{26}/g) ?? []) agent.told.add(id);
  if (r.isError !== true) agent.acked.push(...(r.structuredContent?.opIds ?? []));
}

describe.skipIf(skip)("kumiki serve: MCP on two servers of one PostgreSQL", () => {
  let schema = "";
  let storage = "";
  beforeEach(async () => {
    schema = freshTable("kumiki_test_schema");
    await sql(`CREATE SCHEMA "${schema}"`);
    storage = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
    cleanup(...dirs.splice(0));
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it("six HTTP agents on two servers and two stdio agents on a synced workspace: every acknowledged write stands or was told lost, and all views agree", async () => {
    const { one, two, endpoint, ws } = await twoServers(
      storage,
      "serve-mcp-pg",
      Array.from({ length: 5 }, (_, i) => `slot s${i} : Int = 0`),
      ["alice", "bob"],
    );
    const ROUNDS = 6;
    const agents: Agent[] = [];
    for (let i = 0; i < 6; i++)
      agents.push(await agentOn(endpoint(i < 3 ? one : two), i < 3 ? TOKENS.alice : TOKENS.bob));
    // Two more on a workspace of the graph, each its own stdio process, kept in step with server
    // two by a sync after each round (as a `kumiki sync` loop would).
    for (const author of ["agent:carol", "agent:dave"]) agents.push(await stdioAgentOn(ws, author));
    const sync = async () => {
      const r = await syncWorkspace(ws, { url: two.url, token: TOKENS.bob, timeoutMs: 30_000 });
      expect(r.ok, JSON.stringify(r)).toBe(true);
    };
    try {
      // In lockstep: each round every agent replaces the same slot and adds the same name at once
      // (the three on one server queue on its store; the two servers race through the database),
      // then adds a name of its own.
      for (let r = 0; r < ROUNDS; r++) {
        await Promise.all(
          agents.map((a, i) =>
            write(a, "kumiki_replace", { qname: `slot.s${r % 5}`, body: `: Int = ${i * 100 + r}` }),
          ),
        );
        await Promise.all(
          agents.map((a, i) =>
            write(a, "kumiki_add", { layer: "slot", name: `same${r}`, body: `: Int = ${i}` }),
          ),
        );
        await Promise.all(
          agents.map(async (a, i) => {
            const unique = `u${i}x${r}`;
            await write(a, "kumiki_add", { layer: "slot", name: unique, body: `: Int = ${r}` });
            a.uniques.push(unique);
          }),
        );
        await sync();
      }
      // Settle: both servers take in each other's writes (the database's notices), sessions are told.
      const reader1 = await agentOn(endpoint(one), TOKENS.alice);
      const reader2 = await agentOn(endpoint(two), TOKENS.bob);
      const programOf = async (a: Agent) => {
        const r = (await a.client.callTool({
          name: "kumiki_view",
          arguments: { selector: "*" },
        })) as unknown as {
          content: { text: string }[];
        };
        return r.content[0]!.text;
      };
      let views: [string, string] = ["", "?"];
      for (let i = 0; i < 200 && views[0] !== views[1]; i++) {
        views = [await programOf(reader1), await programOf(reader2)];
        if (views[0] !== views[1]) await new Promise((r) => setTimeout(r, 50));
      }
      expect(views[0]).toBe(views[1]);
      // The workspace, synced once more, shows the same program to its stdio agents.
      await sync();
      const local = (await agents[6]!.client.callTool({
        name: "kumiki_view",
        arguments: { selector: "*" },
      })) as unknown as { content: { text: string }[] };
      expect(local.content[0]!.text).toBe(views[0]);
      await new Promise((r) => setTimeout(r, 1_000));
      // Every unique add stands on both servers.
      for (const a of agents) for (const u of a.uniques) expect(views[0]).toContain(`slot ${u} :`);
      // Every acknowledged op that did not take effect was told to its session.
      const statusOf = new Map<string, string>();
      for (const qname of [
        ...Array.from({ length: 5 }, (_, i) => `slot.s${i}`),
        "slot.same0",
        "slot.same1",
        "slot.same2",
      ]) {
        const h = (await reader1.client.callTool({
          name: "kumiki_history",
          arguments: { qname },
        })) as unknown as {
          structuredContent: { definitions?: { entries: { opId: string; status: string }[] }[] };
        };
        for (const hist of h.structuredContent.definitions ?? [])
          for (const e of hist.entries) statusOf.set(e.opId, e.status);
      }
      let acked = 0;
      let notApplied = 0;
      for (const a of agents)
        for (const id of a.acked) {
          acked++;
          const status = statusOf.get(id);
          if (status !== undefined && status !== "applied") {
            notApplied++;
            expect(a.told.has(id), `${id} is ${status} but its session was not told`).toBe(true);
          }
        }
      console.info(`${acked} acknowledged ops, ${notApplied} decided against and told to their sessions`);
      expect(acked).toBeGreaterThan(8 * 6);
      await reader1.client.close();
      await reader2.client.close();
    } finally {
      for (const a of agents) await a.client.close().catch(() => undefined);
      for (const s of [one, two]) await expectStopped(s);
    }
  }, 180_000);

  it("reads your writes across servers: a write acknowledged on one is seen by the next read on the other, every time", async () => {
    const { one, two, endpoint } = await twoServers(
      storage,
      "serve-mcp-pg-ryw",
      ["slot seed : Int = 0"],
      ["alice", "bob"],
    );
    const on = [await agentOn(endpoint(one), TOKENS.alice), await agentOn(endpoint(two), TOKENS.bob)];
    try {
      // No wait, no retry: the read begins once the write's answer is in, on the other server.
      const missed: string[] = [];
      for (let i = 0; i < 30; i++) {
        const [writer, reader] = i % 2 === 0 ? [on[0]!, on[1]!] : [on[1]!, on[0]!];
        await write(writer, "kumiki_add", { layer: "slot", name: `rw${i}`, body: `: Int = ${i}` });
        expect(writer.acked.length, `write ${i} answered`).toBe(Math.floor(i / 2) + 1);
        const read = (await reader.client.callTool({
          name: "kumiki_view",
          arguments: { selector: `slot.rw${i}` },
        })) as unknown as { isError?: boolean; content: { text: string }[] };
        if (read.isError === true || read.content[0]!.text !== `slot rw${i} : Int = ${i}\n`)
          missed.push(`rw${i}`);
        // Halfway, server 2's connection that hears the database's notices is dropped: the notices
        // of what server 1 writes meanwhile never reach it, yet its reads must see those writes.
        if (i === 14) expect(await dropListenersOf(two.child.pid!)).toBe(1);
      }
      expect(missed).toEqual([]);
    } finally {
      for (const a of on) await a.client.close().catch(() => undefined);
      for (const s of [one, two]) await expectStopped(s);
    }
  }, 120_000);

  it("a token withdrawn through one server ends its sessions on the other, and its next call is refused", async () => {
    const { one, two, endpoint, root, graph } = await twoServers(
      storage,
      "serve-mcp-pg-withdraw",
      ["slot n : Int = 0"],
      ["alice", "bob"],
    );
    const alice = await agentOn(endpoint(two), TOKENS.alice);
    const bob = await agentOn(endpoint(two), TOKENS.bob);
    try {
      await write(alice, "kumiki_add", { layer: "slot", name: "before", body: ": Int = 1" });
      expect(alice.acked).toHaveLength(1);
      // Alice's token taken out of the file, stored by server one (SIGHUP): the database tells server two.
      const tokens = [{ name: "agent:bob", token: TOKENS.bob, graphs: { [graph]: "write" } }];
      fs.writeFileSync(path.join(root, "tokens.json"), JSON.stringify({ format: 1, tokens }));
      one.child.kill("SIGHUP");
      let refused: unknown;
      for (let i = 0; i < 100 && refused === undefined; i++) {
        try {
          await alice.client.callTool({ name: "kumiki_list", arguments: {} }, undefined, { timeout: 5_000 });
          await new Promise((r) => setTimeout(r, 50));
        } catch (e) {
          refused = e;
        }
      }
      expect(String(refused)).toMatch(/not accepted|no such session/);
      // Her session is gone and a new one is refused; Bob's goes on.
      const again = await initializeOver(endpoint(two), { authorization: `Bearer ${TOKENS.alice}` });
      expect(again.status).toBe(403);
      await write(bob, "kumiki_add", { layer: "slot", name: "after", body: ": Int = 2" });
      expect(bob.acked).toHaveLength(1);
    } finally {
      for (const a of [alice, bob]) await a.client.close().catch(() => undefined);
      for (const s of [one, two]) await expectStopped(s);
    }
  }, 120_000);

  it("a server killed after it answered a keyed write: the retry through the other server is answered with the same receipt, nothing written twice", async () => {
    const { one, two, endpoint } = await twoServers(
      storage,
      "serve-mcp-pg-keys",
      ["slot count : Int = 0"],
      ["alice"],
    );
    const first = await agentOn(endpoint(one), TOKENS.alice);
    const KEYS = 5;
    const receipts: string[][] = [];
    for (let i = 0; i < KEYS; i++) {
      const r = (await first.client.callTool({
        name: "kumiki_add",
        arguments: { layer: "slot", name: `keyed${i}`, body: ": Int = 1", idempotency_key: `k-${i}` },
      })) as unknown as { isError?: boolean; structuredContent: { opIds: string[] } };
      expect(r.isError).toBe(false);
      receipts.push(r.structuredContent.opIds);
    }
    // The server dies at once, its answers given; the agent goes on through the other.
    one.child.kill("SIGKILL");
    await new Promise((r) => one.child.once("exit", r));
    await first.client.close().catch(() => undefined);
    const second = await agentOn(endpoint(two), TOKENS.alice);
    try {
      for (let i = 0; i < KEYS; i++) {
        const r = (await second.client.callTool({
          name: "kumiki_add",
          arguments: { layer: "slot", name: `keyed${i}`, body: ": Int = 1", idempotency_key: `k-${i}` },
        })) as unknown as { isError?: boolean; structuredContent: { opIds: string[]; replayed?: boolean } };
        expect(r.isError, JSON.stringify(r.structuredContent)).toBe(false);
        expect(r.structuredContent.opIds).toEqual(receipts[i]);
        expect(r.structuredContent.replayed).toBe(true);
      }
      // One of each, written once.
      const history = (await second.client.callTool({
        name: "kumiki_history",
        arguments: { qname: "slot.keyed0" },
      })) as unknown as {
        structuredContent: { definitions: { entries: unknown[] }[] };
      };
      expect(history.structuredContent.definitions.flatMap((d) => d.entries)).toHaveLength(1);
      // The same key with another request is refused, not written.
      const other = (await second.client.callTool({
        name: "kumiki_add",
        arguments: { layer: "slot", name: "other", body: ": Int = 1", idempotency_key: "k-0" },
      })) as unknown as { isError?: boolean; structuredContent: { error?: { code?: string } } };
      expect(other.structuredContent.error?.code).toBe("idempotency-key-reused");
    } finally {
      await second.client.close().catch(() => undefined);
      await expectStopped(two);
    }
  }, 180_000);

  it("a server SIGKILLed while three agents write through it: each goes on through the other with its keys, nothing acknowledged lost, nothing written twice", async () => {
    const { one, two, endpoint } = await twoServers(
      storage,
      "serve-mcp-pg-kill",
      ["slot count : Int = 0"],
      ["alice"],
    );
    const WRITES = 12;
    const acked = new Map<string, string[]>();
    let killed = false;
    const agents = await Promise.all([0, 1, 2].map(() => agentOn(endpoint(one), TOKENS.alice)));
    const work = agents.map(async (first, a) => {
      let agent = first;
      let moved = false;
      for (let i = 0; i < WRITES; i++) {
        const args = {
          layer: "slot",
          name: `a${a}w${i}`,
          body: `: Int = ${i}`,
          idempotency_key: `a${a}-${i}`,
        };
        // Bounded: the first server dies once; a write that fails there is retried through the other.
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            // A call to the dead server fails within 5 s (the SDK's default would wait 60 s).
            const r = (await agent.client.callTool({ name: "kumiki_add", arguments: args }, undefined, {
              timeout: 5_000,
            })) as unknown as {
              isError?: boolean;
              structuredContent: { opIds?: string[]; error?: { kind: string } };
            };
            if (r.isError === true) throw new Error(JSON.stringify(r.structuredContent));
            acked.set(args.name, r.structuredContent.opIds ?? []);
            break;
          } catch (e) {
            if (!killed || moved) throw e;
            moved = true;
            await agent.client.close().catch(() => undefined);
            agent = await agentOn(endpoint(two), TOKENS.alice);
          }
        }
        if (a === 0 && i === 4) {
          // Mid-run, while the other two are writing through it.
          killed = true;
          one.child.kill("SIGKILL");
        }
      }
      return agent;
    });
    const finals = await Promise.all(work);
    try {
      expect(acked.size).toBe(3 * WRITES);
      // Every acknowledged write is there, once, with the op-ids it was acknowledged with.
      const reader = finals[0]!;
      for (const [name, opIds] of acked) {
        const h = (await reader.client.callTool({
          name: "kumiki_history",
          arguments: { qname: `slot.${name}` },
        })) as unknown as {
          structuredContent: { definitions: { entries: { opId: string }[] }[] };
        };
        const entries = h.structuredContent.definitions.flatMap((d) => d.entries);
        expect(
          entries.map((e) => e.opId),
          name,
        ).toEqual(opIds);
      }
    } finally {
      for (const a of finals) await a.client.close().catch(() => undefined);
      await expectStopped(two);
    }
  }, 180_000);
});
