/**
 * Accepting sync connections: each HTTP upgrade judged by the {@link UpgradeGate}, a refusal
 * counted and logged, an accepted socket admitted with its grant, named (`c1`, …), logged from
 * `connected` to `closed`, and handed to automerge-repo's WebSocket adapter.
 */
import type http from "node:http";
import type { WebSocketServer } from "ws";
import type { ServerAccess } from "./server-access.js";
import type { ServerEvents } from "./server-events.js";
import type { UpgradeGate } from "./upgrade-gate.js";

/** What {@link acceptConnections} admits connections with. */
export interface ConnectionParts {
  readonly gate: UpgradeGate;
  readonly wss: WebSocketServer;
  readonly access: ServerAccess;
  readonly events: ServerEvents;
  /** The largest message a connection may send (ws closes it with 1009 beyond). */
  readonly maxMessageBytes: number;
}

/** Answers every WebSocket upgrade `server` receives. */
export function acceptConnections(server: http.Server, parts: ConnectionParts): void {
  const { gate, wss, access, events, maxMessageBytes } = parts;
  server.on("upgrade", (req, socket, head) => {
    const verdict = gate.judge(req, socket);
    if (!verdict.ok) {
      if (verdict.refusal !== undefined) events.refused(verdict.refusal);
      else events.throttled();
      return;
    }
    const { grant, token, pinned } = verdict;
    const connection = events.nextConnection();
    wss.handleUpgrade(req, socket, head, (ws) => {
      // A socket error (a message over maxPayload: ws closes the connection with 1009) is this
      // connection's end, not the server's: without a listener it would be thrown.
      ws.on("error", (e: Error & { code?: string }) => {
        if (e.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH")
          events.refused({
            peer: "(unknown)",
            token: grant.name,
            documentId: pinned,
            reason: `a message over ${maxMessageBytes.toLocaleString("en")} bytes (maxMessageBytes): connection closed unread`,
            code: "message-too-large",
          });
        else
          events.say(
            "warn",
            { event: "connection-error", connection, err: e.message },
            `connection error: ${e.message}`,
          );
      });
      access.admit(ws, grant, token, pinned);
      const remote = req.socket.remoteAddress ?? "?";
      events.say(
        "info",
        {
          event: "connected",
          connection,
          remote,
          token: grant.name,
          ...(pinned === undefined ? {} : { graph: `automerge:${pinned}` }),
        },
        `connected: ${remote} (token ${grant.name}, connection ${connection})`,
      );
      events.follow(ws, connection);
      wss.emit("connection", ws, req);
    });
  });
}
