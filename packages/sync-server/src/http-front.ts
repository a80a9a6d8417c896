/**
 * The sync server's HTTP front: `GET /health`, `GET /metrics`, the caller's routes (`kumiki serve`'s
 * MCP endpoints, timed on /metrics, and its live views), 404 for the rest, and the drain a closing server goes through
 * (no new connection; requests received answered; one that comes meanwhile answered 503). The
 * WebSocket upgrades it receives are the server's (server.ts listens for them on {@link server}).
 */
import http from "node:http";
import type { ServerMetrics } from "./metrics.js";

/** What the front answers from: the server's health and metrics, and the caller's routes. */
export interface HttpFrontParts<Health extends { readonly ok: boolean }> {
  health(): Health;
  readonly metrics: ServerMetrics;
  /** The caller's routes; true when one took the request (see SyncServerOptions.routes). */
  routes?(req: http.IncomingMessage, res: http.ServerResponse): boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The HTTP server of a sync server and what it has in flight (see the module comment). */
export class HttpFront<Health extends { readonly ok: boolean }> {
  readonly server: http.Server;
  /** Set once the front drains: new requests are turned away. */
  private draining = false;
  /** Requests (other than GET) received and not yet answered: what a drain waits for. */
  private readonly inFlight = new Set<http.ServerResponse>();

  constructor(private readonly parts: HttpFrontParts<Health>) {
    this.server = http.createServer((req, res) => this.answer(req, res));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://x");
    if (this.draining) {
      res.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1" });
      res.end(
        `${JSON.stringify({ error: { code: "shutting-down", message: "the server is shutting down: nothing was done; retry on another server or once it is back" } })}\n`,
      );
      return;
    }
    // A GET may be a stream that stays open (an MCP session's event stream): not waited for.
    if (req.method !== "GET" && req.method !== "HEAD") {
      this.inFlight.add(res);
      res.once("close", () => this.inFlight.delete(res));
    }
    const { metrics } = this.parts;
    if (url.pathname !== "/health" && url.pathname !== "/metrics" && this.parts.routes !== undefined) {
      // kumiki_mcp_request_seconds times MCP endpoints' requests only: a live view's (its page,
      // its JSON, an event stream open for hours) are not MCP's.
      const answered = /\/mcp\/?$/.test(url.pathname) ? metrics.mcpRequest() : undefined;
      if (this.parts.routes(req, res)) {
        if (answered !== undefined) res.once("finish", () => answered(res.statusCode));
        return;
      }
    }
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(`${JSON.stringify(body)}\n`);
    };
    const read = req.method === "GET" || req.method === "HEAD";
    if (url.pathname === "/health" && read) {
      const h = this.parts.health();
      json(h.ok ? 200 : 503, h);
    } else if (url.pathname === "/metrics" && read) {
      void metrics.scrape().then(
        (m) => {
          res.writeHead(200, { "content-type": m.contentType });
          res.end(req.method === "HEAD" ? undefined : m.text);
        },
        (e: unknown) => json(500, { error: { code: "internal", message: `metrics: ${String(e)}` } }),
      );
    } else
      json(404, {
        error: {
          code: "not-found",
          message: `no ${req.method} ${url.pathname}: try GET /health, GET /metrics, or a WebSocket`,
        },
      });
  }

  /**
   * Stops taking new work — no new connection or upgrade, an idle kept-alive connection closed, a
   * request on a busy one answered 503 — and waits at most `ms` until every request received is
   * answered and `settled` (the peers' messages) says yes. Resolves with the requests still
   * unanswered then (0 when all were).
   */
  async drain(ms: number, settled: () => boolean): Promise<number> {
    this.draining = true;
    this.server.close();
    this.server.closeIdleConnections();
    const deadline = Date.now() + ms;
    while (!(this.inFlight.size === 0 && settled()) && Date.now() < deadline) await sleep(10);
    return this.inFlight.size;
  }
}
