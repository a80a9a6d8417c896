/**
 * The CLI daemon (`kumiki daemon run`): one process per workspace that keeps the workspace's store
 * open — the Automerge document loaded, the graph folded, the checker's state kept in step — and
 * runs `kumiki` calls relayed by the bin (client.ts) exactly as the bin would run them itself, one at
 * a time, through the same `main`. What it holds is never trusted over the workspace: the store is
 * live (it takes in every other writer's ops before it answers), and a store is reopened when the
 * workspace's config, its capability manifest or its folders were replaced since it was opened,
 * when a repair moved chunks aside, or when a chunk file it may have loaded changed in place.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type * as StorageReadModule from "@kumiki-graph/storage-automerge/read";
import type { WorkspacePaths } from "@kumiki-graph/storage-automerge/read";
import { type HeldStore, keepHeldCheck, openWorkspaceHeld, type StoreProvider } from "../context.js";
import { loadStorageRead } from "../core.js";
import type { CliIo } from "../io.js";
import { main } from "../main.js";
import {
  answers,
  type ClientMessage,
  type DaemonInfo,
  type DaemonMessage,
  declineReason,
  lineReader,
  socketDirIsOwn,
  socketPath,
  startingPath,
} from "./protocol.js";

type StorageRead = typeof StorageReadModule;

/** How often a daemon looks whether its workspace and its socket are still there, ms. */
const WATCH_MS = 1000;

/** Stores a daemon keeps open at most (one per author; the least recently used is closed first). */
const MAX_STORES = 8;

/** Open stores by workspace and author, each with the workspace state it was opened on. */
class HeldStores implements StoreProvider {
  private readonly held = new Map<
    string,
    {
      readonly stamp: string;
      /** The workspace's folder (its capability manifest is read there when the check is kept). */
      readonly root: string;
      readonly opened: Promise<HeldStore & { close(): Promise<void> }>;
      /** The graph's chunk files (name, size, mtime) as the last call left them. */
      chunks: readonly string[];
    }
  >();

  get size(): number {
    return this.held.size;
  }

  async open(dir: string, author: string): Promise<HeldStore> {
    const sr = await loadStorageRead();
    const found = sr.findWorkspace(dir);
    // No workspace here: the ordinary open says so, in its own words.
    const key = found.ok ? `${found.value.root}\u0000${author}` : undefined;
    const stamp = found.ok ? workspaceStamp(found.value.root) : "";
    const chunks = found.ok ? chunksOf(sr, found.value) : [];
    const cached = key === undefined ? undefined : this.held.get(key);
    if (
      cached !== undefined &&
      cached.stamp === stamp &&
      !changedInPlace(cached.chunks, chunks) &&
      key !== undefined
    ) {
      cached.chunks = chunks;
      // Most recently used last: a Map iterates in insertion order.
      this.held.delete(key);
      this.held.set(key, cached);
      let held: HeldStore | undefined;
      try {
        held = await cached.opened;
      } catch {
        // It failed to open last time: try again below.
      }
      if (held !== undefined) {
        // A call in its own process may have written beside the document (a pending bundle):
        // taken in before this call reads or writes. One that cannot be stored now stays on disk.
        await held.store.fence().catch(() => undefined);
        return held;
      }
    }
    if (cached !== undefined && key !== undefined) {
      this.held.delete(key);
      await closeHeld(cached);
    }
    // Its first check goes on from the one a call kept (KUMIKI_CHECK_CACHE=off: checked in full).
    const opened = openWorkspaceHeld(dir, author, process.env.KUMIKI_CHECK_CACHE !== "off");
    if (key !== undefined && found.ok) {
      while (this.held.size >= MAX_STORES) {
        const [oldest, entry] = this.held.entries().next().value!;
        this.held.delete(oldest);
        await closeHeld(entry);
      }
      this.held.set(key, { stamp, root: found.value.root, opened, chunks });
      // A failed open is not kept: the next call tries again.
      opened.catch(() => {
        if (this.held.get(key)?.opened === opened) this.held.delete(key);
      });
    }
    return await opened;
  }

  /**
   * Notes each held store's chunk files as the call just run left them — its own appends, and the
   * pending bundles its open or fence folded in, wrote chunks the listing before the call lacks —
   * so that the next call tells a chunk damaged in place since then from them.
   */
  async recordChunks(): Promise<void> {
    if (this.held.size === 0) return;
    const sr = await loadStorageRead();
    for (const entry of this.held.values()) entry.chunks = chunksOf(sr, sr.workspacePaths(entry.root));
  }

  async closeAll(): Promise<void> {
    const all = [...this.held.values()];
    this.held.clear();
    for (const h of all) await closeHeld(h);
  }
}

/**
 * Closes a held store, keeping its check first (the daemon keeps its checks in memory while it
 * runs; once it stops, the next call in its own process or the next daemon goes on from this one).
 */
async function closeHeld(entry: {
  readonly root: string;
  readonly stamp: string;
  readonly opened: Promise<HeldStore & { close(): Promise<void> }>;
}): Promise<void> {
  const held = await entry.opened.catch(() => undefined);
  if (held === undefined) return;
  // Only into the workspace it was opened on: one removed or made again since must not get a
  // .kumiki/cache/ (a removed workspace's folder made again would read as a broken workspace).
  const same = workspaceStamp(entry.root) === entry.stamp;
  if (same && process.env.KUMIKI_CHECK_CACHE !== "off") await keepHeldCheck(held, entry.root);
  await held.close().catch(() => undefined);
}

/**
 * What a held store was opened on: the workspace's config (its graph), the identity of its
 * folders (a workspace removed and made again is another one), its capability manifest (the
 * write gate is built from it at open) and its repairs (each moves damaged chunks into a new
 * folder of `.kumiki/damaged/`; a store opened before holds the damage it saw then).
 */
function workspaceStamp(root: string): string {
  // A folder by its inode only: its size and time change with every file written in it.
  const part = (file: string, content: boolean): string => {
    try {
      const st = fs.statSync(file, { bigint: true });
      return content ? `${st.ino}:${st.size}:${st.mtimeNs}:${fs.readFileSync(file, "utf8")}` : `${st.ino}`;
    } catch {
      return "-";
    }
  };
  const dir = path.join(root, ".kumiki");
  return [
    part(dir, false),
    part(path.join(dir, "automerge"), false),
    part(path.join(dir, "config.json"), true),
    part(path.join(root, "kumiki.caps.json"), true), // core's CAPS_FILE
    repairs(path.join(dir, "damaged")),
  ].join("|");
}

/** The graph's chunk files, stamped (storage-automerge's `chunkStampsIn`); none when unreadable. */
function chunksOf(sr: StorageRead, paths: WorkspacePaths): readonly string[] {
  const config = sr.readConfig(paths);
  if (!config.ok) return [];
  try {
    return sr.chunkStampsIn(paths.storage, config.value.graph.slice("automerge:".length));
  } catch {
    return [];
  }
}

/**
 * True when a chunk file the held store may have loaded is still there with another size or time:
 * damaged in place (cut short, emptied, overwritten), which only a new open's checks can name.
 * New files (another writer's) are the live store's to take in; files gone were compacted.
 */
function changedInPlace(before: readonly string[], now: readonly string[]): boolean {
  const stampOf = new Map(now.map((s) => [s.split(" ")[0]!, s]));
  for (const s of before) {
    const current = stampOf.get(s.split(" ")[0]!);
    if (current !== undefined && current !== s) return true;
  }
  return false;
}

/** How many repairs moved chunks aside (the folders in `.kumiki/damaged/`). */
function repairs(folder: string): string {
  try {
    return String(fs.readdirSync(folder).length);
  } catch {
    return "0";
  }
}

/** How {@link runDaemon} runs. */
export interface DaemonOptions {
  /** The workspace served. */
  readonly root: string;
  /** This build's id: calls from another build are declined. */
  readonly build: string;
  /** Exit after this long without a call, ms. */
  readonly idleMs: number;
  /** Called once the socket listens. */
  readonly onListening?: (socket: string) => void;
}

/** The reply to a `run` that this daemon will not serve (the client then runs the call itself). */
function declinedRun(
  m: { readonly argv: readonly string[]; readonly build: string },
  build: string,
  stopAsked: boolean,
): { readonly code: "stopping" | "build" | "verb"; readonly reason: string } | undefined {
  if (stopAsked) return { code: "stopping", reason: "the daemon is stopping" };
  if (m.build !== build)
    return { code: "build", reason: `the daemon runs another build (${build}, the call's is ${m.build})` };
  const verbReason = declineReason(m.argv);
  return verbReason === undefined ? undefined : { code: "verb", reason: verbReason };
}

/**
 * Takes the socket path for a new daemon: its folder made this user's own, a stale socket (no
 * daemon answers on it) removed. Throws when another daemon serves there.
 */
async function claimSocket(sock: string, root: string): Promise<void> {
  fs.mkdirSync(path.dirname(sock), { recursive: true, mode: 0o700 });
  if (!socketDirIsOwn(sock))
    throw new Error(
      `${path.dirname(sock)} is not this user's own folder (mode 0700): remove it, then start again`,
    );
  if (!fs.existsSync(sock)) return;
  if (await answers(sock)) {
    // The call that started this one marked the start (client.ts): one serves, so the mark would
    // only keep the next call that finds the daemon stopped from starting another, for 10 s.
    fs.rmSync(startingPath(sock), { force: true });
    throw new Error(`a daemon already serves ${root} (${sock})`);
  }
  fs.rmSync(sock, { force: true });
}

/** One running daemon: its socket's server, the stores it holds, the calls it queues, and its stopping. */
class Daemon {
  readonly stores = new HeldStores();
  readonly server = net.createServer();
  private readonly started = new Date().toISOString();
  private calls = 0;
  /** The calls, one at a time: each sees the graph every call before it left. */
  private queue: Promise<unknown> = Promise.resolve();
  private idle: NodeJS.Timeout | undefined;
  private watch: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private readonly connections = new Set<net.Socket>();
  /** Set by what stops the daemon (idle, a signal, `daemon stop`, the watch); runDaemon then stops. */
  stopAsked = false;
  readonly asked: Promise<void>;
  private resolveAsked: () => void = () => undefined;
  /** The socket file this daemon listens on, by inode (set once it listens). */
  ownSocket: bigint | undefined;

  constructor(
    private readonly options: DaemonOptions,
    private readonly sock: string,
  ) {
    this.asked = new Promise<void>((resolve) => {
      this.resolveAsked = resolve;
    });
    this.server.on("connection", (socket) => this.serve(socket));
  }

  askStop(): void {
    this.stopAsked = true;
    this.resolveAsked();
  }

  info(): DaemonInfo {
    const u = process.resourceUsage();
    return {
      pid: process.pid,
      root: this.options.root,
      build: this.options.build,
      started: this.started,
      calls: this.calls,
      cpuMs: Math.round((u.userCPUTime + u.systemCPUTime) / 1000),
      rss: process.memoryUsage.rss(),
      stores: this.stores.size,
      idleMs: this.options.idleMs,
    };
  }

  /** Watches, from now on, that the workspace and the socket are still this daemon's. */
  startWatch(): void {
    this.watch = setInterval(() => this.watchOnce(), WATCH_MS);
    this.watch.unref();
  }

  /** (Re)starts the idle timer. */
  rearm(): void {
    if (this.idle !== undefined) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.askStop(), this.options.idleMs);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.idle !== undefined) clearTimeout(this.idle);
      if (this.watch !== undefined) clearInterval(this.watch);
      // No new call (one that comes is declined and runs itself); the call in flight (and any
      // queued) finishes and is answered; the stores close, keeping their checks, before the
      // socket goes — `daemon stop` waits for the socket to go, so it returns once they are closed.
      await this.queue.catch(() => undefined);
      await this.stores.closeAll();
      // Closing the server unlinks the socket's path (libuv does, at once): when the path is now
      // another daemon's (this one was stepped around while stopped or hung), it must not be
      // closed; the handle is let go instead, and `kumiki daemon run` exits after this resolves.
      const own = this.socketIsOwn();
      if (!own) this.server.unref();
      const closed = own
        ? new Promise<void>((resolve) => this.server.close(() => resolve()))
        : Promise.resolve();
      // A connection still open (a client that never sent its call) is not waited for.
      for (const c of this.connections) c.destroy();
      await closed;
    })();
    return this.stopping;
  }

  private socketIsOwn(): boolean {
    try {
      return fs.statSync(this.sock, { bigint: true }).ino === this.ownSocket;
    } catch {
      return false;
    }
  }

  /**
   * Never outlive the workspace, nor serve from a socket no call can reach any more (a temp
   * cleaner removed it, or a call stepped around this daemon and started another).
   */
  private watchOnce(): void {
    if (this.stopAsked) return;
    if (!fs.existsSync(path.join(this.options.root, ".kumiki", "config.json"))) {
      console.error(
        `kumiki daemon: ${this.options.root} is no workspace any more (.kumiki/ removed): stopping`,
      );
      this.askStop();
    } else if (!this.socketIsOwn()) {
      console.error(`kumiki daemon: ${this.sock} is no longer this daemon's socket: stopping`);
      this.askStop();
    }
  }

  /** One connection: a status, a stop, or a call (`run`, confirmed by `go`, with `stdin` as asked). */
  private serve(socket: net.Socket): void {
    this.connections.add(socket);
    socket.on("close", () => this.connections.delete(socket));
    const send = (m: DaemonMessage) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(m)}\n`);
    };
    let stdin: ((text: string) => void) | undefined;
    /** The call accepted on this connection, run once the client confirms (`go`). */
    let confirmed: (() => void) | undefined;
    socket.on("error", () => undefined);
    const onMessage = (m: ClientMessage | null) => {
      if (typeof m !== "object" || m === null || !Array.isArray((m as { argv?: unknown }).argv ?? [])) {
        socket.end();
        return;
      }
      switch (m.kind) {
        case "status":
          send({ kind: "info", info: this.info() });
          socket.end();
          return;
        case "stop":
          send({ kind: "stopping" });
          socket.end();
          this.askStop();
          return;
        case "go": {
          const run = confirmed;
          confirmed = undefined;
          // Asked to stop since it accepted: the client runs the call itself.
          if (this.stopAsked && run !== undefined) {
            send({ kind: "declined", code: "stopping", reason: "the daemon is stopping" });
            socket.end();
          } else run?.();
          return;
        }
        case "stdin":
          stdin?.(m.text);
          return;
        case "run": {
          const declined = declinedRun(m, this.options.build, this.stopAsked);
          if (declined !== undefined) {
            send({ kind: "declined", ...declined });
            socket.end();
            return;
          }
          send({ kind: "accepted" });
          const io: CliIo = {
            stdout: (text) => send({ kind: "out", stream: "stdout", text }),
            stderr: (text) => send({ kind: "out", stream: "stderr", text }),
            stdin: () =>
              new Promise<string>((resolve) => {
                stdin = resolve;
                send({ kind: "stdin" });
              }),
            env: m.env,
            cwd: m.cwd,
            isTTY: m.isTTY,
          };
          confirmed = () => this.enqueue(m.argv, io, socket, send);
          return;
        }
        default:
          socket.end();
      }
    };
    socket.on(
      "data",
      lineReader<ClientMessage | null>(onMessage, () => socket.end()),
    );
  }

  /** Runs a call after the calls before it, answers its exit code and ends its connection. */
  private enqueue(
    argv: readonly string[],
    io: CliIo,
    socket: net.Socket,
    send: (m: DaemonMessage) => void,
  ): void {
    const run = this.queue.then(async () => {
      this.calls++;
      if (this.idle !== undefined) clearTimeout(this.idle);
      try {
        const code = await main([...argv], io, { stores: this.stores });
        await this.stores.recordChunks().catch(() => undefined);
        send({ kind: "exit", code });
      } finally {
        socket.end();
        this.rearm();
      }
    });
    this.queue = run.catch(() => undefined);
  }
}

/**
 * Serves `kumiki` calls for the workspace at `root` on its socket until stopped (`daemon stop`,
 * SIGINT, SIGTERM) or idle for `idleMs`; resolves once every store is closed and the socket removed.
 */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const sock = socketPath(options.root);
  await claimSocket(sock, options.root);
  const daemon = new Daemon(options, sock);
  await new Promise<void>((resolve, reject) => {
    daemon.server.once("error", (e) => {
      fs.rmSync(startingPath(sock), { force: true }); // as above: another took the socket first
      reject(e);
    });
    daemon.server.listen(sock, () => resolve());
  });
  daemon.ownSocket = fs.statSync(sock, { bigint: true }).ino;
  fs.rmSync(startingPath(sock), { force: true });
  const onSignal = () => daemon.askStop();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  daemon.server.once("close", onSignal);
  daemon.startWatch();
  daemon.rearm();
  options.onListening?.(sock);
  await daemon.asked;
  await daemon.stop();
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
}
