/**
 * The `kumiki` bin's first step: when a daemon of this build runs for the call's workspace, the call
 * runs there (its store is open, its graph folded and checked, its Automerge document loaded) and
 * this process only relays the call's output; otherwise the bin runs the call itself. Loads nothing
 * but Node's own modules and protocol.ts, so a call without a daemon costs one `stat`.
 */
import fs from "node:fs";
import net from "node:net";
import {
  buildId,
  type ClientMessage,
  type DaemonMessage,
  lineReader,
  socketDirIsOwn,
  socketPath,
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
 */
export async function runThroughDaemon(io: ClientIo): Promise<number | undefined> {
  if (io.env.KUMIKI_DAEMON === "off") return undefined;
  const root = workspaceRootOf(io.argv, io.cwd);
  if (root === undefined) return undefined;
  const sock = socketPath(root);
  if (!fs.existsSync(sock) || !socketDirIsOwn(sock)) return undefined;
  return new Promise<number | undefined>((resolve) => {
    let accepted = false;
    let done = false;
    const finish = (code: number | undefined) => {
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
            finish(undefined);
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
        finish(undefined);
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
