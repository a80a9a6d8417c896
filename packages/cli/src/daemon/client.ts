/**
 * The `kumiki` bin's first step: when a daemon of this build runs for the call's workspace, the call
 * runs there (its store is open, its graph folded and checked, its Automerge document loaded) and
 * this process only relays the call's output; otherwise the bin runs the call itself. Loads nothing
 * but Node's own modules and protocol.ts, so a call without a daemon costs one `stat`.
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

/**
 * Runs the call through the workspace's daemon and resolves to its exit code, or to undefined when
 * no daemon took it (none running, another build, a verb it does not run, `KUMIKI_DAEMON=off`):
 * then the caller runs it itself. Nothing has been printed when it resolves to undefined.
 *
 * With `KUMIKI_DAEMON=auto`, a call a daemon would run that finds none (or one of another build,
 * which is asked to stop) starts one in the background for the workspace, as `kumiki daemon start`
 * does, and runs itself; the calls after it run in the daemon.
 */
export async function runThroughDaemon(io: ClientIo): Promise<number | undefined> {
  // The daemon listens on a Unix socket: POSIX only (elsewhere every call runs in its own process).
  if (io.env.KUMIKI_DAEMON === "off" || process.platform === "win32") return undefined;
  const root = workspaceRootOf(io.argv, io.cwd);
  if (root === undefined) return undefined;
  const sock = socketPath(root);
  const auto = io.env.KUMIKI_DAEMON === "auto" && declineReason(io.argv) === undefined;
  if (!fs.existsSync(sock)) {
    if (auto) startInBackground(root, sock, io);
    return undefined;
  }
  if (!socketDirIsOwn(sock)) return undefined;
  const code = await relay(sock, io);
  if (code === "absent" || code === "build") {
    if (auto) {
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

/**
 * The call through the daemon on `sock`: its exit code; "absent" when nothing answers (a socket
 * left by a daemon that died); "build" or "declined" when the daemon declined it.
 */
function relay(sock: string, io: ClientIo): Promise<number | "absent" | "build" | "declined"> {
  return new Promise((resolve) => {
    let accepted = false;
    let done = false;
    const finish = (code: number | "absent" | "build" | "declined") => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(code);
    };
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
            accepted = true;
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
