import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cloneWorkspace, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, TOKENS, tempDir, tokenFileFor, withStore } from "./helpers.js";

// Real processes: the server (and one client) run as `kumiki` child processes from packages/cli/dist.
const BIN = fileURLToPath(new URL("../../cli/bin/kumiki.js", import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

interface Child {
  readonly proc: ChildProcess;
  /** Resolves with the first stdout/stderr text matching `re` (bounded). */
  waitFor(re: RegExp, ms?: number): Promise<string>;
  exited(): Promise<number | null>;
}

function run(args: string[], cwd: string): Child {
  const proc = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  children.push(proc);
  let out = "";
  const waiters: (() => void)[] = [];
  const take = (b: Buffer) => {
    out += b.toString("utf8");
    for (const w of waiters.splice(0)) w();
  };
  proc.stdout!.on("data", take);
  proc.stderr!.on("data", take);
  const exit = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return {
    proc,
    exited: () => exit,
    waitFor(re, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} within ${ms} ms; output:\n${out}`)), ms);
        const check = () => {
          const m = re.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[0]);
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

async function startServer(root: string, port: number): Promise<{ child: Child; url: string; port: number }> {
  const child = run(
    [
      "serve",
      "--port",
      String(port),
      "--data",
      path.join(root, "server"),
      "--token-file",
      path.join(root, "tokens.json"),
    ],
    root,
  );
  const line = await child.waitFor(/listening on ws:\/\/127\.0\.0\.1:(\d+)/);
  const url = /ws:\/\/127\.0\.0\.1:\d+/.exec(line)![0];
  return { child, url, port: Number(url.split(":").at(-1)) };
}

async function addMany(dir: string, author: string, prefix: string, n: number): Promise<void> {
  await withStore(dir, author, async (s) => {
    for (let i = 0; i < n; i++)
      must(await s.add({ layer: "slot", name: `${prefix}${i}`, body: `Int = ${i}` }));
  });
}

async function setup(prefix: string) {
  const root = tempDir(prefix);
  dirs.push(root);
  const a = path.join(root, "a");
  const graph = await newWorkspace(a);
  fs.writeFileSync(path.join(root, "tokens.json"), tokenFileFor(graph));
  return { root, a, graph };
}

describe("real processes", () => {
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
    server.child.proc.kill("SIGTERM");
    expect(await server.child.exited()).toBe(0);
    server = await startServer(root, server.port);
    const c = must(
      await cloneWorkspace(`${server.url}/${graph}`, path.join(root, "c"), {
        token: TOKENS.bob,
        timeoutMs: 30_000,
      }),
    );
    expect(c.ops).toBe(400);
    server.child.proc.kill("SIGTERM");
    await server.child.exited();
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
    const c = must(
      await cloneWorkspace(`${server.url}/${graph}`, path.join(root, "c"), {
        token: TOKENS.bob,
        timeoutMs: 30_000,
      }),
    );
    expect(c.ops).toBe(300);
    server.child.proc.kill("SIGTERM");
    expect(await server.child.exited()).toBe(0);
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
    server.child.proc.kill("SIGTERM");
    expect(await server.child.exited()).toBe(0);
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
