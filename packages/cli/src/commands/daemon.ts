/**
 * `kumiki daemon start|stop|status|run`: a process that keeps a workspace's store open so that
 * every `kumiki` call on it costs little more than Node's start-up (docs/cli.md, "The daemon").
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stringOption } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import {
  answers,
  buildId,
  type DaemonInfo,
  daemonInfo,
  logPath,
  socketPath,
  stopDaemon,
  workspaceRootOf,
} from "../daemon/protocol.js";
import { runDaemon } from "../daemon/server.js";
import { failure, usageError } from "../errors.js";

/** Exit after 15 minutes without a call, unless `--idle` says otherwise. */
const DEFAULT_IDLE_MINUTES = 15;

/** The bin (`bin/kumiki.js`) of this CLI, found above this file (dist/commands/ or bundle/). */
function cliFiles(): { bin: string; entry: URL } {
  for (let d = path.dirname(fileURLToPath(import.meta.url)); ; d = path.dirname(d)) {
    const bin = path.join(d, "bin", "kumiki.js");
    if (fs.existsSync(bin)) return { bin, entry: new URL(`file://${path.join(d, "bundle", "main.js")}`) };
    if (path.dirname(d) === d) throw new Error("daemon: bin/kumiki.js not found above the CLI's own files");
  }
}

function rootOf(ctx: CommandContext): string {
  if (process.platform === "win32")
    throw failure(
      "daemon-unsupported",
      "the daemon listens on a Unix socket and runs on Linux and macOS only; on Windows every call runs in its own process",
    );
  const root = workspaceRootOf(ctx.storeDir === undefined ? [] : ["--store", ctx.storeDir], ctx.io.cwd);
  if (root === undefined)
    throw failure(
      "no-workspace",
      `no workspace at or above ${ctx.storeDir ?? ctx.io.cwd}: kumiki init makes one`,
      { from: ctx.storeDir ?? ctx.io.cwd },
    );
  return root;
}

function idleMs(ctx: CommandContext): number {
  const text = stringOption(ctx.options, "idle") ?? String(DEFAULT_IDLE_MINUTES);
  const minutes = Number(text);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    throw usageError(`--idle ${text}: give minutes, more than 0 and at most 1440 (e.g. --idle 30)`);
  return Math.round(minutes * 60_000);
}

function infoText(i: DaemonInfo, current: string): string {
  const build =
    i.build === current
      ? "this build"
      : `another build (${i.build}): calls run without it; kumiki daemon start replaces it`;
  return `daemon pid ${i.pid} serves ${i.root}: ${i.calls} calls since ${i.started}, CPU ${i.cpuMs} ms, RSS ${Math.round(i.rss / 2 ** 20)} MB, ${i.stores} open stores, ${build}; exits after ${Math.round(i.idleMs / 60_000)} min without a call`;
}

const idleOption = {
  idle: {
    type: "string",
    value: "MIN",
    description: `exit after MIN minutes without a call (default ${DEFAULT_IDLE_MINUTES})`,
  },
} as const;

/** `kumiki daemon start`: starts the workspace's daemon in the background (replacing one of another build). */
export const daemonStart: Command = {
  name: "daemon start",
  summary: "keep this workspace's store open in a background process: every later call runs there, fast",
  usage: ["daemon start [--idle MIN]"],
  examples: ["kumiki daemon start", "kumiki daemon start --idle 60 && kumiki view slot.todos"],
  options: idleOption,
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const root = rootOf(ctx);
    const sock = socketPath(root);
    const { bin, entry } = cliFiles();
    const build = buildId(entry);
    const idle = idleMs(ctx);
    const running = await daemonInfo(sock);
    if (running !== undefined && running.build === build)
      return { json: { launched: false, ...running }, text: `already running: ${infoText(running, build)}` };
    if (running !== undefined) await stopDaemon(sock);
    await waitFor(async () => !(await answers(sock)), 10_000);
    const log = logPath(sock);
    fs.mkdirSync(path.dirname(sock), { recursive: true, mode: 0o700 });
    const out = fs.openSync(log, "a");
    const child = spawn(
      process.execPath,
      [bin, "--store", root, "daemon", "run", "--idle", String(idle / 60_000)],
      { detached: true, stdio: ["ignore", out, out], env: { ...ctx.io.env, KUMIKI_DAEMON: "off" } },
    );
    child.unref();
    fs.closeSync(out);
    const up = await waitFor(() => answers(sock), 10_000);
    const info = up ? await daemonInfo(sock) : undefined;
    if (info === undefined)
      throw failure("daemon-not-started", `the daemon did not start within 10 s; its log is ${log}`, { log });
    return { json: { launched: true, ...info }, text: `started: ${infoText(info, build)}` };
  },
};

/** `kumiki daemon stop`: stops the workspace's daemon, closing its stores. */
export const daemonStop: Command = {
  name: "daemon stop",
  summary: "stop this workspace's daemon (calls then run in their own process again)",
  usage: ["daemon stop"],
  examples: ["kumiki daemon stop"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const sock = socketPath(rootOf(ctx));
    const stopped = await stopDaemon(sock);
    if (stopped) await waitFor(async () => !fs.existsSync(sock), 10_000);
    else fs.rmSync(sock, { force: true });
    return {
      json: { stopped },
      text: stopped ? "stopped" : "no daemon was running for this workspace",
    };
  },
};

/** `kumiki daemon status`: whether the workspace's daemon runs, and what it has done. */
export const daemonStatus: Command = {
  name: "daemon status",
  summary: "say whether this workspace's daemon runs, its calls, CPU and memory",
  usage: ["daemon status"],
  examples: ["kumiki daemon status", "kumiki daemon status --json | jq .cpuMs"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const info = await daemonInfo(socketPath(rootOf(ctx)));
    const build = buildId(cliFiles().entry);
    if (info === undefined)
      return { json: { running: false }, text: "no daemon runs for this workspace (kumiki daemon start)" };
    return { json: { running: true, current: info.build === build, ...info }, text: infoText(info, build) };
  },
};

/** `kumiki daemon run`: the daemon itself, in the foreground (what `daemon start` runs). */
export const daemonRun: Command = {
  name: "daemon run",
  summary: "run this workspace's daemon in the foreground until stopped or idle",
  usage: ["daemon run [--idle MIN]"],
  examples: ["kumiki daemon run --idle 5"],
  options: idleOption,
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const root = rootOf(ctx);
    await runDaemon({
      root,
      build: buildId(cliFiles().entry),
      idleMs: idleMs(ctx),
      onListening: (sock) =>
        ctx.io.stdout(`kumiki daemon: serving ${root} on ${sock} (pid ${process.pid})\n`),
    }).catch((e: Error) => {
      throw failure("daemon-failed", e.message);
    });
    return { json: { stopped: true }, text: "kumiki daemon: stopped" };
  },
};

/** Polls `ok` every 25 ms until it holds or `ms` passed; true when it held. */
async function waitFor(ok: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await ok()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return ok();
}
