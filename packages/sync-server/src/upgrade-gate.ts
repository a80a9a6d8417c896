/**
 * Who may open a sync connection (a WebSocket upgrade): the token a request presents, checked
 * against the server's tokens, with clients refused again and again held back (refusal-throttle.ts),
 * and the grant a connection gets — narrowed to one graph when its path pins one. What is refused
 * is answered here, as HTTP, before any WebSocket exists.
 */
import type http from "node:http";
import type { Duplex } from "node:stream";
import { RefusalThrottle } from "./refusal-throttle.js";
import type { RefusalEvent } from "./server-adapter.js";
import { type Grant, OPEN_GRANT, type TokenTable, tokenDigest } from "./tokens.js";

/** The token a request presents: `Authorization: Bearer`, else `?token=` (automerge-repo's client cannot set headers). */
export function tokenOf(req: http.IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === "string") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  // automerge-repo's own client cannot set headers: it may put the token in the query.
  const q = new URL(req.url ?? "/", "http://x").searchParams.get("token");
  return q ?? undefined;
}

/** Answers an upgrade refused, as HTTP (a JSON error; `Retry-After` when held back), and ends the socket. */
function refuseUpgrade(
  socket: Duplex,
  status: 401 | 403 | 429,
  code: string,
  message: string,
  retryAfter = 0,
): void {
  const body = JSON.stringify({ error: { code, message } });
  const reason = status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : "Too Many Requests";
  const wait = retryAfter > 0 ? `Retry-After: ${retryAfter}\r\n` : "";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${wait}Connection: close\r\n\r\n${body}`,
  );
}

/** A grant narrowed to one graph when the connection's path pins it (`…/g/automerge:<id>`). */
export function pinnedTo(grant: Grant, pinned: string | undefined): Grant {
  if (pinned === undefined) return grant;
  return {
    ...grant,
    access: (documentId) => (documentId === pinned ? grant.access(documentId) : undefined),
  };
}

/** What {@link UpgradeGate.judge} decided: the connection's grant, or a refusal already answered. */
export type UpgradeVerdict =
  | {
      readonly ok: true;
      readonly grant: Grant;
      readonly token: string | undefined;
      /** The graph the path pins (`…/g/automerge:<id>`), whose id alone the grant reaches. */
      readonly pinned: string | undefined;
    }
  | { readonly ok: false; readonly refusal: RefusalEvent | undefined };

/** The check of every upgrade (see the module comment). */
export class UpgradeGate {
  private readonly throttle = new RefusalThrottle();

  /** `tokens`: the table to check against, or undefined while the server is open to anyone. */
  constructor(private readonly tokens: () => TokenTable | undefined) {}

  /** Decides an upgrade; a refusal is answered on `socket` (401, 403 or 429) before this returns. */
  judge(req: http.IncomingMessage, socket: Duplex): UpgradeVerdict {
    const token = tokenOf(req);
    const peer = req.socket.remoteAddress ?? "?";
    const client = `${peer} ${token === undefined ? "-" : tokenDigest(token)}`;
    const wait = this.throttle.heldBack(client);
    if (wait !== undefined) {
      refuseUpgrade(
        socket,
        429,
        "too-many-refusals",
        `refused ${this.throttle.free} times or more in a row: try again in ${wait} s (with a token this server accepts)`,
        wait,
      );
      return { ok: false, refusal: undefined };
    }
    let grant: Grant | undefined = OPEN_GRANT;
    const tokens = this.tokens();
    if (tokens !== undefined) {
      if (token === undefined) {
        refuseUpgrade(
          socket,
          401,
          "unauthorized",
          "a token is required: send `Authorization: Bearer <token>` (kumiki remote add NAME URL --token-file F)",
          this.throttle.refused(client),
        );
        return {
          ok: false,
          refusal: { peer, token: "(none)", documentId: undefined, reason: "no token", code: "unauthorized" },
        };
      }
      grant = tokens.lookup(token);
      if (grant === undefined) {
        refuseUpgrade(
          socket,
          403,
          "forbidden",
          "the token is not accepted by this server (check --token-file)",
          this.throttle.refused(client),
        );
        return {
          ok: false,
          refusal: {
            peer,
            token: "(unknown)",
            documentId: undefined,
            reason: "unknown token",
            code: "forbidden",
          },
        };
      }
    }
    // A connection to a graph's own path (`…/g/automerge:<id>`, what clients use so a proxy can
    // route by graph) reaches that graph only, whatever else its token grants.
    const pinned = /\/g\/automerge:([1-9A-HJ-NP-Za-km-z]+)\/?$/.exec(
      new URL(req.url ?? "/", "http://x").pathname,
    )?.[1];
    this.throttle.accepted(client);
    return { ok: true, grant: pinnedTo(grant, pinned), token, pinned };
  }
}
