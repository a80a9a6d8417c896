/**
 * The server side of the wire: automerge-repo's WebSocket server adapter with access control put
 * in front of the Repo. Every socket carries the {@link Grant} of the token it was opened with (set
 * at the HTTP upgrade); every message a peer sends is screened, in order, before the Repo sees it:
 *
 * - a peer may speak only of graphs its token grants; of any other it hears "unavailable", the
 *   same answer as for a graph the server does not hold, so nothing is announced or confirmed;
 * - a read-only peer's sync messages lose their changes (it still learns what the server has);
 * - a read-write peer's changes are checked ({@link ServerChecks.check}); a refused message is
 *   dropped whole, the peer told why and disconnected;
 * - a peer id already connected with another token is refused (no hijacking a session).
 *
 * Messages the Repo sends are filtered the same way, so nothing about a graph reaches a peer
 * without access to it.
 */
import * as A from "@automerge/automerge";
import { cbor, type Message, type PeerId } from "@automerge/automerge-repo";
import { WebSocketServerAdapter } from "@automerge/automerge-repo-network-websocket";
import type { WebSocket, WebSocketServer } from "ws";
import {
  CLOSE_FORBIDDEN,
  CLOSE_REFUSED,
  type FlushReply,
  type FlushRequest,
  isKumikiMessage,
} from "./protocol.js";
import type { Access, Grant } from "./tokens.js";

/** What the adapter asks of the server. */
export interface ServerChecks {
  /** The grant a socket was opened with. */
  grantOf(socket: WebSocket): Grant | undefined;
  /**
   * A read-write peer's changes to a graph: refused (why), or accepted with the number of ops in
   * them that are new to the server.
   */
  check(documentId: string, changes: readonly Uint8Array[], grant: Grant): Promise<CheckVerdict>;
  /** Stores the graph durably; returns the heads stored (empty when the server lacks it). */
  flush(documentId: string): Promise<string[]>;
  /** Why the server cannot store right now (`ENOSPC: …`), or undefined. */
  storageFault?(): string | undefined;
  /** Told of every refusal (for the log and /health). */
  onRefused(event: RefusalEvent): void;
  /**
   * Bytes sent to a peer and not yet taken by it, past which the peer is dropped as a slow reader
   * (what the server holds for a peer that stopped reading is bounded by this and one message);
   * default no bound.
   */
  readonly maxBufferedBytes?: number;
  /** Told of every peer dropped for reading too slowly (`reason` gives the bytes it left unread). */
  onSlowPeer?(event: SlowPeerEvent): void;
}

/** What {@link ServerChecks.check} decided. */
export type CheckVerdict =
  | { readonly ok: true /** Ops in the changes the server did not hold. */; readonly newOps: number }
  | { readonly ok: false; readonly reason: string };

/** A refused message. */
/** Why a server refused a connection or a message, as `/metrics` counts it. */
export type RefusalCode =
  /** A WebSocket upgrade without a token where tokens are required. */
  | "unauthorized"
  /** A token the server does not accept, or that grants no access to the graph. */
  | "forbidden"
  /** A client refused again and again, held back for a while (HTTP 429). */
  | "too-many-refusals"
  /** A message over maxMessageBytes: the connection closed unread (1009). */
  | "message-too-large"
  /** A peer id already connected with another token. */
  | "peer-id-taken"
  /** A sync message that does not decode. */
  | "undecodable"
  /** Changes the server's check refused (malformed, too large, by an author the token may not push as, read-only). */
  | "change-refused"
  /** A message whose screening failed on the server's side. */
  | "internal";

/** A peer's message refused (and the peer disconnected): who, on which graph, and why. */
export interface RefusalEvent {
  readonly peer: string;
  /** The token entry's name. */
  readonly token: string;
  readonly documentId: string | undefined;
  readonly reason: string;
  /** Why, as a stable code (what `/metrics` counts refusals by). */
  readonly code: RefusalCode;
}

/** A peer dropped for leaving more than maxBufferedBytes unread: who, and how much. */
export type SlowPeerEvent = Omit<RefusalEvent, "code">;

interface Screened {
  readonly senderId?: PeerId;
  readonly targetId?: PeerId;
  readonly type?: unknown;
  readonly documentId?: string;
  readonly data?: Uint8Array;
}

/** The close reason is limited to 123 bytes by the protocol. */
function closeReason(text: string): string {
  const b = Buffer.from(text);
  return b.length <= 123
    ? text
    : `${b
        .subarray(0, 119)
        .toString("utf8")
        .replace(/\uFFFD*$/, "")}…`;
}

/** How many peers {@link AccessControlledServerAdapter.hasAsked} remembers. */
const ASKED_PEERS = 10_000;

/** automerge-repo's WebSocket server adapter, screening what peers send and receive by token. */
export class AccessControlledServerAdapter extends WebSocketServerAdapter {
  /** The grant of each peer's current socket. */
  private readonly grants = new Map<PeerId, Grant>();
  private readonly queues = new WeakMap<WebSocket, Promise<void>>();
  /** Per socket, per graph: the ops taken from it that were new (what a flush reply reports). */
  private readonly taken = new WeakMap<WebSocket, Map<string, number>>();
  /** The graphs each peer synced, most recent peer last ({@link hasAsked}). */
  private readonly asked = new Map<PeerId, Set<string>>();

  constructor(
    server: WebSocketServer,
    private readonly checks: ServerChecks,
    keepAliveInterval?: number,
  ) {
    super(server as never, keepAliveInterval);
  }

  /**
   * True once every connected peer's queued messages are handled (a flush request answered, a
   * pushed change checked): what a draining server waits for before it closes the sockets.
   */
  settled(): boolean {
    return this.busy === 0;
  }

  /** Messages received and not yet handled, over every socket. */
  private busy = 0;

  /**
   * Looks each connected peer's grant up again ({@link ServerChecks.grantOf}): what the server
   * calls when its tokens changed. A peer whose socket has no grant any more is forgotten.
   */
  reviewGrants(): void {
    for (const peer of [...this.grants.keys()]) {
      const ws = this.sockets[peer] as WebSocket | undefined;
      const grant = ws === undefined ? undefined : this.checks.grantOf(ws);
      if (grant === undefined) this.grants.delete(peer);
      else this.grants.set(peer, grant);
    }
  }

  /**
   * Whether a peer has synced a graph through this server (on any of its connections; the last
   * 10,000 peers are remembered). The server's share policy announces a graph again
   * to such a peer when it reconnects: automerge-repo then restarts that sync from what both sides
   * are known to hold. Without it the Repo keeps the peer's sync state from before the drop, and
   * the changes it had sent into the dropped socket count as delivered: a live peer (one Repo, one
   * peer id, reconnecting) never got them.
   */
  hasAsked(peerId: PeerId, documentId: string): boolean {
    return this.asked.get(peerId)?.has(documentId) === true;
  }

  private noteAsked(peerId: PeerId, documentId: string): void {
    const graphs = this.asked.get(peerId) ?? new Set<string>();
    this.asked.delete(peerId);
    this.asked.set(peerId, graphs.add(documentId));
    // Most peers are one-off (a CLI sync has a fresh peer id each time): forget the oldest.
    if (this.asked.size > ASKED_PEERS) this.asked.delete(this.asked.keys().next().value!);
  }

  /** A peer's access to a graph (by its current socket's token). */
  accessOf(peerId: PeerId, documentId: string): Access | undefined {
    return this.grants.get(peerId)?.access(documentId);
  }

  /** Screens a peer's message (its grant, its changes) before the Repo takes it. */
  override receiveMessage(messageBytes: Uint8Array, socket: never): void {
    const ws = socket as WebSocket;
    this.busy++;
    // One message at a time per socket, in arrival order, though screening may wait for a load.
    const run = (this.queues.get(ws) ?? Promise.resolve())
      .then(() => this.screen(messageBytes, ws))
      .catch((e: unknown) => {
        this.refuse(
          ws,
          undefined,
          undefined,
          "internal",
          `internal error while screening a message: ${String(e)}`,
        );
      })
      .finally(() => {
        this.busy--;
      });
    this.queues.set(ws, run);
  }

  private markConnected: () => void = () => undefined;
  /**
   * Resolves once the Repo has connected this adapter. Until then a WebSocket's messages have no
   * listener (automerge-repo attaches it in `connect`, after it has read its storage id): a peer
   * that joined earlier was never answered, so a server listens only after this.
   */
  readonly connected: Promise<void> = new Promise((resolve) => {
    this.markConnected = resolve;
  });

  /** Called by the Repo: starts serving peers on the server's socket. */
  override connect(...args: Parameters<WebSocketServerAdapter["connect"]>): void {
    super.connect(...args);
    this.markConnected();
  }

  /**
   * Called by the Repo: closes every peer's socket and stops serving. (Declared here for its
   * documentation: the inherited comment links to automerge-repo's own types.)
   */
  override disconnect(): void {
    super.disconnect();
  }

  /** Called by the Repo: sends a message to a peer (counted; a slow peer is dropped). */
  override send(message: Message): void {
    const m = message as Screened;
    if (m.documentId !== undefined && m.type !== "doc-unavailable" && m.targetId !== undefined) {
      if (this.accessOf(m.targetId, m.documentId) === undefined) return;
    }
    const ws = m.targetId === undefined ? undefined : (this.sockets[m.targetId] as WebSocket | undefined);
    const limit = this.checks.maxBufferedBytes;
    if (ws !== undefined && limit !== undefined && ws.bufferedAmount > limit) {
      // Back-pressure: a peer that has not read what it was sent gets no more of it. Dropped, not
      // closed (a close frame would queue behind what it does not read); the client reconnects
      // (backing off) and syncs from where it stands, so nothing is lost to it. Messages the Repo
      // sends it before the socket's close event are dropped without counting it again.
      if (ws.readyState !== ws.OPEN) return;
      this.checks.onSlowPeer?.({
        peer: m.targetId!,
        token: this.checks.grantOf(ws)?.name ?? "(none)",
        documentId: m.documentId,
        reason: `${ws.bufferedAmount.toLocaleString("en")} bytes sent and not read (over ${limit.toLocaleString("en")}, maxBufferedBytes): dropped as a slow reader`,
      });
      ws.terminate();
      return;
    }
    super.send(message as never);
  }

  private pass(bytes: Uint8Array, ws: WebSocket): void {
    super.receiveMessage(bytes, ws as never);
  }

  private reply(ws: WebSocket, message: object): void {
    if (ws.readyState === ws.OPEN) ws.send(cbor.encode(message));
  }

  private refuse(
    ws: WebSocket,
    peer: PeerId | undefined,
    documentId: string | undefined,
    code: RefusalCode,
    reason: string,
  ): void {
    const grant = this.checks.grantOf(ws);
    this.checks.onRefused({
      peer: peer ?? "(unknown)",
      token: grant?.name ?? "(none)",
      documentId,
      reason,
      code,
    });
    if (peer !== undefined && this.peerId !== undefined)
      this.reply(ws, { type: "error", senderId: this.peerId, targetId: peer, message: `refused: ${reason}` });
    ws.close(CLOSE_REFUSED, closeReason(`refused: ${reason}`));
  }

  private unavailable(ws: WebSocket, peer: PeerId, documentId: string): void {
    if (this.peerId === undefined) return;
    this.reply(ws, { type: "doc-unavailable", senderId: this.peerId, targetId: peer, documentId });
  }

  private async screen(bytes: Uint8Array, ws: WebSocket): Promise<void> {
    let message: Screened;
    try {
      message = cbor.decode(bytes) as Screened;
    } catch {
      this.pass(bytes, ws); // the base adapter closes the connection on an undecodable message
      return;
    }
    const grant = this.checks.grantOf(ws);
    const sender = message.senderId;
    if (grant === undefined || typeof sender !== "string") {
      ws.close(CLOSE_FORBIDDEN, "no grant for this connection");
      return;
    }
    if (message.type === "join") {
      this.screenJoin(bytes, ws, sender as PeerId, grant);
      return;
    }
    // The base adapter drops messages from a socket that is not the sender's; so do we, earlier.
    if ((this.sockets[sender] as WebSocket | undefined) !== ws) return;
    const documentId = typeof message.documentId === "string" ? message.documentId : undefined;
    const access = documentId === undefined ? undefined : grant.access(documentId);
    if (isKumikiMessage<FlushRequest>(message, "kumiki-flush")) {
      if (documentId !== undefined) await this.answerFlush(ws, message, documentId, access);
      return;
    }
    switch (message.type) {
      case "sync":
      case "request":
        if (documentId !== undefined && message.data instanceof Uint8Array)
          await this.screenSync(
            bytes,
            ws,
            { ...message, data: message.data },
            sender as PeerId,
            documentId,
            grant,
            access,
          );
        return;
      case "doc-unavailable":
        if (access !== undefined) this.pass(bytes, ws);
        return;
      case "ephemeral":
        if (access === "write") this.pass(bytes, ws);
        return;
      default:
        // Remote-heads gossip and unknown types: not relayed (gossip is off on this server).
        return;
    }
  }
  /** A peer joins: refused when its peer id is connected with another token; its grant noted. */
  private screenJoin(bytes: Uint8Array, ws: WebSocket, sender: PeerId, grant: Grant): void {
    const current = this.sockets[sender] as WebSocket | undefined;
    const held = this.grants.get(sender);
    if (current !== undefined && current !== ws && current.readyState === current.OPEN && held !== grant) {
      this.refuse(
        ws,
        sender,
        undefined,
        "peer-id-taken",
        `peer id ${sender} is connected with another token`,
      );
      return;
    }
    this.grants.set(sender, grant);
    this.pass(bytes, ws);
  }

  /** Answers a flush request once the graph is durably stored: its heads, the peer's access, what was taken. */
  private async answerFlush(
    ws: WebSocket,
    message: FlushRequest,
    documentId: string,
    access: Access | undefined,
  ): Promise<void> {
    if (this.peerId === undefined) return;
    const heads = access === undefined ? [] : await this.checks.flush(documentId);
    const fault = this.checks.storageFault?.();
    const reply: FlushReply = {
      type: "kumiki-flushed",
      senderId: this.peerId,
      targetId: message.senderId,
      documentId,
      requestId: message.requestId,
      heads,
      access: access ?? "none",
      ...(fault === undefined ? {} : { storageFault: fault }),
      taken: this.taken.get(ws)?.get(documentId) ?? 0,
    };
    this.reply(ws, reply);
  }

  /**
   * A sync message: passed when it carries no change; a read-only peer's changes dropped from it;
   * a read-write peer's checked (refused whole, or passed and the new ops counted).
   */
  private async screenSync(
    bytes: Uint8Array,
    ws: WebSocket,
    message: Screened & { readonly data: Uint8Array },
    sender: PeerId,
    documentId: string,
    grant: Grant,
    access: Access | undefined,
  ): Promise<void> {
    if (access === undefined) {
      this.unavailable(ws, sender, documentId);
      return;
    }
    this.noteAsked(sender, documentId);
    let decoded: A.DecodedSyncMessage;
    try {
      decoded = A.decodeSyncMessage(message.data);
    } catch (e) {
      this.refuse(ws, sender, documentId, "undecodable", `undecodable sync message: ${(e as Error).message}`);
      return;
    }
    if (decoded.changes.length === 0) {
      this.pass(bytes, ws);
      return;
    }
    if (access === "read") {
      // A read-only peer's changes are neither stored nor relayed; the rest of its message
      // (heads, what it has) still lets it pull.
      const data = A.encodeSyncMessage({ ...decoded, changes: [] });
      this.pass(cbor.encode({ ...message, data }), ws);
      return;
    }
    const verdict = await this.checks.check(documentId, decoded.changes, grant);
    if (!verdict.ok) {
      this.refuse(ws, sender, documentId, "change-refused", verdict.reason);
      return;
    }
    const counts = this.taken.get(ws) ?? new Map<string, number>();
    this.taken.set(ws, counts);
    counts.set(documentId, (counts.get(documentId) ?? 0) + verdict.newOps);
    this.pass(bytes, ws);
  }
}
