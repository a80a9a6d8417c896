/**
 * What Kumiki adds to automerge-repo's WebSocket protocol (docs/sync.md): a flush request, answered
 * once the server has durably stored the document, with the heads it stored and the peer's access;
 * and the close codes a server uses when it refuses a peer. automerge-repo peers ignore the extra
 * message types, so a plain automerge-repo client still syncs.
 */
import type { PeerId } from "@automerge/automerge-repo";
import type { Access } from "./tokens.js";

/** Client → server: store the document durably and say which heads are stored. */
export interface FlushRequest {
  readonly type: "kumiki-flush";
  readonly senderId: PeerId;
  readonly targetId: PeerId;
  readonly documentId: string;
  readonly requestId: number;
}

/** Server → client: the answer to a {@link FlushRequest}. */
export interface FlushReply {
  readonly type: "kumiki-flushed";
  readonly senderId: PeerId;
  readonly targetId: PeerId;
  readonly documentId: string;
  readonly requestId: number;
  /** The heads durably stored (hex change hashes, as `Automerge.getHeads`); empty when the server lacks the graph. */
  readonly heads: readonly string[];
  /** What this peer's token may do with the graph (none: the graph is unavailable to it). */
  readonly access: Access | "none";
  /** Why the server cannot store now (a full disk: `ENOSPC: …`); `heads` is then what it has stored. */
  readonly storageFault?: string;
  /**
   * Ops of the graph this server took from this connection so far, each new to it (checked, and
   * held by no op-id before). Absent from servers that do not count them.
   */
  readonly taken?: number;
}

/** Close code: the peer sent changes the server refuses (WebSocket 1008, policy violation). */
export const CLOSE_REFUSED = 1008;
/** Close code: the peer's token was replaced or withdrawn while connected (application range). */
export const CLOSE_FORBIDDEN = 4403;
/** Close code of a server shutting down: the client reconnects later (RFC 6455 "going away"). */
export const CLOSE_GOING_AWAY = 1001;

/** True for a decoded message of the given Kumiki type. */
export function isKumikiMessage<T extends FlushRequest | FlushReply>(
  message: unknown,
  type: T["type"],
): message is T {
  return typeof message === "object" && message !== null && (message as { type?: unknown }).type === type;
}
