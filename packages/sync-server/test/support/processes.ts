/**
 * Real processes for the sync-server tests: `kumiki serve` (and clients) as child processes of the
 * real bin, killed with the test; a workspace and a token file per test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cloneWorkspace } from "../../src/index.js";
import { must, newWorkspace, TOKENS, tempDir, tokenFileFor, withStore } from "../helpers.js";

// Real processes: the server (and one client) run as `kumiki` child processes from packages/cli/dist.
const BIN = fileURLToPath(new URL("../../../cli/bin/kumiki.js", import.meta.url));
/** Every child started, and every folder made: {@link cleanUp} after each test. */
const children: ChildProcess[] = [];
const dirs: string[] = [];

/** Kills what a test left running and removes its folders (call in afterEach). */
export function cleanUp(): void {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export interface Child {
  readonly proc: ChildProcess;
  /** Resolves with the first stdout/stderr text matching `re` (bounded). */
  waitFor(re: RegExp, ms?: number): Promise<string>;
  exited(): Promise<number | null>;
}

export function run(args: string[], cwd: string): Child {
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

/**
 * `kumiki serve` on `port` (0: any), its graphs in `root/server`, or in PostgreSQL at `storage`,
 * with `root/tokens.json`; resolves once it listens.
 */
export async function startServer(
  root: string,
  port: number,
  storage?: string,
  /** False: no `--token-file` (on PostgreSQL, the server serves the tokens stored there). */
  tokenFile = true,
): Promise<{ child: Child; url: string; port: number }> {
  const child = run(
    [
      "serve",
      "--port",
      String(port),
      ...(storage === undefined ? ["--data", path.join(root, "server")] : ["--storage", storage]),
      ...(tokenFile ? ["--token-file", path.join(root, "tokens.json")] : []),
    ],
    root,
  );
  const line = await child.waitFor(/listening on ws:\/\/127\.0\.0\.1:(\d+)/);
  const url = /ws:\/\/127\.0\.0\.1:\d+/.exec(line)![0];
  return { child, url, port: Number(url.split(":").at(-1)) };
}

export async function addMany(dir: string, author: string, prefix: string, n: number): Promise<void> {
  await withStore(dir, author, async (s) => {
    for (let i = 0; i < n; i++)
      must(await s.add({ layer: "slot", name: `${prefix}${i}`, body: `Int = ${i}` }));
  });
}

/** A folder for the test with workspace `a` (a new graph) and a token file for it. */
export async function setup(prefix: string) {
  const root = tempDir(prefix);
  dirs.push(root);
  const a = path.join(root, "a");
  const graph = await newWorkspace(a);
  fs.writeFileSync(path.join(root, "tokens.json"), tokenFileFor(graph));
  return { root, a, graph };
}

/** The ops a fresh clone of `graph` through the server at `url` holds (bob's token), made in `dir`. */
export async function opsOfFreshClone(url: string, graph: string, dir: string): Promise<number> {
  return must(await cloneWorkspace(`${url}/${graph}`, dir, { token: TOKENS.bob, timeoutMs: 30_000 })).ops;
}

/** Stops servers with SIGTERM and resolves to their exit codes (0: every graph flushed). */
export async function stopServers(
  ...servers: readonly { readonly child: Child }[]
): Promise<(number | null)[]> {
  for (const s of servers) s.child.proc.kill("SIGTERM");
  return Promise.all(servers.map((s) => s.child.exited()));
}
