/**
 * The `kumiki` bin's first step: when a daemon of this build runs for the call's workspace, the call
 * runs there (its store is open, its graph folded and checked, its Automerge document loaded) and
 * this process only relays the call's output; otherwise the bin runs the call itself (and starts a
 * daemon for the calls after it, unless `KUMIKI_DAEMON=off`). Loads nothing but Node's own modules
 * and protocol.ts, so a call that finds no daemon costs a `stat` and a spawn.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildId,
  type ClientMessage,
  type DaemonMessage,
  declineReason,
  lineReader,
  logPath,
  socketDirIsOwn,
  socketPath,
  startingPath,
  stopDaemon,
  workspaceRootOf,
} from "./protocol.js";

/** How the client reaches the process around it (the real one in the bin; tests pass their own). */
export interface ClientIo {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTTY: boolean;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stdin: () => Promise<string>;
  /** The bundle entry whose hash is the build id. */
  readonly entry: URL;
}

/** How long a call waits for a daemon to take it before running itself, unless `KUMIKI_DAEMON_WAIT` says. */
export const DEFAULT_WAIT_MS = 50;

/**
 * What `KUMIKI_DAEMON` asks for: `off` runs every call in its own process; `manual` runs calls
 * through a daemon `kumiki daemon start` started and starts none; unset, `on` or `auto` (the
 * default) runs calls through the workspace's daemon and starts one when there is none.
 */
export function daemonMode(env: ClientIo["env"]): { mode: "on" | "manual" | "off" } | { error: string } {
  const v = (env.KUMIKI_DAEMON ?? "").trim().toLowerCase();
  if (v === "off" || v === "0" || v === "false" || v === "no") return { mode: "off" };
  if (v === "manual") return { mode: "manual" };
  if (v === "" || v === "on" || v === "auto" || v === "1" || v === "true" || v === "yes")
    return { mode: "on" };
  return {
    error: `KUMIKI_DAEMON=${JSON.stringify(env.KUMIKI_DAEMON).slice(0, 60)} is not a setting: give off (every call in its own process), manual (only a daemon \`kumiki daemon start\` started) or on (the default: calls run in the workspace's daemon, started by the first call)`,
  };
}

/** Milliseconds a call waits for the daemon to take it (`KUMIKI_DAEMON_WAIT`, else 50). */
function waitMs(env: ClientIo["env"]): number {
  const n = Number(env.KUMIKI_DAEMON_WAIT);
  return env.KUMIKI_DAEMON_WAIT !== undefined && Number.isFinite(n) && n > 0 ? n : DEFAULT_WAIT_MS;
}

/**
 * Runs the call through the workspace's daemon and resolves to its exit code, or to undefined when
 * no daemon took it (none running, another build, a verb it does not run, `KUMIKI_DAEMON=off`, a
 * daemon that did not take it within 50 ms: stopped, hung or busy): then the caller runs it
 * itself. Nothing has been printed when it resolves to undefined, and a call the daemon did not
 * take is never run there (it runs only once this side confirms).
 *
 * A call a daemon would run that finds none (or one of another build, which is asked to stop, or
 * one that did not answer) starts one in the background for the workspace, as `kumiki daemon
 * start` does, and runs itself; the calls after it run in the daemon. `KUMIKI_DAEMON=off` turns
 * all of this off.
 */
export async function runThroughDaemon(io: ClientIo): Promise<number | undefined> {
  const mode = daemonMode(io.env);
  if ("error" in mode) {
    io.stderr(`kumiki: ${mode.error}\n`);
    return 2;
  }
  // The daemon listens on a Unix socket: POSIX only (elsewhere every call runs in its own process).
  if (mode.mode === "off" || process.platform === "win32") return undefined;
  const root = workspaceRootOf(io.argv, io.cwd);
  if (root === undefined) return undefined;
  const sock = socketPath(root);
  const start = mode.mode === "on" && declineReason(io.argv) === undefined;
  if (!fs.existsSync(sock)) {
    if (start) startInBackground(root, sock, io);
    return undefined;
  }
  if (!socketDirIsOwn(sock)) return undefined;
  const code = await relay(sock, io, waitMs(io.env));
  if (code === "absent" || code === "build") {
    if (start) {
      if (code === "build") await stopDaemon(sock);
      startInBackground(root, sock, io);
    }
    return undefined;
  }
  return code === "declined" ? undefined : code;
}

/** Starts `kumiki daemon run` for `root`, detached, its output in the log beside the socket. */
function startInBackground(root: string, sock: string, io: ClientIo): void {
  try {
    fs.mkdirSync(path.dirname(sock), { recursive: true, mode: 0o700 });
    if (!socketDirIsOwn(sock)) return;
    // Agents that start at once would each start a daemon (all but one then exit): the first call
    // marks the start, and the others leave it to that one for a while.
    if (!claimStart(sock)) return;
    const out = fs.openSync(logPath(sock), "a");
    spawn(
      process.execPath,
      [fileURLToPath(new URL("../bin/kumiki.js", io.entry)), "--store", root, "daemon", "run"],
      {
        detached: true,
        stdio: ["ignore", out, out],
        env: { ...io.env, KUMIKI_DAEMON: "off" },
      },
    ).unref();
    fs.closeSync(out);
  } catch {
    // Starting a daemon is an optimisation: the call runs here either way.
  }
}

/** How long a start claimed by one call keeps the others from starting a daemon too, ms. */
const START_CLAIM_MS = 10_000;

/**
 * True when this call may start the daemon: it made the start marker beside the socket, or the one
 * there is older than {@link START_CLAIM_MS} (its daemon never came up). The daemon removes it once
 * it listens.
 */
function claimStart(sock: string): boolean {
  const marker = startingPath(sock);
  try {
    fs.writeFileSync(marker, String(process.pid), { flag: "wx", mode: 0o600 });
    return true;
  } catch {
    try {
      if (Date.now() - fs.statSync(marker).mtimeMs < START_CLAIM_MS) return false;
      fs.writeFileSync(marker, String(process.pid), { mode: 0o600 });
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * The call through the daemon on `sock`: its exit code; "absent" when nothing answers (a socket
 * left by a daemon that died); "build" or "declined" when the daemon declined it.
 */
function relay(sock: string, io: ClientIo, wait: number): Promise<number | "absent" | "build" | "declined"> {
  return new Promise((resolve) => {
    let accepted = false;
    let done = false;
    const finish = (code: number | "absent" | "build" | "declined") => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(code);
    };
    // A daemon that is stopped (SIGSTOP), hung or too busy to take the call at once: run it here.
    // The daemon runs a call only once this side confirms it ("go"), so one not confirmed in time
    // can never run twice.
    const timer = setTimeout(() => {
      if (!accepted) finish("absent");
    }, wait);
    const socket = net.createConnection(sock);
    const send = (m: ClientMessage) => socket.write(`${JSON.stringify(m)}\n`);
    socket.on("connect", () => {
      send({
        kind: "run",
        argv: io.argv,
        cwd: io.cwd,
        env: io.env,
        isTTY: io.isTTY,
        build: buildId(io.entry),
      });
    });
    socket.on(
      "data",
      lineReader<DaemonMessage>((m) => {
        switch (m.kind) {
          case "accepted":
            if (done) return;
            accepted = true;
            clearTimeout(timer);
            send({ kind: "go" });
            return;
          case "declined":
            finish(m.code === "build" ? "build" : "declined");
            return;
          case "out":
            (m.stream === "stdout" ? io.stdout : io.stderr)(m.text);
            return;
          case "stdin":
            void io.stdin().then(
              (text) => send({ kind: "stdin", text }),
              () => send({ kind: "stdin", text: "" }),
            );
            return;
          case "exit":
            finish(m.code);
            return;
          default:
            return;
        }
      }),
    );
    // A socket left by a daemon that died, or refused: run the call here. A daemon lost after it
    // took the call: the call may or may not have taken effect, and only the graph can tell.
    const lost = () => {
      if (done) return;
      if (!accepted) {
        finish("absent");
        return;
      }
      io.stderr(
        `kumiki: the workspace's daemon (${sock}) stopped while running this call; a write may or may not have taken effect: run \`kumiki status\` or \`kumiki view\` to see the graph as it is now (KUMIKI_DAEMON=off runs calls without the daemon)\n`,
      );
      finish(1);
    };
    socket.on("error", lost);
    socket.on("close", lost);
  });
}
