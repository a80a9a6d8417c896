/**
 * MCP over Streamable HTTP (the MCP spec's remote transport, 2025-03-26 and later): one endpoint,
 * one session per client (`Mcp-Session-Id`), each a session of session.ts over one shared graph,
 * through the SDK's `StreamableHTTPServerTransport` (POST for calls, GET for the stream of server
 * notifications, DELETE to end; resumable with `Last-Event-ID`). The same tools, answers and errors
 * as stdio: one implementation, two transports.
 *
 * What this adds to the SDK's transport: DNS-rebinding protection (the Host and Origin headers,
 * checked here as the spec's security section asks; the SDK's own check is deprecated in favour of
 * the server's), access per request (`authorize`: tokens, read-only sessions), a bound on the
 * request body, on the sessions held and on their idle time, and answers for the cases the SDK
 * leaves to the server (no session, an unknown one, too many).
 */
import { randomUUID } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { letStorageFaultsGo } from "@kumiki-graph/storage-automerge";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { SessionEventStore } from "./event-store.js";
import { REQUEST_BYTES } from "./line-limit.js";
import { type McpServerOptions, openMcpGraph, type StartupError } from "./server.js";
import { createMcpSession, type McpGraph, type McpSession } from "./session.js";

/**
 * The SDK's HTTP transport, loaded when an HTTP endpoint is made rather than with this module: it
 * brings Hono's Node adapter and Node's fetch (undici), which `kumiki mcp serve` over stdio — an
 * agent's every new session, from the same bundle chunk as this module — never uses (its first
 * answer at 180 definitions: 815 -> 790 ms of CPU, medians of 12 interleaved starts).
 */
let transportModule: Promise<typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js")> | undefined;
const loadTransport = () =>
  (transportModule ??= import("@modelcontextprotocol/sdk/server/streamableHttp.js"));

/** Who may use the endpoint: what a request's credentials grant, or why they grant nothing. */
export type HttpAccess =
  | {
      readonly ok: true;
      /** Who the request is (a token's name; "" without tokens). */
      readonly name: string;
      readonly readOnly: boolean;
      /** The author of the session's writes, when not the store's own. */
      readonly author?: string;
    }
  | { readonly ok: false; readonly status: 401 | 403; readonly message: string };

/** How {@link mcpHttpHandler} serves. */
export interface McpHttpOptions {
  /** The graph every session shares. */
  readonly graph: McpGraph;
  /**
   * Origins a browser page may call from (`https://app.example`), besides the server's own (the
   * origin its Host header names). A request whose `Origin` header is another is refused (403);
   * clients that are not browsers send none. Default: none.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * Host names (no port) the `Host` header may name; default: any. A server on a loopback
   * address should allow only loopback names ({@link LOOPBACK_HOSTS}), so that a page on another
   * name that resolves to 127.0.0.1 (DNS rebinding) cannot reach it.
   */
  readonly allowedHosts?: readonly string[];
  /** The access of each request (every request, so that a withdrawn token stops at once); default: all. */
  readonly authorize?: (req: IncomingMessage) => HttpAccess;
}

/** The Host names of this machine's loopback addresses. */
export const LOOPBACK_HOSTS: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/** The MCP endpoint's request handler, and its sessions. */
export interface McpHttpHandler {
  /** Serves one request to the endpoint (POST, GET or DELETE). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The sessions open now. */
  sessions(): number;
  /**
   * Ends the sessions whose access `authorize` no longer grants (a token withdrawn): call it when
   * the tokens change. Returns how many were ended.
   */
  review(): Promise<number>;
  /** Ends every session, after the calls in flight have their answers. */
  close(): Promise<void>;
}

interface Held {
  readonly transport: StreamableHTTPServerTransport;
  readonly session: McpSession;
  readonly access: Extract<HttpAccess, { ok: true }>;
  /** The request that opened it, for review() to ask `authorize` again. */
  readonly headers: IncomingMessage["headers"];
  /** When its last request ended (or began, while none is open). */
  seen: number;
  /** Its requests open now: calls in flight and the GET stream of notifications. */
  open: number;
  /** Its POSTs open now (calls and their answers): an ending session answers them first. */
  posts: number;
  /** Called when {@link posts} drops to 0 while the session is ending. */
  postsDone?: () => void;
}

/** Counts `req` among `h`'s open requests (and POSTs) until its response closes. */
function track(h: Held, req: IncomingMessage, res: ServerResponse): void {
  h.seen = Date.now();
  h.open++;
  const post = req.method === "POST";
  if (post) h.posts++;
  res.once("close", () => {
    h.open--;
    h.seen = Date.now();
    if (post && --h.posts === 0) h.postsDone?.();
  });
}

/**
 * Why a request is refused as a possible DNS rebinding (a Host not allowed, or a browser Origin
 * that is neither the server's own nor allowed); undefined when it is not.
 */
function rebindingRefusal(
  req: IncomingMessage,
  options: Pick<McpHttpOptions, "allowedHosts" | "allowedOrigins">,
): string | undefined {
  const host = req.headers.host ?? "";
  if (options.allowedHosts !== undefined && !options.allowedHosts.includes(hostName(host)))
    return `the Host ${JSON.stringify(host)} is not one this server answers to`;
  const origin = req.headers.origin;
  // A page of the server's own origin (what its Host says) is not a rebinding; any other is
  // refused unless allowed.
  const own = origin === `http://${host}` || origin === `https://${host}`;
  if (origin !== undefined && !own && !(options.allowedOrigins ?? []).includes(origin))
    return `requests from the origin ${JSON.stringify(origin)} are refused (the server allows ${options.allowedOrigins?.length ? options.allowedOrigins.join(", ") : "no browser origin"})`;
  return undefined;
}

/** Resolves once `h` has no POST open (its answers written). */
function postsAnswered(h: Held): Promise<void> {
  if (h.posts === 0) return Promise.resolve();
  return new Promise((resolve) => {
    h.postsDone = resolve;
  });
}

/** A JSON-RPC error answer over HTTP (no request id: the request may not have been read). */
export function refuse(res: ServerResponse, status: number, code: number, message: string, extra = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...extra });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** The request's body, at most REQUEST_BYTES; `undefined` when it is larger. */
async function bodyOf(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function hostName(host: string): string {
  return host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
}

/** A request's JSON body (none for a GET or DELETE), or the refusal it gets: over the size limit, not JSON. */
async function jsonBody(
  req: IncomingMessage,
): Promise<{ ok: true; body: unknown } | { ok: false; status: number; code: number; message: string }> {
  if (req.method !== "POST") return { ok: true, body: undefined };
  const raw = await bodyOf(req);
  if (raw === undefined)
    return {
      ok: false,
      status: 413,
      code: -32600,
      message: `the request is over ${REQUEST_BYTES.toLocaleString("en")} bytes (send large texts in parts); nothing was done`,
    };
  try {
    return { ok: true, body: JSON.parse(raw.toString("utf8")) };
  } catch {
    return { ok: false, status: 400, code: -32700, message: "the request body is not JSON" };
  }
}

/** The sessions of one endpoint: held by id until they end (asked, idle, access changed, closed). */
class HttpSessions {
  readonly held = new Map<string, Held>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly graph: McpGraph) {
    const idleMs = graph.limits.idleSeconds * 1000;
    this.sweep = setInterval(() => this.endIdle(idleMs), Math.min(idleMs / 4, 30_000));
    this.sweep.unref();
  }

  /**
   * A session with a call in flight or its notification stream open is in use, however long
   * since its last request; the idle clock runs from when its last one closed.
   */
  private endIdle(idleMs: number): void {
    const now = Date.now();
    for (const [id, h] of this.held)
      if (h.open === 0 && now - h.seen > idleMs) {
        this.graph.log(`session ${id} ended: idle for ${this.graph.limits.idleSeconds} s`);
        void this.end(id);
      }
  }

  async end(id: string): Promise<void> {
    const h = this.held.get(id);
    if (h === undefined) return;
    this.held.delete(id);
    // A POST received before the session ended is answered first: the session's drain counts the
    // calls it has begun, and a request still on its way to the session (parsed, not dispatched)
    // was seen cut off when review() ended the session under load (the client timed out).
    await Promise.race([
      Promise.all([h.session.drain(), postsAnswered(h)]),
      new Promise((r) => setTimeout(r, 10_000).unref()),
    ]);
    await h.transport.close().catch(() => undefined);
    await h.session.close();
  }

  /** Begins a session with an initialize request, under `access`, and answers it. */
  async begin(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    access: Extract<HttpAccess, { ok: true }>,
  ): Promise<void> {
    const { StreamableHTTPServerTransport } = await loadTransport();
    const session = createMcpSession(this.graph, {
      readOnly: access.readOnly,
      ...(access.author === undefined ? {} : { author: access.author }),
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new SessionEventStore(),
      onsessioninitialized: (sid) => {
        const now = Date.now();
        this.held.set(sid, {
          transport,
          session,
          access,
          headers: req.headers,
          seen: now,
          open: 0,
          posts: 0,
        });
        this.graph.log(
          `session ${sid} began (${access.name || "no token"}${access.readOnly ? ", read-only" : ""})`,
        );
      },
      onsessionclosed: (sid) => void this.end(sid),
    });
    transport.onclose = () => {
      const sid = transport.sessionId;
      if (sid !== undefined) void this.end(sid);
    };
    await session.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.held.keys()].map((id) => this.end(id)));
  }
}

/** Serves MCP sessions over `options.graph` at one HTTP endpoint; route requests to `handle`. */
export function mcpHttpHandler(options: McpHttpOptions): McpHttpHandler {
  const { graph } = options;
  // Loading begins now, so the first client does not wait for it.
  loadTransport().catch(() => undefined);
  const sessions = new HttpSessions(graph);
  const held = sessions.held;
  const everyone: HttpAccess = { ok: true, name: "", readOnly: false };
  const authorize = options.authorize ?? (() => everyone);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rebinding = rebindingRefusal(req, options);
    if (rebinding !== undefined) return refuse(res, 403, -32000, rebinding);
    const access = authorize(req);
    if (!access.ok) {
      const challenge = access.status === 401 ? { "www-authenticate": "Bearer" } : {};
      return refuse(res, access.status, -32000, access.message, challenge);
    }
    const parsed = await jsonBody(req);
    if (!parsed.ok) return refuse(res, parsed.status, parsed.code, parsed.message);
    const body = parsed.body;
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const h = held.get(id);
      // 404 tells the client to start a new session (the spec's rule for an ended one).
      if (h === undefined)
        return refuse(res, 404, -32001, "no such session (ended or never begun): initialize a new one");
      if (h.access.name !== access.name)
        return refuse(
          res,
          403,
          -32000,
          "the session belongs to another token: initialize a new one with yours",
        );
      track(h, req, res);
      await h.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== "POST" || !isInitializeRequest(body))
      return refuse(res, 400, -32000, "no Mcp-Session-Id: begin with an initialize request");
    if (held.size >= graph.limits.httpSessions)
      return refuse(
        res,
        503,
        -32000,
        `the server holds ${graph.limits.httpSessions} sessions, its limit (httpSessions): end one (DELETE) or retry later`,
        { "retry-after": "5" },
      );
    await sessions.begin(req, res, body, access);
  };

  return {
    handle: async (req, res) => {
      try {
        await handle(req, res);
      } catch (e) {
        graph.log(`HTTP ${req.method} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        refuse(res, 500, -32603, "the server failed on this request (a bug); the operator's log has it");
      }
    },
    sessions: () => held.size,
    async review() {
      let ended = 0;
      for (const [id, h] of held) {
        const now = authorize({ headers: h.headers } as IncomingMessage);
        if (!now.ok || now.name !== h.access.name || now.readOnly !== h.access.readOnly) {
          graph.log(`session ${id} ended: its access changed`);
          await sessions.end(id);
          ended++;
        }
      }
      return ended;
    },
    close: () => sessions.close(),
  };
}

/** How {@link serveHttp} runs: the workspace's options, and where to listen. */
export interface HttpServeOptions extends McpServerOptions {
  /** Interface to bind; default 127.0.0.1 (this machine only). */
  readonly host?: string;
  /** TCP port; 0 picks a free one. */
  readonly port?: number;
  /** Browser origins allowed (see {@link McpHttpOptions.allowedOrigins}). */
  readonly allowedOrigins?: readonly string[];
}

/** A running HTTP server of one workspace. */
export interface HttpMcpServer {
  /** The endpoint: `http://host:port/mcp`. */
  readonly url: string;
  readonly port: number;
  readonly handler: McpHttpHandler;
  /** Ends the sessions, stops listening and closes the store. */
  close(): Promise<void>;
}

/**
 * Serves a local workspace over Streamable HTTP at `/mcp` (`kumiki mcp serve --http`), with
 * `GET /health`. Bound to a loopback address, it answers only to loopback Host names. The process
 * is the server's: a background save that fails (a full disk) does not end it, as for stdio.
 */
export async function serveHttp(
  options: HttpServeOptions,
): Promise<{ ok: true; value: HttpMcpServer } | { ok: false; error: StartupError }> {
  letStorageFaultsGo();
  const opened = await openMcpGraph(options);
  if (!opened.ok) return opened;
  const graph = opened.value;
  const host = options.host ?? "127.0.0.1";
  const loopback = ["127.0.0.1", "::1", "localhost"].includes(host);
  const handler = mcpHttpHandler({
    graph,
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
    ...(loopback ? { allowedHosts: LOOPBACK_HOSTS } : {}),
  });
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/mcp") void handler.handle(req, res);
    else if (path === "/health" && req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`${JSON.stringify({ ok: true, service: "kumiki-mcp", sessions: handler.sessions() })}\n`);
    } else refuse(res, 404, -32000, `no ${req.method} ${path}: the MCP endpoint is /mcp`);
  });
  const listening = await new Promise<AddressInfo | string>((resolve) => {
    server.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    server.listen(options.port ?? 0, host, () => resolve(server.address() as AddressInfo));
  });
  if (typeof listening === "string") {
    await handler.close();
    await graph.close();
    return {
      ok: false,
      error: {
        code: "listen-failed",
        message: `cannot listen on ${host}:${options.port ?? 0}: ${listening}`,
      },
    };
  }
  const urlHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    ok: true,
    value: {
      url: `http://${urlHost}:${listening.port}/mcp`,
      port: listening.port,
      handler,
      close() {
        closing ??= (async () => {
          await handler.close();
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          });
          await graph.close();
        })();
        return closing;
      },
    },
  };
}
