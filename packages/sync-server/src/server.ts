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
import { type WebSocket, WebSocketServer } from "ws";
import { acceptConnections } from "./connections.js";
import { GraphStores } from "./graph-stores.js";
import { HttpFront } from "./http-front.js";
import type { ServerLogger } from "./logger.js";
import { ServerMetrics } from "./metrics.js";
import type { PostgresStorageAdapter } from "./postgres-storage.js";
import { CLOSE_FORBIDDEN } from "./protocol.js";
import { fail, ok, type SyncResult } from "./result.js";
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
import { SyncStateKeeper } from "./sync-state.js";
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

/** The storages of the servers running in this process, for {@link watchStorageFaults}. */
const faultSources = new Set<ServerStorage>();
let watching = false;

/**
 * automerge-repo saves in the background and does not catch a failed save: an ENOSPC from the
 * storage became an unhandled rejection and ended the server, and every client lost it. A fault
 * one of our storages threw is handled here instead: `/health` reports it (503) until a write as
 * large as the failed one fits again, no push is confirmed meanwhile, and the next save retries.
 * Anything else is rethrown, so a bug still ends the process as it would without this handler.
 */
function watchStorageFaults(): void {
  if (watching) return;
  watching = true;
  process.on("unhandledRejection", (reason) => {
    for (const s of faultSources) if (s.threw(reason)) return;
    // automerge-repo's own wait for a document that never became ready (60 s, withTimeout): its
    // synchronizer does not catch it (DocSynchronizer.beginSync), and after a storage fault left a
    // document loading it ended the server about a minute later. The document's peers are told
    // it is unavailable by the Repo; the server serves on.
    if (isRepoTimeout(reason)) {
      process.stderr.write(
        `kumiki sync server: ${(reason as Error).message} (a document did not become ready); serving on\n`,
      );
      return;
    }
    throw reason;
  });
}

/** automerge-repo's TimeoutError (helpers/withTimeout.js), told by its name and message. */
function isRepoTimeout(reason: unknown): boolean {
  return (
    reason instanceof Error && reason.name === "TimeoutError" && reason.message.startsWith("withTimeout:")
  );
}

/** The largest WebSocket message a server reads, unless told otherwise: 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** {@link SyncServerOptions.maxBufferedBytes}'s default: 64 MiB unread by one peer. */
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** The largest bundle (one write's ops) a pushed change may insert, unless told otherwise: 16 MiB. */
export const DEFAULT_MAX_CHANGE_BYTES = 16 * 1024 * 1024;

/** How long a drain waits for what is in flight by default, ms (a SIGTERM's grace is usually 30 s). */
export const DEFAULT_DRAIN_MS = 10_000;

/** WebSocket close code of a server shutting down: the client reconnects later (RFC 6455 "going away"). */
export const CLOSE_GOING_AWAY = 1001;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Closes each socket with {@link CLOSE_GOING_AWAY} and waits (at most 1 s) for the peers to answer
 * the close; the caller terminates what is left.
 */
async function goingAway(sockets: readonly WebSocket[]): Promise<void> {
  const closed = sockets.map(
    (ws) =>
      new Promise<void>((resolve) => {
        if (ws.readyState === ws.CLOSED) return resolve();
        ws.once("close", () => resolve());
        ws.close(CLOSE_GOING_AWAY, "the server is shutting down: reconnect later");
      }),
  );
  await Promise.race([Promise.all(closed), sleep(1000)]);
}

/** A running sync server. */
export interface SyncServer {
  /** `ws://host:port`, what clients connect to. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The Repo holding the graphs (tests and benchmarks inspect it). */
  readonly repo: Repo;
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
  const host = options.host ?? "127.0.0.1";
  const started = Date.now();
  // Read at each scrape; `wss`, `repo` and `storage` are set before the server listens.
  const metrics = new ServerMetrics({
    connections: () => wss.clients.size,
    graphs: () => Object.keys(repo.handles).length,
    storageFault: () => storage.fault !== undefined,
  });
  const events = new ServerEvents(
    {
      ...(options.log === undefined ? {} : { log: options.log }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
    metrics,
  );
  const say = events.say.bind(events);

  const opened = openServerStorage(options);
  if (!opened.ok) return opened;
  const { storage, own } = opened.value;

  const access = new ServerAccess(options.tokens, options.openUntilTokens === true);
  const maxChangeBytes = options.maxChangeBytes ?? DEFAULT_MAX_CHANGE_BYTES;
  // A larger message is not read into memory: ws closes the connection (1009), and the client
  // says why (client-adapter.ts).
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  const shapes = new ShapeCache();
  const readyGraphs = () =>
    Object.values(repo.handles)
      .filter((h) => h.isReady())
      .map((h) => h.documentId);
  let repo: Repo;

  const handleOf = async (documentId: string) => {
    const cached = repo.handles[documentId as DocumentId];
    const handle =
      cached ??
      (await repo.find(documentId as DocumentId, {
        allowableStates: ["ready", "unavailable", "requesting"],
      }));
    await handle.whenReady(["ready", "unavailable", "requesting"]);
    return handle;
  };

  const pushCheck = new PushCheck({ handleOf, shapes, maxChangeBytes });

  /** A graph stored durably at a client's request: the heads stored, or none when the storage failed. */
  const flushGraph = async (documentId: string): Promise<string[]> => {
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
  };

  const adapter = new AccessControlledServerAdapter(wss, {
    grantOf: (socket) => access.grantOf(socket),
    check: (documentId, entries, grant) =>
      metrics.timeCheck(async () => {
        const verdict = await pushCheck.check(documentId, entries, grant);
        if (verdict.ok) metrics.accepted(verdict.newOps);
        return verdict;
      }),
    flush: (documentId) => metrics.timeFlush(() => flushGraph(documentId)),
    onRefused: (e) => events.refused(e),
    maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    onSlowPeer: (e) => events.slowPeer(e),
    storageFault: () => storage.fault?.message,
  });

  const idBytes = await storage.load(["storage-adapter-id"]);
  const storageId = idBytes === undefined ? "unknown" : Buffer.from(idBytes).toString("utf8");
  repo = new Repo({
    storage,
    network: [adapter],
    // Servers sharing one database share its storage id; each process is a peer of its own.
    peerId: (own === undefined
      ? `kumiki-sync-server-${storageId}-${process.pid}-${randomUUID().slice(0, 8)}`
      : `kumiki-sync-server-${storageId}`) as PeerId,
    shareConfig: {
      // Nothing is offered to a peer that did not ask for it; a graph a peer synced before is
      // offered again when it reconnects, which restarts that sync afresh (hasAsked).
      announce: async (peer, documentId) =>
        documentId !== undefined &&
        adapter.hasAsked(peer, documentId) &&
        adapter.accessOf(peer, documentId) !== undefined,
      access: async (peer, documentId) =>
        documentId !== undefined && adapter.accessOf(peer, documentId) !== undefined,
    },
  });

  // Another server on the same storage stored a change: a graph loaded here takes it in, and
  // automerge-repo sends it on to this server's peers of that graph, live.
  const elsewhere = new StoredElsewhere(repo, storage, {
    stale: (documentId) => shapes.stale(documentId),
    failed: (e) =>
      say(
        "error",
        { event: "take-in-failed", err: String(e) },
        `taking in a change stored by another server failed: ${String(e)}`,
      ),
  });
  // The server's own writes to a graph grow its document: the peers' change check reads its shape again.
  const stores = new GraphStores(repo, {
    handleOf,
    ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities }),
    appended: (documentId) => shapes.stale(documentId),
    catchUp: (documentId) => elsewhere.catchUp(documentId),
    fence: (documentId) => elsewhere.fence(documentId),
    ledgerOf: (documentId) => idempotencyLedgerOf(storage, options.dataDir, documentId),
  });

  // Tokens that change while the server runs (kept in a database): each connection's grant is
  // looked up again, and a connection whose token was withdrawn is closed.
  const reviewGrants = () => {
    const review = access.review(wss.clients);
    if (review === undefined) return;
    if (review.closedToAll !== undefined)
      say(
        "info",
        { event: "tokens-stored", tokens: review.closedToAll },
        `tokens were stored (${review.closedToAll}): from now on every connection needs one`,
      );
    for (const { socket, presented, reason } of review.withdrawn) {
      say(
        "info",
        { event: "token-withdrawn", connection: events.connectionOf(socket) },
        `disconnected: its token (${presented ? "withdrawn" : "none"}) is no longer accepted`,
      );
      socket.close(CLOSE_FORBIDDEN, reason);
    }
    adapter.reviewGrants();
  };
  const unwatchTokens = options.tokens?.onChange?.(reviewGrants);

  const syncStates = new SyncStateKeeper(repo, 1000);
  faultSources.add(storage);
  watchStorageFaults();

  const health = (): SyncServerHealth => serverHealth({ storage, repo, events, access, started });

  let self: SyncServer | undefined;

  const front = new HttpFront({
    health,
    metrics,
    ...(options.routes === undefined
      ? {}
      : { routes: (req, res) => self !== undefined && options.routes!(req, res, self) }),
  });
  const httpServer = front.server;

  const gate = new UpgradeGate(() => access.tokensInForce());
  acceptConnections(httpServer, { gate, wss, access, events, maxMessageBytes });

  // automerge-repo connects its network adapter once it has read the storage id: a peer that
  // joined before then was never answered (a plain automerge-repo client hung until it retried).
  await adapter.connected;
  const listening = await new Promise<SyncResult<AddressInfo>>((resolve) => {
    httpServer.once("error", (e: NodeJS.ErrnoException) =>
      resolve(
        fail("listen-failed", `cannot listen on ${host}:${options.port ?? 0}: ${e.code ?? e.message}`, {
          host,
          port: options.port ?? 0,
        }),
      ),
    );
    httpServer.listen(options.port ?? 0, host, () => resolve(ok(httpServer.address() as AddressInfo)));
  });
  if (!listening.ok) {
    await repo.shutdown().catch(() => undefined);
    wss.close();
    own?.dispose();
    return listening;
  }
  const port = listening.value.port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  let drained: Promise<void> | undefined;
  const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
  self = {
    url: `ws://${urlHost}:${port}`,
    host,
    port,
    repo,
    health,
    refusals: () => events.refusals,
    metrics: async () => (await metrics.scrape()).text,
    openStore: (graph) => stores.open(graph),
    accessOf: (req, graph) => access.ofRequest(req, graph),
    drain() {
      drained ??= (async () => {
        const unanswered = await front.drain(drainMs, () => adapter.settled());
        if (unanswered > 0)
          say(
            "warn",
            { event: "drain-timeout", requests: unanswered, drainMs },
            `drain: ${unanswered} request(s) not answered within ${drainMs} ms`,
          );
      })();
      return drained;
    },
    close() {
      closing ??= (async () => {
        elsewhere.close();
        unwatchTokens?.();
        await self!.drain();
        await stores.close();
        try {
          await repo.flush(readyGraphs());
          await syncStates.flush();
        } finally {
          // Going away (1001), so a client knows to come back rather than that it was refused.
          await goingAway([...wss.clients]);
          for (const a of repo.networkSubsystem.adapters) a.disconnect();
          await syncStates.flush().catch(() => undefined);
          for (const c of wss.clients) c.terminate();
          wss.close();
          httpServer.closeAllConnections();
          own?.dispose();
          faultSources.delete(storage);
        }
      })();
      return closing;
    },
  };
  return ok(self);
}
