/**
 * The sync server: an automerge-repo Repo over its storage (by default the durable NodeFS storage,
 * `DurableFSStorageAdapter`: atomic, fsynced chunk writes; or PostgreSQL, postgres-storage.ts)
 * with the WebSocket server adapter behind
 * token checks ({@link AccessControlledServerAdapter}). It serves `GET /health` as JSON and
 * refuses a WebSocket upgrade without an accepted token with HTTP 401 or 403 and a JSON reason.
 * It announces nothing: it syncs a graph only with a peer that asks for it and may see it.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import * as A from "@automerge/automerge";
import { type DocumentId, type PeerId, Repo } from "@automerge/automerge-repo";
import type { CapabilityManifest, Store } from "@kumiki-graph/core";
import { WebSocketServer } from "ws";
import { acceptConnections } from "./connections.js";
import { GraphStores } from "./graph-stores.js";
import { HttpFront } from "./http-front.js";
import type { ServerLogger } from "./logger.js";
import { ServerMetrics } from "./metrics.js";
import type { PostgresStorageAdapter } from "./postgres-storage.js";
import { CLOSE_FORBIDDEN } from "./protocol.js";
import { fail, ok, type SyncResult } from "./result.js";
import { RunningSyncServer } from "./running-server.js";
import { followStorageFaults } from "./storage-faults.js";

export { CLOSE_GOING_AWAY } from "./protocol.js";

import { ServerEvents } from "./server-events.js";

export type { RequestAccess } from "./server-access.js";
export { HEALTH_DAMAGE_LIMIT, type SyncServerHealth } from "./server-health.js";
export type { ServerStorage } from "./server-storage.js";

import { PushCheck } from "./push-check.js";
import { type RequestAccess, ServerAccess } from "./server-access.js";
import { AccessControlledServerAdapter, type RefusalEvent } from "./server-adapter.js";
import { type SyncServerHealth, serverHealth } from "./server-health.js";
import { idempotencyLedgerOf, openServerStorage, type ServerStorage } from "./server-storage.js";
import { ShapeCache } from "./shape-cache.js";
import { StoredElsewhere } from "./stored-elsewhere.js";
import type { TokenTable } from "./tokens.js";
import { UpgradeGate } from "./upgrade-gate.js";

/** How {@link startSyncServer} runs. */
export interface SyncServerOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /**
   * The largest WebSocket message read from a peer, in bytes (default
   * {@link DEFAULT_MAX_MESSAGE_BYTES}); a larger one closes the connection (1009) unread. A first
   * push carries every op the server lacks in one message: keep this above the largest graph.
   */
  readonly maxMessageBytes?: number;
  /** The largest bundle one pushed change may insert, in bytes (default {@link DEFAULT_MAX_CHANGE_BYTES}). */
  readonly maxChangeBytes?: number;
  /**
   * Back-pressure: a peer that leaves more than this many bytes of what the server sent it unread
   * is dropped as a slow reader (default {@link DEFAULT_MAX_BUFFERED_BYTES}); it reconnects and
   * syncs on. What the server holds for one stalled peer is bounded by this and one message.
   */
  readonly maxBufferedBytes?: number;
  /**
   * The capability manifest (`kumiki.caps.json`) the server's own stores check every graph with
   * (its write gate, and what an edge on the server gives `check` and `fix`), as a workspace with
   * that file beside it does; default none.
   */
  readonly capabilities?: CapabilityManifest;
  /** Interface to bind; default 127.0.0.1 (this machine only). */
  readonly host?: string;
  /**
   * Where the graphs are stored (created if absent), in the durable FS storage; give this or
   * `storage`.
   */
  readonly dataDir?: string;
  /**
   * A storage of the caller's (PostgreSQL: {@link PostgresStorageAdapter.open}), in place of
   * `dataDir`. The server does not close it: close it after the server.
   */
  readonly storage?: ServerStorage;
  /** Accepted tokens; without a table every client may read and write every graph. */
  readonly tokens?: TokenTable;
  /**
   * With `tokens` (a table that changes while the server runs, tokens kept in a database): while
   * the table holds none, every client may read and write, as without a table; once it holds
   * some, every connection needs one, and the connections made without are closed (4403). One
   * way: a table emptied later does not open the server again (restart it for that).
   */
  readonly openUntilTokens?: boolean;
  /**
   * How long a {@link SyncServer.drain} waits for requests and peers' messages in flight, ms
   * (default {@link DEFAULT_DRAIN_MS}).
   */
  readonly drainMs?: number;
  /**
   * Receives each notable event (connections, refusals, a drain that ran out of time) as fields and
   * a message, at a level: for JSON logs (`jsonServerLogger()`, or a pino logger of your own).
   * When given, {@link log} is not called.
   */
  readonly logger?: ServerLogger;
  /** Receives one line per notable event (connections, refusals). */
  readonly log?: (line: string) => void;
  /**
   * Other HTTP routes on the same port (the MCP endpoint of each graph, `/g/<graph>/mcp`): called
   * for every request that is not `/health`; return true when it took the request.
   */
  readonly routes?: (req: http.IncomingMessage, res: http.ServerResponse, server: SyncServer) => boolean;
}

/** The largest WebSocket message a server reads, unless told otherwise: 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** {@link SyncServerOptions.maxBufferedBytes}'s default: 64 MiB unread by one peer. */
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** The largest bundle (one write's ops) a pushed change may insert, unless told otherwise: 16 MiB. */
export const DEFAULT_MAX_CHANGE_BYTES = 16 * 1024 * 1024;

/** How long a drain waits for what is in flight by default, ms (a SIGTERM's grace is usually 30 s). */
export const DEFAULT_DRAIN_MS = 10_000;

/** A running sync server. */
export interface SyncServer {
  /** `ws://host:port`, what clients connect to. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The Repo holding the graphs (tests and benchmarks inspect it). */
  readonly repo: Repo;
  /** What `GET /health` answers: status, storage, auth, graphs and connections (no secret). */
  health(): SyncServerHealth;
  /** Refusals so far, oldest first. */
  refusals(): readonly RefusalEvent[];
  /** What `GET /metrics` answers: the server's metrics in Prometheus' text format (metrics.ts). */
  metrics(): Promise<string>;
  /**
   * The server's own store of a graph (`automerge:<id>`), opened on first use (graph-stores.ts):
   * its writes are the server's copy's, durable before they are answered and sent on to peers.
   */
  openStore(graph: string): Promise<SyncResult<Store>>;
  /**
   * What `req`'s token (`Authorization: Bearer`, as for a WebSocket) grants on a graph, under the
   * same tokens and grants as sync (asked again at each request: a withdrawn token is refused).
   */
  accessOf(req: http.IncomingMessage, graph: string): RequestAccess;
  /**
   * Stops taking new work and waits (at most `drainMs`) for what is in flight: no new connection,
   * upgrade or request (one on a kept-alive connection is answered 503 `shutting-down`), every HTTP
   * request received answered, every peer's queued messages and flush requests handled. {@link close}
   * drains first; call this alone to close the server's neighbours in between (`kumiki serve`'s MCP).
   */
  drain(): Promise<void>;
  /**
   * Drains ({@link drain}), flushes every graph to disk, closes every peer's socket with 1001
   * (going away: reconnect later) and stops listening.
   */
  close(): Promise<void>;
}

/** Starts a sync server; resolves once it listens (or with `listen-failed`). */
export async function startSyncServer(options: SyncServerOptions): Promise<SyncResult<SyncServer>> {
  const started = Date.now();
  const opened = openServerStorage(options);
  if (!opened.ok) return opened;
  const { storage, own } = opened.value;
  // Read at each scrape: `wss` and `repo` are set before the server listens.
  const metrics = new ServerMetrics({
    connections: () => wss.clients.size,
    graphs: () => Object.keys(repo.handles).length,
    storageFault: () => storage.fault !== undefined,
  });
  const events = new ServerEvents(options, metrics);
  const access = new ServerAccess(options.tokens, options.openUntilTokens === true);
  // A larger message is not read into memory: ws closes the connection (1009), and the client
  // says why (client-adapter.ts).
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  const shapes = new ShapeCache();
  let repo: Repo;
  const handleOf = (documentId: string) => handleIn(repo, documentId);
  const pushCheck = new PushCheck({
    handleOf,
    shapes,
    maxChangeBytes: options.maxChangeBytes ?? DEFAULT_MAX_CHANGE_BYTES,
  });
  const adapter = serverAdapter(wss, {
    access,
    pushCheck,
    metrics,
    events,
    storage,
    repo: () => repo,
    maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
  });
  repo = await serverRepo(storage, own === undefined, adapter);
  // Another server on the same storage stored a change: a graph loaded here takes it in, and
  // automerge-repo sends it on to this server's peers of that graph, live.
  const elsewhere = new StoredElsewhere(repo, storage, {
    stale: (documentId) => shapes.stale(documentId),
    failed: (e) =>
      events.say(
        "error",
        { event: "take-in-failed", err: String(e) },
        `taking in a change stored by another server failed: ${String(e)}`,
      ),
  });
  const stores = new GraphStores(repo, {
    handleOf,
    ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities }),
    // The server's own writes grow a graph's document: the peers' change check reads its shape again.
    appended: (documentId) => shapes.stale(documentId),
    catchUp: (documentId) => elsewhere.catchUp(documentId),
    fence: (documentId) => elsewhere.fence(documentId),
    ledgerOf: (documentId) => idempotencyLedgerOf(storage, options.dataDir, documentId),
  });
  // Tokens that change while the server runs (kept in a database): every grant looked up again.
  const unwatchTokens = options.tokens?.onChange?.(() => reviewGrants(access, wss, events, adapter));
  let self: SyncServer | undefined;
  const front = new HttpFront({
    health: () => serverHealth({ storage, repo, events, access, started }),
    metrics,
    ...(options.routes === undefined
      ? {}
      : { routes: (req, res) => self !== undefined && options.routes!(req, res, self) }),
  });
  const gate = new UpgradeGate(() => access.tokensInForce());
  acceptConnections(front.server, { gate, wss, access, events, maxMessageBytes });
  const releaseFaults = followStorageFaults(storage);
  // automerge-repo connects its network adapter once it has read the storage id: a peer that
  // joined before then was never answered (a plain automerge-repo client hung until it retried).
  await adapter.connected;
  const host = options.host ?? "127.0.0.1";
  const listening = await listen(front.server, host, options.port ?? 0);
  if (!listening.ok) {
    releaseFaults();
    await repo.shutdown().catch(() => undefined);
    wss.close();
    own?.dispose();
    return listening;
  }
  self = new RunningSyncServer(
    { host, port: listening.value.port, drainMs: options.drainMs ?? DEFAULT_DRAIN_MS, started },
    { repo, wss, front, adapter, stores, events, access, metrics, storage },
    () => {
      elsewhere.close();
      unwatchTokens?.();
    },
    () => {
      own?.dispose();
      releaseFaults();
    },
  );
  return ok(self);
}

/** A graph's handle, loaded (or found unavailable, or still asked for) first. */
async function handleIn(repo: Repo, documentId: string) {
  const states = ["ready", "unavailable", "requesting"] as const;
  const handle =
    repo.handles[documentId as DocumentId] ??
    (await repo.find(documentId as DocumentId, { allowableStates: [...states] }));
  await handle.whenReady([...states]);
  return handle;
}

/**
 * The WebSocket adapter between the peers and the Repo: each push checked (timed, its new ops
 * counted), each flush request answered with the heads stored, refusals and slow peers told.
 */
function serverAdapter(
  wss: WebSocketServer,
  parts: {
    readonly access: ServerAccess;
    readonly pushCheck: PushCheck;
    readonly metrics: ServerMetrics;
    readonly events: ServerEvents;
    readonly storage: ServerStorage;
    readonly repo: () => Repo;
    readonly maxBufferedBytes: number;
  },
): AccessControlledServerAdapter {
  const { access, pushCheck, metrics, events, storage } = parts;
  return new AccessControlledServerAdapter(wss, {
    grantOf: (socket) => access.grantOf(socket),
    check: (documentId, entries, grant) =>
      metrics.timeCheck(async () => {
        const verdict = await pushCheck.check(documentId, entries, grant);
        if (verdict.ok) metrics.accepted(verdict.newOps);
        return verdict;
      }),
    flush: (documentId) => metrics.timeFlush(() => flushGraph(parts.repo(), storage, metrics, documentId)),
    onRefused: (e) => events.refused(e),
    maxBufferedBytes: parts.maxBufferedBytes,
    onSlowPeer: (e) => events.slowPeer(e),
    storageFault: () => storage.fault?.message,
  });
}

/**
 * The server's Repo over its storage and network. Servers sharing one database share its storage
 * id; each process is a peer of its own. Nothing is offered to a peer that did not ask for it; a
 * graph a peer synced before is offered again when it reconnects (hasAsked).
 */
async function serverRepo(
  storage: ServerStorage,
  shared: boolean,
  adapter: AccessControlledServerAdapter,
): Promise<Repo> {
  const idBytes = await storage.load(["storage-adapter-id"]);
  const storageId = idBytes === undefined ? "unknown" : Buffer.from(idBytes).toString("utf8");
  return new Repo({
    storage,
    network: [adapter],
    peerId: (shared
      ? `kumiki-sync-server-${storageId}-${process.pid}-${randomUUID().slice(0, 8)}`
      : `kumiki-sync-server-${storageId}`) as PeerId,
    shareConfig: {
      announce: async (peer, documentId) =>
        documentId !== undefined &&
        adapter.hasAsked(peer, documentId) &&
        adapter.accessOf(peer, documentId) !== undefined,
      access: async (peer, documentId) =>
        documentId !== undefined && adapter.accessOf(peer, documentId) !== undefined,
    },
  });
}

/** A graph stored durably at a client's request: the heads stored, or none when the storage failed. */
async function flushGraph(
  repo: Repo,
  storage: ServerStorage,
  metrics: ServerMetrics,
  documentId: string,
): Promise<string[]> {
  const handle = repo.handles[documentId as DocumentId];
  if (handle === undefined || !handle.isReady()) return [];
  const heads = A.getHeads(handle.doc());
  try {
    await repo.flush([documentId as DocumentId]);
  } catch (e) {
    // Not durable (a full disk): confirm nothing, so the client keeps its ops as unpushed.
    if (!storage.threw(e)) throw e;
    metrics.storageFailed();
    return [];
  }
  return heads;
}

/** The tokens changed: every connection's grant looked up again, a withdrawn token's connection closed. */
function reviewGrants(
  access: ServerAccess,
  wss: WebSocketServer,
  events: ServerEvents,
  adapter: AccessControlledServerAdapter,
): void {
  const review = access.review(wss.clients);
  if (review === undefined) return;
  if (review.closedToAll !== undefined)
    events.say(
      "info",
      { event: "tokens-stored", tokens: review.closedToAll },
      `tokens were stored (${review.closedToAll}): from now on every connection needs one`,
    );
  for (const { socket, presented, reason } of review.withdrawn) {
    events.say(
      "info",
      { event: "token-withdrawn", connection: events.connectionOf(socket) },
      `disconnected: its token (${presented ? "withdrawn" : "none"}) is no longer accepted`,
    );
    socket.close(CLOSE_FORBIDDEN, reason);
  }
  adapter.reviewGrants();
}

/** Listens on `host:port`: the address, or `listen-failed` naming why. */
function listen(server: http.Server, host: string, port: number): Promise<SyncResult<AddressInfo>> {
  return new Promise((resolve) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      resolve(
        fail("listen-failed", `cannot listen on ${host}:${port}: ${e.code ?? e.message}`, { host, port }),
      ),
    );
    server.listen(port, host, () => resolve(ok(server.address() as AddressInfo)));
  });
}
