/**
 * The client side of the wire: an automerge-repo network adapter speaking the WebSocket protocol
 * of automerge-repo's client adapter, with what a command-line sync needs on top:
 *
 * - the token goes in an `Authorization: Bearer` header (never in the URL);
 * - a refused connection (HTTP 401/403 at the upgrade, or the server closing it for refused
 *   changes) is a failure value with the server's reason, never an uncaught exception;
 * - it reports itself ready only once the server has answered the handshake (or failed for good),
 *   so a `find` is never asked before the server can answer it;
 * - it reconnects after a drop (a restarted server), and asks the server to flush
 *   ({@link KumikiClientAdapter.requestFlush}) so a sync ends only on what is durably stored.
 */
import {
  cbor,
  type Message,
  NetworkAdapter,
  type PeerId,
  type PeerMetadata,
} from "@automerge/automerge-repo";
import WebSocket from "ws";
import {
  CLOSE_FORBIDDEN,
  CLOSE_REFUSED,
  type FlushReply,
  type FlushRequest,
  isKumikiMessage,
} from "./protocol.js";
import type { SyncError } from "./result.js";

/** How a {@link KumikiClientAdapter} connects. */
export interface ClientAdapterOptions {
  /** The bearer token, when the server wants one. */
  readonly token?: string;
  /**
   * Delay before reconnecting after a drop, ms (default 250); doubled after each round of the
   * servers that failed to connect, up to {@link maxRetryMs}, and back to this once connected.
   */
  readonly retryMs?: number;
  /** The longest delay between reconnection attempts, ms (default 10,000). */
  readonly maxRetryMs?: number;
  /**
   * While no socket to a server ever opened, give up after this many failed attempts: a terminal
   * `unreachable` failure naming the last error (a one-off sync or clone should not wait out its
   * whole timeout against a server that is not there). Unset: retry until disconnected, as a live
   * adapter does; one that reached a server once always retries (a restarted server comes back).
   */
  readonly connectTries?: number;
  /**
   * Other servers of the same service (servers sharing one database): after a drop or a failed
   * connection the adapter connects to the next, in turn, so a client whose server died carries on
   * through another.
   */
  readonly alternates?: readonly string[];
}

/** Traffic counters. */
export interface TrafficStats {
  bytesSent: number;
  bytesReceived: number;
  messagesSent: number;
  messagesReceived: number;
  connections: number;
  /** Connections tried (each server of a round counts). */
  attempts: number;
}

/** automerge-repo network adapter for one Kumiki sync server. */
export class KumikiClientAdapter extends NetworkAdapter {
  /** The server's peer id, while connected. */
  remotePeerId: PeerId | undefined;
  /** What the server said about itself (its storage id keys the persisted sync state). */
  remoteMetadata: PeerMetadata | undefined;
  readonly stats: TrafficStats = {
    bytesSent: 0,
    bytesReceived: 0,
    messagesSent: 0,
    messagesReceived: 0,
    connections: 0,
    attempts: 0,
  };
  /** The last non-terminal problem (e.g. the server unreachable while retrying). */
  lastProblem: SyncError | undefined;
  /** A failure that ends the session (bad token, refused changes); nothing is retried after it. */
  failure: SyncError | undefined;
  private socket: WebSocket | undefined;
  private ready = false;
  private readonly readyWaiters: (() => void)[] = [];
  private readonly activityWaiters = new Set<() => void>();
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Connections tried since the last that was taken (the back-off grows with the rounds). */
  private failedTries = 0;
  /** When the first connection was tried. */
  private firstAttempt: number | undefined;
  /** A socket to the server opened once (it is there; a drop after that is waited out). */
  private reached = false;
  private nextRequest = 1;
  private readonly pending = new Map<
    number,
    { resolve: (r: FlushReply) => void; reject: (e: Error) => void }
  >();
  private readonly sentListeners = new Set<(changes: readonly Uint8Array[]) => void>();
  /**
   * While true, the server's storage id is withheld from the Repo, so the Repo neither loads nor
   * saves sync state for it on its own timer (the sync-state keeper takes over once installed).
   */
  hideStorageId = false;
  /** Bumped by every message from the server (but flush replies), connection and drop. */
  activity = 0;

  /** The server and its alternates, in turn; `at` is the one connected or being tried. */
  private readonly servers: readonly string[];
  private at = 0;

  constructor(
    url: string,
    private readonly options: ClientAdapterOptions = {},
  ) {
    super();
    this.servers = [url, ...(options.alternates ?? [])];
  }

  /** The server connected to, or being tried. */
  get url(): string {
    return this.servers[this.at]!;
  }

  /** True once the server answered the handshake (the Repo waits for it before syncing). */
  isReady(): boolean {
    return this.ready;
  }

  /** Resolves once {@link isReady} (or the adapter gave up: a terminal failure, disconnect). */
  whenReady(): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** True while the handshake with the server is done and the socket open. */
  get connected(): boolean {
    return this.remotePeerId !== undefined && this.socket?.readyState === WebSocket.OPEN;
  }

  /** Called by the Repo: opens the connection to the server (and keeps it open, reconnecting). */
  connect(peerId: PeerId, peerMetadata?: PeerMetadata): void {
    this.peerId = peerId;
    this.peerMetadata = peerMetadata ?? {};
    // A connect after a disconnect connects again (automerge-repo's network-adapter suite, "should
    // support reconnecting after disconnect"); after a terminal failure (a refused token) it does not.
    if (this.failure === undefined) this.stopped = false;
    if (this.socket === undefined) this.open();
  }

  /** Called by the Repo: closes the connection and stops reconnecting. */
  disconnect(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const s = this.socket;
    this.socket = undefined;
    s?.removeAllListeners();
    s?.on("error", () => undefined);
    s?.close();
    this.dropped();
    this.markReady();
  }

  /** Called by the Repo: sends a sync message to the server (dropped while disconnected). */
  send(message: Message): void {
    const s = this.socket;
    // While disconnected, messages are dropped: on reconnection the Repo restarts the sync from
    // the shared heads, so nothing depends on them.
    if (s === undefined || s.readyState !== WebSocket.OPEN) return;
    this.sendRaw(s, message);
    if ((message.type === "sync" || message.type === "request") && this.sentListeners.size > 0) {
      const data = (message as { data?: Uint8Array }).data;
      if (data !== undefined) for (const l of this.sentListeners) l([data]);
    }
  }

  /** Called with the sync messages (encoded) this adapter sends; returns the unsubscribe function. */
  onSyncSent(listener: (messages: readonly Uint8Array[]) => void): () => void {
    this.sentListeners.add(listener);
    return () => this.sentListeners.delete(listener);
  }

  /** Resolves once {@link activity} moves past `seen` or `deadline` (ms since the epoch) passes. */
  nextActivity(seen: number, deadline: number): Promise<void> {
    if (this.activity !== seen || this.failure !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.activityWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      this.activityWaiters.add(done);
    });
  }

  /** Marks activity from outside the wire (a local change to the document). */
  poke(): void {
    this.activity++;
    for (const w of [...this.activityWaiters]) w();
  }

  /** Asks the server to store `documentId` durably; resolves with the heads it stored. */
  requestFlush(documentId: string): Promise<FlushReply> {
    const s = this.socket;
    if (s === undefined || !this.connected || this.peerId === undefined || this.remotePeerId === undefined)
      return Promise.reject(new Error("not connected"));
    const requestId = this.nextRequest++;
    const request: FlushRequest = {
      type: "kumiki-flush",
      senderId: this.peerId,
      targetId: this.remotePeerId,
      documentId,
      requestId,
    };
    return new Promise((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject });
      this.sendRaw(s, request);
    });
  }

  private sendRaw(ws: WebSocket, message: object): void {
    const bytes = cbor.encode(message);
    this.stats.bytesSent += bytes.byteLength;
    this.stats.messagesSent++;
    ws.send(bytes);
  }

  private markReady(): void {
    if (this.ready) return;
    this.ready = true;
    for (const w of this.readyWaiters.splice(0)) w();
  }

  private terminal(error: SyncError): void {
    this.failure ??= error;
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.markReady();
    this.poke();
  }

  private dropped(): void {
    for (const p of this.pending.values()) p.reject(new Error("disconnected"));
    this.pending.clear();
    if (this.remotePeerId !== undefined) {
      const peerId = this.remotePeerId;
      this.remotePeerId = undefined;
      this.emit("peer-disconnected", { peerId });
    }
    this.poke();
  }

  private open(): void {
    if (this.stopped || this.peerId === undefined) return;
    const headers: Record<string, string> = {};
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    const ws = new WebSocket(this.url, { headers, perMessageDeflate: false });
    this.socket = ws;
    this.stats.attempts++;
    this.firstAttempt ??= Date.now();
    ws.on("open", () => {
      this.reached = true;
      const join = {
        type: "join",
        senderId: this.peerId,
        peerMetadata: this.peerMetadata ?? {},
        supportedProtocolVersions: ["1"],
      };
      this.sendRaw(ws, join);
    });
    ws.on("unexpected-response", (req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let message = body.trim();
        try {
          const parsed = JSON.parse(body) as { error?: { message?: string } };
          if (typeof parsed.error?.message === "string") message = parsed.error.message;
        } catch {
          // Not our server's JSON: keep the body as it is.
        }
        const status = res.statusCode ?? 0;
        const code = status === 401 ? "unauthorized" : status === 403 ? "forbidden" : "refused";
        this.terminal({
          code,
          message: `${this.url} refused the connection (HTTP ${status})${message ? `: ${message}` : ""}`,
          details: { status, url: this.url },
        });
        req.destroy();
      });
    });
    ws.on("error", (e: NodeJS.ErrnoException) => {
      this.lastProblem = {
        code: "unreachable",
        message: `cannot reach ${this.url}: ${e.code ?? e.message}`,
        details: { url: this.url },
      };
    });
    ws.on("close", (code: number, reason: Buffer) => {
      if (this.socket !== ws) return;
      this.socket = undefined;
      if (code === CLOSE_REFUSED || code === CLOSE_FORBIDDEN) {
        // A close frame's reason is cut at 123 bytes; the server sent the whole of it just before,
        // as an error message (kept as the last problem): that one is said.
        const said = this.lastProblem?.code === "refused" ? this.lastProblem.message : undefined;
        // An op-id the server holds with other content: this replica's copy is forged or stale,
        // and every push carrying it is refused; the repair puts it aside (repair-contested.ts).
        const contested = /op (op_[0-9A-Z]{26}) is already held with other content/.exec(said ?? "")?.[1];
        this.terminal({
          code: "refused",
          message:
            (said ?? `${this.url} ${reason.toString("utf8") || "refused this client"}`) +
            (contested === undefined
              ? ""
              : `. This workspace holds another op under ${contested} than the server (forged, or a stale copy), so no push of it can be taken: kumiki repair puts it aside and takes the server's copy, then syncs the rest`),
          details: { url: this.url, closeCode: code, ...(contested === undefined ? {} : { contested }) },
        });
      }
      // Over the server's message limit: the same push would be closed again, so say why and stop.
      if (code === 1009)
        this.terminal({
          code: "refused",
          message: `${this.url} closed the connection: a message was over its size limit (${reason.toString("utf8") || "1009, message too big"}); nothing more was taken. The server's operator can raise it (kumiki serve --max-message MiB)`,
          details: { url: this.url, closeCode: code },
        });
      this.dropped();
      const tries = this.options.connectTries;
      if (tries !== undefined && !this.reached && this.stats.attempts >= tries) {
        const secs = ((Date.now() - (this.firstAttempt ?? Date.now())) / 1000).toFixed(1);
        const why = this.lastProblem?.message ?? `cannot reach ${this.url}`;
        this.terminal({
          code: "unreachable",
          message: `${why} (${this.stats.attempts} tries over ${secs} s, none answered); nothing was exchanged, every op stays where it was: check that the server runs (kumiki serve) and its address`,
          details: { url: this.url, attempts: this.stats.attempts, servers: this.servers },
        });
        return;
      }
      // The next server of the service, when there are others (the same one again otherwise).
      this.at = (this.at + 1) % this.servers.length;
      if (!this.stopped) this.retryTimer = setTimeout(() => this.open(), this.retryDelay());
    });
    ws.on("message", (data: Buffer) => this.receive(data));
  }

  /**
   * How long to wait before the next attempt: the base delay while the servers of a round are tried
   * in turn, doubled for each whole round that failed (a dead server is not hammered: 250 ms, 0.5 s,
   * 1 s, … up to 10 s), with a fifth of jitter so that clients dropped together do not return
   * together.
   */
  private retryDelay(): number {
    const base = this.options.retryMs ?? 250;
    const rounds = Math.floor(this.failedTries / this.servers.length);
    this.failedTries++;
    const delay = Math.min(base * 2 ** Math.min(rounds, 16), this.options.maxRetryMs ?? 10_000);
    return Math.round(delay * (0.8 + 0.2 * Math.random()));
  }

  private receive(data: Buffer): void {
    this.stats.bytesReceived += data.byteLength;
    this.stats.messagesReceived++;
    let message: { type?: unknown; senderId?: PeerId; peerMetadata?: PeerMetadata; message?: unknown };
    try {
      message = cbor.decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    } catch {
      return;
    }
    if (isKumikiMessage<FlushReply>(message, "kumiki-flushed")) {
      const p = this.pending.get(message.requestId);
      this.pending.delete(message.requestId);
      p?.resolve(message);
      return;
    }
    if (message.type === "peer" && message.senderId !== undefined) {
      this.remotePeerId = message.senderId;
      this.remoteMetadata = message.peerMetadata;
      this.stats.connections++;
      this.failedTries = 0;
      this.lastProblem = undefined;
      const meta = message.peerMetadata ?? {};
      this.emit("peer-candidate", {
        peerId: message.senderId,
        peerMetadata: this.hideStorageId ? { isEphemeral: meta.isEphemeral ?? false } : meta,
      });
      this.markReady();
      this.poke();
      return;
    }
    if (message.type === "error") {
      this.lastProblem = { code: "refused", message: `${this.url} ${String(message.message)}` };
      return;
    }
    this.emit("message", message as Message);
    this.poke();
  }
}
