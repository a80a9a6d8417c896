/**
 * Who may do what on a sync server: whether it takes tokens at all (none given, or none stored
 * yet), each connection's grant and the token it presented, the review of every grant when the
 * tokens change (a withdrawn token's connection closed), and what a token grants an HTTP request.
 */
import type http from "node:http";
import type { WebSocket } from "ws";
import { type Access, type Grant, OPEN_GRANT, type TokenTable } from "./tokens.js";
import { pinnedTo, tokenOf } from "./upgrade-gate.js";

/** What a request's token grants on one graph (`ServerAccess.ofRequest`). */
export type RequestAccess =
  | {
      readonly ok: true;
      readonly name: string;
      readonly access: Access;
      /** Granted because the server takes no tokens (yet): `name` is nobody's. */
      readonly open?: true;
    }
  | { readonly ok: false; readonly status: 401 | 403; readonly message: string };

/** What a review of the grants did, for the server to log and act on. */
export interface GrantReview {
  /** Tokens were stored while the server was open: from now on every connection needs one. */
  readonly closedToAll?: number;
  /** Connections whose token is no longer accepted (or that presented none), with why. */
  readonly withdrawn: readonly {
    readonly socket: WebSocket;
    /** Whether it presented a token (withdrawn since) or none (the server took none then). */
    readonly presented: boolean;
    /** The close reason the connection is told. */
    readonly reason: string;
  }[];
}

export class ServerAccess {
  /** Anyone may connect: no tokens, or none stored yet (openUntilTokens); once false, never again. */
  private open: boolean;
  private readonly grants = new WeakMap<WebSocket, Grant>();
  /** The token each connection presented, and the graph its path pins (to review its grant). */
  private readonly presented = new WeakMap<WebSocket, { readonly token: string; readonly pinned?: string }>();

  constructor(
    private readonly tokens: TokenTable | undefined,
    openUntilTokens: boolean,
  ) {
    this.open = tokens === undefined || (openUntilTokens && tokens.size === 0);
  }

  /** Whether the server takes tokens now (`/health`'s `auth`). */
  get isOpen(): boolean {
    return this.open;
  }

  /** The tokens an upgrade must present one of; undefined while the server is open. */
  tokensInForce(): TokenTable | undefined {
    return this.open ? undefined : this.tokens;
  }

  /** Records an accepted connection's grant, and the token and pinned graph it came with. */
  admit(socket: WebSocket, grant: Grant, token?: string, pinned?: string): void {
    this.grants.set(socket, grant);
    if (token !== undefined)
      this.presented.set(socket, { token, ...(pinned === undefined ? {} : { pinned }) });
  }

  /** The grant a connection holds now (undefined once withdrawn). */
  grantOf(socket: WebSocket): Grant | undefined {
    return this.grants.get(socket);
  }

  /**
   * Looks every connection's grant up again (the tokens changed): a token no longer accepted loses
   * its grant (the caller closes the connection); undefined when nothing needed reviewing.
   */
  review(sockets: Iterable<WebSocket>): GrantReview | undefined {
    const tokens = this.tokens;
    if (tokens === undefined || (this.open && tokens.size === 0)) return undefined;
    const closedToAll = this.open ? tokens.size : undefined;
    this.open = false;
    const withdrawn: { socket: WebSocket; presented: boolean; reason: string }[] = [];
    for (const socket of sockets) {
      const p = this.presented.get(socket);
      const grant = p === undefined ? undefined : tokens.lookup(p.token);
      if (grant === undefined) {
        this.grants.delete(socket);
        withdrawn.push({
          socket,
          presented: p !== undefined,
          reason: p === undefined ? "this server now requires a token" : "the token was withdrawn",
        });
      } else this.grants.set(socket, pinnedTo(grant, p?.pinned));
    }
    return { ...(closedToAll === undefined ? {} : { closedToAll }), withdrawn };
  }

  /**
   * What `req`'s token (`Authorization: Bearer`, as for a WebSocket) grants on `graph`, under the
   * same tokens and grants as sync (asked again at each request: a withdrawn token is refused).
   */
  ofRequest(req: http.IncomingMessage, graph: string): RequestAccess {
    const documentId = graph.startsWith("automerge:") ? graph.slice("automerge:".length) : graph;
    if (this.open || this.tokens === undefined) {
      const a = OPEN_GRANT.access(documentId)!;
      return { ok: true, name: OPEN_GRANT.name, access: a, open: true };
    }
    const token = tokenOf(req);
    if (token === undefined)
      return { ok: false, status: 401, message: "a token is required: send `Authorization: Bearer <token>`" };
    const grant = this.tokens.lookup(token);
    if (grant === undefined)
      return { ok: false, status: 403, message: "the token is not accepted by this server" };
    const access = grant.access(documentId);
    if (access === undefined)
      return { ok: false, status: 403, message: `the token grants no access to automerge:${documentId}` };
    return { ok: true, name: grant.name, access };
  }
}
