/** Helpers of the CLI tests: in-process runs with captured streams, temporary workspaces, the real bin. */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type CliIo, main } from "../src/main.js";

/** The committed launcher (runs bundle/: build with `npm run build` first). */
export const BIN = fileURLToPath(new URL("../bin/kumiki.js", import.meta.url));

/** What one invocation printed and returned. */
export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** A temporary directory, removed by {@link cleanup}. */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `kumiki-cli-${prefix}-`));
}

export function cleanup(...dirs: string[]): void {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/**
 * The environment of a test run: a fixed author, and every call in its own process (a test that
 * kills the bin mid-write must kill the write; daemon.property.e2e.test turns the daemon on where it is the
 * subject). (`_scratch` was the CLI's own read cache, which is gone: reads are served from the
 * workspace's op-log.jsonl. Kept so that callers' temporary folders stay where they are.)
 */
export function testEnv(_scratch: string, extra: Record<string, string> = {}): Record<string, string> {
  return { KUMIKI_AUTHOR: "user:tester", KUMIKI_DAEMON: "off", ...extra };
}

/** Runs `main` in-process. */
export async function run(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string },
): Promise<Run> {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    stdin: async () => options.stdin ?? "",
    env: options.env,
    cwd: options.cwd,
  };
  const code = await main(argv, io);
  return { code, out, err };
}

/** Runs the real binary. */
export function runBin(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string },
): Run {
  const r = spawnSync(process.execPath, [BIN, ...argv], {
    cwd: options.cwd,
    // In its own process unless the test says otherwise (see testEnv).
    env: { PATH: process.env.PATH ?? "", KUMIKI_DAEMON: "off", ...options.env },
    input: options.stdin ?? "",
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** A small complete program: a slot two tiles and a reducer use, and a standalone slot. */
export const SMALL_PROGRAM = `type   N      = nominal Int where between(0, 999)
slot   count  : N    = 0
slot   draft  : Text = ""

reducer inc   on=ui.click(IncBtn)   do= if count < 999 then count := count + 1
reducer clear on=ui.click(ClearBtn) do= draft := ""

tile   IncBtn   = button(text="+")
tile   ClearBtn = button(text="clear")
tile   Field    = input(bind=draft)
tile   App = column(heading("Count: " + count), row(IncBtn, ClearBtn, Field))

app    Counter
    caps   = []
    routes = {"/" -> App, "/404" -> App}
    init   = []
`;

/**
 * The real bin running a long verb (`serve …`) as a child process, resolved once its output
 * matches `listening` (its first capture group is the answer), within 20 s.
 */
export async function startBin(
  args: readonly string[],
  listening: RegExp = /listening on (ws:\/\/\S+)/,
  env: Readonly<Record<string, string>> = {},
): Promise<{ child: ChildProcess; url: string; output(): string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${listening} within 20 s: ${out}`)), 20_000);
    const take = (b: Buffer) => {
      out += b.toString("utf8");
      const m = listening.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    child.once("exit", (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
  });
  // What it printed, up to now (its output is still taken after it listens: what a failed stop says).
  return { child, url, output: () => out };
}

/** Every file under `dir` with its bytes (locks, temp files and a disk filler aside): what "changes no byte" compares. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!/[/\\]\.(lock|tmp)|\.filler$/.test(p))
        out.set(path.relative(dir, p), readFileSync(p).toString("base64"));
    }
  };
  walk(dir);
  return out;
}

/** A raw MCP initialize request over Streamable HTTP to `endpoint` (refusals are checked on it). */
export function initializeOver(endpoint: string, headers: Record<string, string>): Promise<Response> {
  return fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "0" } },
    }),
  });
}

/**
 * `kumiki serve` on a free port with `root/server` as its data and `root/tokens.json` as its token
 * file (plus `extra` flags); resolves once it listens.
 */
export function startServe(
  root: string,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  return startBin([
    "serve",
    "--port",
    "0",
    "--data",
    path.join(root, "server"),
    "--token-file",
    path.join(root, "tokens.json"),
    ...extra,
  ]);
}

/** SIGTERM to a bin started with {@link startBin}; resolves with its exit code. */
export function stopBin(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  return exited;
}
