import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { CLOSE_FORBIDDEN, cloneWorkspace, syncWorkspace } from "../src/index.js";
import { must, TOKENS } from "./helpers.js";
import {
  addMany,
  cleanUp,
  opsOfFreshClone,
  run,
  setup,
  startServer,
  stopServers,
} from "./support/processes.js";

afterEach(cleanUp);

describe("real processes", () => {
  it("SIGHUP reads the token file again: a token taken out of it is closed and refused, without a restart", async () => {
    const { root, a, graph } = await setup("hup");
    const server = await startServer(root, 0);
    // bob holds a connection open (a raw WebSocket, as any client's).
    const bob = new WebSocket(server.url, { headers: { authorization: `Bearer ${TOKENS.bob}` } });
    const bobClosed = new Promise<number>((resolve) => bob.once("close", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      bob.once("open", () => resolve());
      bob.once("error", reject);
    });
    const file = JSON.parse(fs.readFileSync(path.join(root, "tokens.json"), "utf8")) as {
      tokens: { name: string }[];
    };
    file.tokens = file.tokens.filter((t) => t.name !== "bob");
    fs.writeFileSync(path.join(root, "tokens.json"), JSON.stringify(file));
    server.child.proc.kill("SIGHUP");
    await server.child.waitFor(/SIGHUP: 4 tokens from .* in use/);
    expect(await bobClosed).toBe(CLOSE_FORBIDDEN);
    const refused = await cloneWorkspace(`${server.url}/${graph}`, path.join(root, "bob"), {
      token: TOKENS.bob,
      timeoutMs: 10_000,
    });
    expect(refused.ok ? "" : refused.error.code).toBe("forbidden");
    // A file that does not parse leaves the tokens as they were: alice still syncs.
    fs.writeFileSync(path.join(root, "tokens.json"), "{ not json");
    server.child.proc.kill("SIGHUP");
    await server.child.waitFor(/SIGHUP: tokens unchanged: .*not valid JSON/);
    must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 }));
    expect(await stopServers(server)).toEqual([0]);
  });

  it("a server killed (SIGKILL) and restarted mid-sync loses no op", async () => {
    const { root, a, graph } = await setup("kill");
    await addMany(a, "agent:a", "s", 400);
    let server = await startServer(root, 0);
    const sync = syncWorkspace(a, {
      url: server.url,
      token: TOKENS.alice,
      author: "agent:a",
      timeoutMs: 60_000,
    });
    await server.child.waitFor(/connected: /);
    server.child.proc.kill("SIGKILL");
    await server.child.exited();
    server = await startServer(root, server.port);
    const report = must(await sync);
    expect(report.ops).toBe(400);
    // Another restart, then a fresh clone: everything the sync reported is on the server's disk.
    expect(await stopServers(server)).toEqual([0]);
    server = await startServer(root, server.port);
    expect(await opsOfFreshClone(server.url, graph, path.join(root, "c"))).toBe(400);
    await stopServers(server);
  });

  it("a client killed mid-push completes on its next sync", async () => {
    const { root, a, graph } = await setup("client");
    const server = await startServer(root, 0);
    await addMany(a, "agent:a", "t", 300);
    fs.writeFileSync(path.join(root, "alice.token"), TOKENS.alice);
    must(
      await runCli(
        ["remote", "add", "origin", server.url, "--token-file", path.join(root, "alice.token")],
        a,
      ),
    );
    const client = run(["sync"], a);
    await server.child.waitFor(/connected: /);
    client.proc.kill("SIGKILL");
    await client.exited();
    const again = run(["sync", "--json"], a);
    expect(await again.exited()).toBe(0);
    expect(await opsOfFreshClone(server.url, graph, path.join(root, "c"))).toBe(300);
    expect(await stopServers(server)).toEqual([0]);
  });

  it("kumiki sync with a remote whose first server is down carries on through the next one recorded", async () => {
    const { root, a, graph } = await setup("failover-cli");
    const server = await startServer(root, 0);
    await addMany(a, "agent:a", "v", 20);
    fs.writeFileSync(path.join(root, "alice.token"), TOKENS.alice);
    // A port nothing listens on: the server that died.
    const dead = "ws://127.0.0.1:9";
    must(
      await runCli(
        ["remote", "add", "origin", dead, server.url, "--token-file", path.join(root, "alice.token")],
        a,
      ),
    );
    const listed = run(["remote", "list"], a);
    expect(await listed.exited()).toBe(0);
    expect(await listed.waitFor(/then ws:\/\/127\.0\.0\.1:\d+/)).toContain(server.url);
    const synced = run(["sync", "--json"], a);
    expect(await synced.exited()).toBe(0);
    expect(await synced.waitFor(/"server":"[^"]+"/)).toBe(`"server":"${server.url}"`);
    expect(await opsOfFreshClone(server.url, graph, path.join(root, "c"))).toBe(20);
    expect(await stopServers(server)).toEqual([0]);
  });

  it("a reconnecting client receives only what it lacks (sync state is kept)", async () => {
    const { root, a, graph } = await setup("state");
    const server = await startServer(root, 0);
    await addMany(a, "agent:a", "u", 300);
    must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 30_000 }));
    const b = path.join(root, "b");
    const cloned = must(
      await cloneWorkspace(`${server.url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 30_000 }),
    );
    await addMany(a, "agent:a", "v", 1);
    must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 30_000 }));
    const pulled = must(await syncWorkspace(b, { url: server.url, token: TOKENS.bob, timeoutMs: 30_000 }));
    expect(pulled.received).toBe(1);
    expect(pulled.bytesReceived * 5).toBeLessThan(cloned.bytesReceived);
    // The kept state is on disk, keyed by the server's storage id.
    expect(syncStateFiles(path.join(b, ".kumiki", "automerge")).length).toBeGreaterThan(0);
    expect(await stopServers(server)).toEqual([0]);
  });
});

async function runCli(
  args: string[],
  cwd: string,
): Promise<{ ok: true; value: number } | { ok: false; error: { code: string; message: string } }> {
  const c = run(args, cwd);
  const code = await c.exited();
  return code === 0
    ? { ok: true, value: 0 }
    : { ok: false, error: { code: String(code), message: args.join(" ") } };
}

function syncStateFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.includes(`${path.sep}sync-state${path.sep}`)) out.push(p);
    }
  };
  walk(dir);
  return out;
}
