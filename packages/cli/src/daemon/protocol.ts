/**
 * The CLI daemon's wire: where a workspace's daemon listens and the messages on its socket. Both
 * sides import this file and nothing heavier (the client runs before any of the CLI is loaded).
 *
 * One connection carries one `kumiki` call: the client sends `run`; the daemon answers `accepted`
 * (or `declined`, and the client runs the call itself); the client confirms with `go` (a client
 * that waited too long for `accepted` hangs up instead and runs the call itself, so a call runs in
 * one place only); then the daemon sends `out` for what the call prints, `stdin` when the call reads
 * standard input (the client answers with `stdin`), and `exit` last.
 * Messages are JSON, one per line.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";

/**
 * The verbs a daemon runs: the ones that work on one workspace's graph and end. Everything else
 * (init, repair, clone, sync, the servers, the daemon's own verbs, `fix --interactive`) runs in the
 * bin's own process.
 */
const DAEMON_VERBS = new Set([
  "status",
  "view",
  "list",
  "refs",
  "add",
  "replace",
  "edit",
  "rename",
  "remove",
  "patch",
  "undo",
  "check",
  "fix",
  "lock",
  "unlock",
  "locks",
  "config",
  "conflicts",
  "import",
  "export",
]);

/** Why the daemon will not run `argv`, or undefined when it will. */
export function declineReason(argv: readonly string[]): string | undefined {
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith("--")) {
    const a = argv[i]!;
    i += (a === "--store" || a === "--author" || a === "--task") && !a.includes("=") ? 2 : 1;
  }
  const verb = argv[i];
  if (verb === undefined || !DAEMON_VERBS.has(verb)) return `not a verb the daemon runs: ${verb ?? "(none)"}`;
  if (argv.includes("--interactive") || argv.includes("-i"))
    return "an interactive call runs in its own process";
  return undefined;
}

/** A message from the client. */
export type ClientMessage =
  | {
      readonly kind: "run";
      readonly argv: readonly string[];
      readonly cwd: string;
      readonly env: Readonly<Record<string, string | undefined>>;
      readonly isTTY: boolean;
      /** The client's {@link buildId}: a daemon of another build declines. */
      readonly build: string;
    }
  /** The client takes the daemon's `accepted`: run the call. */
  | { readonly kind: "go" }
  | { readonly kind: "stdin"; readonly text: string }
  | { readonly kind: "stop" }
  | { readonly kind: "status" };

/** What `daemon status` reports. */
export interface DaemonInfo {
  readonly pid: number;
  readonly root: string;
  readonly build: string;
  readonly started: string;
  readonly calls: number;
  /** The daemon process's CPU (user + system) so far, ms. */
  readonly cpuMs: number;
  /** Resident set size now, bytes. */
  readonly rss: number;
  /** Stores held open (one per author and workspace state). */
  readonly stores: number;
  /** It exits after this long without a call, ms. */
  readonly idleMs: number;
}

/** A message from the daemon. */
export type DaemonMessage =
  | { readonly kind: "accepted" }
  | {
      readonly kind: "declined";
      /** `build`: the daemon runs another build; `verb`: not a call it runs; `stopping`. */
      readonly code: "build" | "verb" | "stopping";
      readonly reason: string;
    }
  | { readonly kind: "out"; readonly stream: "stdout" | "stderr"; readonly text: string }
  | { readonly kind: "stdin" }
  | { readonly kind: "exit"; readonly code: number }
  | { readonly kind: "info"; readonly info: DaemonInfo }
  | { readonly kind: "stopping" };

/**
 * The socket of the daemon of the workspace at `root`: in a folder of this user's own (mode 0700)
 * under the system's temp folder, named by a hash of the root (a path inside the workspace could
 * exceed the 107 bytes a Unix socket path may have).
 */
export function socketPath(root: string): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  const key = createHash("sha256").update(path.resolve(root)).digest("hex").slice(0, 24);
  return path.join(os.tmpdir(), `kumiki-daemon-${uid}`, `${key}.sock`);
}

/** Where a daemon started in the background writes its log: beside its socket. */
export function logPath(sock: string): string {
  return `${sock.slice(0, -".sock".length)}.log`;
}

/**
 * The marker a call leaves beside `sock` while the daemon it started comes up (so that calls at the
 * same moment start one daemon, not one each); the daemon removes it once it listens.
 */
export function startingPath(sock: string): string {
  return `${sock.slice(0, -".sock".length)}.starting`;
}

/**
 * True when the folder of `sock` is this user's own and no one else's to write (a folder another
 * user made first under a shared /tmp must not be trusted with calls, or to serve them).
 */
export function socketDirIsOwn(sock: string): boolean {
  if (typeof process.getuid !== "function") return true;
  try {
    const st = fs.statSync(path.dirname(sock));
    return st.isDirectory() && st.uid === process.getuid() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * This CLI build's identity: a hash of the bundle's entry file, which names every chunk it loads by
 * a hash of its content, so any change to the CLI, core or the storage changes it.
 */
export function buildId(entry: URL): string {
  try {
    return createHash("sha256").update(fs.readFileSync(entry)).digest("hex").slice(0, 24);
  } catch {
    return "unbundled";
  }
}

/**
 * Splits a stream of bytes into JSON messages, one per line; a line that is not JSON goes to
 * `onGarbage` (what is on the other end is not a kumiki client or daemon).
 */
export function lineReader<T>(
  onMessage: (m: T) => void,
  onGarbage: () => void = () => undefined,
): (chunk: Buffer | string) => void {
  // A chunk may end inside a UTF-8 sequence (a socket hands over what arrived, 64 KiB at a time):
  // the decoder keeps the partial bytes for the next chunk, where Buffer#toString would turn each
  // half into U+FFFD.
  const decoder = new StringDecoder("utf8");
  let buffered = "";
  return (chunk) => {
    // Only the new text can hold the next newline: a 1 MB message arriving in 64 KiB chunks is
    // scanned once, not once per chunk.
    let from = buffered.length;
    buffered += typeof chunk === "string" ? chunk : decoder.write(chunk);
    for (let nl = buffered.indexOf("\n", from); nl >= 0; nl = buffered.indexOf("\n", from)) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      from = 0;
      if (line === "") continue;
      let message: T;
      try {
        message = JSON.parse(line) as T;
      } catch {
        onGarbage();
        continue;
      }
      onMessage(message);
    }
  };
}

/**
 * The workspace a call works on, as the CLI finds it: `--store DIR` (wherever it is given, as the
 * CLI accepts it), else the nearest `.kumiki/` at or above cwd; undefined when there is none.
 */
export function workspaceRootOf(argv: readonly string[], cwd: string): string | undefined {
  let from = cwd;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") break;
    if (a === "--store" && i + 1 < argv.length) from = path.resolve(cwd, argv[++i]!);
    else if (a.startsWith("--store=")) from = path.resolve(cwd, a.slice("--store=".length));
  }
  for (let d = path.resolve(from); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, ".kumiki", "config.json"))) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

/** True when something answers a status request on `sock` within a second. */
export function answers(sock: string): Promise<boolean> {
  return daemonInfo(sock).then((i) => i !== undefined);
}

/** The daemon's own report, or undefined when nothing answers on `sock` within a second. */
export function daemonInfo(sock: string): Promise<DaemonInfo | undefined> {
  return request(sock, { kind: "status" }).then((m) => (m?.kind === "info" ? m.info : undefined));
}

/** Asks the daemon on `sock` to stop; true when one answered. */
export function stopDaemon(sock: string): Promise<boolean> {
  return request(sock, { kind: "stop" }).then((m) => m?.kind === "stopping");
}

/** Sends one message to the daemon on `sock` and resolves to its first answer (undefined: none within a second). */
function request(sock: string, message: ClientMessage): Promise<DaemonMessage | undefined> {
  return new Promise((resolve) => {
    const socket = net.createConnection(sock);
    const timer = setTimeout(() => done(undefined), 1000);
    const done = (m: DaemonMessage | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(m);
    };
    socket.on("connect", () => socket.write(`${JSON.stringify(message)}\n`));
    socket.on(
      "data",
      lineReader<DaemonMessage>((m) => done(m)),
    );
    socket.on("error", () => done(undefined));
    socket.on("close", () => done(undefined));
  });
}
