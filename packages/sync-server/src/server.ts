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
import path from "node:path";
import * as A from "@automerge/automerge";
import { type DocumentId, type PeerId, Repo, type StorageAdapterInterface } from "@automerge/automerge-repo";
import {
  type CapabilityManifest,
  FileIdempotencyLedger,
  type IdempotencyLedger,
  MemoryIdempotencyLedger,
  makeDirs,
  type Store,
} from "@kumiki-graph/core";
import { checkChanges, DurableFSStorageAdapter, decodeChanges } from "@kumiki-graph/storage-automerge";
import { type WebSocket, WebSocketServer } from "ws";
import { GraphStores } from "./graph-stores.js";
import { HttpFront } from "./http-front.js";
import type { LogFields, ServerLogger } from "./logger.js";
import { ServerMetrics } from "./metrics.js";
import type { PostgresStorageAdapter } from "./postgres-storage.js";
import { CLOSE_FORBIDDEN } from "./protocol.js";
import { fail, ok, type SyncResult } from "./result.js";
import { AccessControlledServerAdapter, type CheckVerdict, type RefusalEvent } from "./server-adapter.js";
import { ShapeCache } from "./shape-cache.js";
import { SyncStateKeeper } from "./sync-state.js";
import { type Access, type Grant, mayAuthor, OPEN_GRANT, type TokenTable } from "./tokens.js";
import { pinnedTo, tokenOf, UpgradeGate } from "./upgrade-gate.js";

/**
 * What a sync server stores its graphs in: an automerge-repo storage adapter, and what `/health`
 * reports of it. `DurableFSStorageAdapter` (the embedded default, `dataDir`) and
 * {@link PostgresStorageAdapter} are two.
 */
export interface ServerStorage extends StorageAdapterInterface {
  /** True when `e` is an error this storage's writes threw (a storage fault, not a bug). */
  threw(e: unknown): boolean;
  /** The fault standing now, if any: `/health` says 503 while there is one. */
  probe(): { readonly code: string; readonly message: string } | undefined;
  /** The fault of the last failed write, until one succeeds. */
  readonly fault: { readonly message: string } | undefined;
  /** Stored chunks held back as damaged when a graph was loaded. */
  readonly damaged: readonly {
    readonly documentId: string;
    readonly name: string;
    readonly reason: string;
  }[];
  /**
   * For a storage several servers share: calls the listener with the key of each change chunk
   * another server stored, so this one can bring the graph's connected peers up to date at once.
   * Returns the unsubscribe.
   */
  watch?(listener: (key: readonly string[]) => void): () => void;
  /**
   * With `watch`: resolves once every change chunk committed before the call has been given to the
   * watchers, with a number that changes when notices may have been missed since the last call
   * (the listening connection was reopened), or `undefined` when that is not known (then the
   * server reads the graph's chunks). What makes a read on one server see a write another
   * acknowledged before it.
   */
  fence?(): Promise<number | undefined>;
  /**
   * For a storage several servers share: where a graph's idempotency keys are kept, so that a
   * retry through another server is recognised. Without it, the server keeps them in a file beside
   * a folder storage (`dataDir/.kumiki-idempotency/`), or in memory.
   */
  idempotencyLedger?(documentId: string): IdempotencyLedger;
}

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

/** What a request's credentials grant on one graph, or why they grant nothing. */
export type RequestAccess =
  | {
      readonly ok: true;
      readonly name: string;
      readonly access: Access;
      /** Granted because the server takes no tokens (yet): `name` is nobody's. */
      readonly open?: true;
    }
  | { readonly ok: false; readonly status: 401 | 403; readonly message: string };

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

/** At most this many damaged chunk files are named by `/health` (the count is whole). */
export const HEALTH_DAMAGE_LIMIT = 20;

/** What `GET /health` returns (HTTP 503 while `ok` is false). */
export interface SyncServerHealth {
  /** False while the server cannot store (a full disk): it serves reads, and confirms no push. */
  readonly ok: boolean;
  /** The storage fault while there is one (`ENOSPC`, …); absent when writes succeed. */
  readonly storage?: { readonly fault: string; readonly message: string };
  /**
   * Chunk files that failed their check as a graph was loaded (truncated, a checksum mismatch, …):
   * held back, never loaded, and left where they are. The server serves and stores what the sound
   * chunks hold, and clients holding the rest push it again as they sync, so `ok` stays true;
   * absent when no loaded graph had one. `files` lists the first {@link HEALTH_DAMAGE_LIMIT}.
   */
  readonly damage?: {
    readonly count: number;
    readonly files: readonly { readonly graph: string; readonly name: string; readonly reason: string }[];
  };
  readonly service: "kumiki-sync-server";
  /** Graphs loaded in memory. */
  readonly graphs: number;
  readonly peers: number;
  /** Messages refused since start (bad token on upgrade, forbidden or malformed changes). */
  readonly refused: number;
  /** Peers dropped since start for leaving too much unread (`maxBufferedBytes`). */
  readonly slowPeersDropped: number;
  readonly auth: "tokens" | "none";
  readonly uptimeSeconds: number;
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
  const log = options.log ?? (() => undefined);
  /** An event: to the structured logger when there is one, else as the text line `text`. */
  const say = (level: "info" | "warn" | "error", fields: LogFields, text: string) => {
    if (options.logger !== undefined) options.logger[level](fields, text);
    else log(text);
  };
  /** Each accepted connection's id (`c1`, `c2`, …), named in every event about it. */
  const connectionIds = new WeakMap<WebSocket, string>();
  let connectionCount = 0;
  const started = Date.now();
  const refusals: RefusalEvent[] = [];
  let refusedCount = 0;
  let slowPeers = 0;
  // Read at each scrape; `wss`, `repo` and `storage` are set before the server listens.
  const metrics = new ServerMetrics({
    connections: () => wss.clients.size,
    graphs: () => Object.keys(repo.handles).length,
    storageFault: () => storage.fault !== undefined,
  });
  const noteRefusal = (e: RefusalEvent) => {
    refusedCount++;
    metrics.refused(e.code);
    refusals.push(e);
    if (refusals.length > 1000) refusals.shift();
    say(
      "warn",
      {
        event: "refused",
        code: e.code,
        peer: e.peer,
        token: e.token,
        ...(e.documentId === undefined ? {} : { graph: `automerge:${e.documentId}` }),
      },
      `refused ${e.peer} (token ${e.token})${e.documentId ? ` on ${e.documentId}` : ""}: ${e.reason}`,
    );
  };

  if ((options.dataDir === undefined) === (options.storage === undefined))
    return fail(
      "invalid-options",
      "give the server dataDir (a folder) or storage (e.g. PostgreSQL), one of them",
    );
  let storage: ServerStorage;
  /** What the server opened itself (the FS storage), and so disposes of. */
  let own: DurableFSStorageAdapter | undefined;
  if (options.storage !== undefined) storage = options.storage;
  else {
    const dataDir = options.dataDir!;
    try {
      own = new DurableFSStorageAdapter(dataDir);
      own.sweepTemporaries();
      own.ensureStorageId();
      storage = own;
    } catch (e) {
      return fail(
        "storage-failed",
        `cannot use ${dataDir} for the server's graphs: ${(e as Error).message}`,
        {
          path: dataDir,
        },
      );
    }
  }

  const grants = new WeakMap<WebSocket, Grant>();
  /** The token each connection presented, and the graph its path pins (to review its grant). */
  const presented = new WeakMap<WebSocket, { readonly token: string; readonly pinned?: string }>();
  const maxChangeBytes = options.maxChangeBytes ?? DEFAULT_MAX_CHANGE_BYTES;
  // A larger message is not read into memory: ws closes the connection (1009), and the client
  // says why (client-adapter.ts).
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  const shapes = new ShapeCache();
  /** Change hashes accepted per graph and maybe not applied yet. */
  const accepted = new Map<string, Set<string>>();
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

  /** The check of a pushed message's changes: decoded, new ones only, by the graph's shape and the token's authors. */
  const checkPushed = async (
    documentId: string,
    entries: readonly Uint8Array[],
    grant: Grant,
  ): Promise<CheckVerdict> => {
    const handle = await handleOf(documentId);
    const doc = handle.isReady() ? handle.doc() : undefined;
    const decoded = decodeChanges(entries, doc);
    if (typeof decoded === "string") return { ok: false, reason: decoded };
    const shape = shapes.shape(documentId, doc);
    // Changes the server holds or accepted already (sent again: a reconnect, a reply that
    // crossed) were checked when they first came.
    const seen = accepted.get(documentId) ?? new Set<string>();
    accepted.set(documentId, seen);
    const fresh: typeof decoded = [];
    for (const c of decoded) {
      if (seen.has(c.hash) || (doc !== undefined && A.hasHeads(doc, [c.hash]))) continue;
      seen.add(c.hash);
      fresh.push(c);
    }
    const authors = grant.authors;
    const r = checkChanges(shape, fresh, {
      maxBundleBytes: maxChangeBytes,
      ...(authors === undefined
        ? {}
        : {
            refuseAuthor: (author: string) =>
              mayAuthor(authors, author)
                ? undefined
                : `authored ${JSON.stringify(author)}, but the token ${JSON.stringify(grant.name)} may push ops only by ${authors.join(", ")} (its "authors" in the token file)`,
          }),
    });
    if (!r.ok) {
      for (const c of fresh) seen.delete(c.hash);
      return { ok: false, reason: r.reason };
    }
    if (seen.size > 10_000 && doc !== undefined)
      for (const h of seen) if (A.hasHeads(doc, [h])) seen.delete(h);
    const newOps = shapes.accept(
      documentId,
      r.shape,
      fresh.map((c) => c.hash),
    );
    return { ok: true, newOps };
  };

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
    grantOf: (socket) => grants.get(socket),
    check: (documentId, entries, grant) =>
      metrics.timeCheck(async () => {
        const verdict = await checkPushed(documentId, entries, grant);
        if (verdict.ok) metrics.accepted(verdict.newOps);
        return verdict;
      }),
    flush: (documentId) => metrics.timeFlush(() => flushGraph(documentId)),
    onRefused: noteRefusal,
    maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    onSlowPeer(event) {
      slowPeers++;
      metrics.slowPeer();
      say(
        "warn",
        { event: "slow-peer-dropped", peer: event.peer, token: event.token },
        `slow reader dropped: peer ${event.peer} (token ${event.token}): ${event.reason}`,
      );
    },
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
  // automerge-repo sends it on to this server's peers of that graph, live. A graph not loaded here
  // reads every chunk when it is first asked for.
  /**
   * Takes stored chunks (`read` of the storage) into the graph when it is loaded here; the graph's
   * shape (its lists) may have grown, so it is worked out again at the next push.
   */
  const takeIn = async (documentId: string, read: () => Promise<readonly (Uint8Array | undefined)[]>) => {
    const handle = repo.handles[documentId as DocumentId];
    if (handle === undefined || !handle.isReady()) return;
    const chunks = await read();
    if (chunks.every((c) => c === undefined)) return;
    handle.update((doc) => {
      let d = doc;
      for (const c of chunks) if (c !== undefined) d = A.loadIncremental(d, c);
      return d;
    });
    // Read again at the next check, keeping what was accepted and not applied yet (dropping the
    // shape lost it: a peer's next push into a chunk list it had just made was refused).
    shapes.stale(documentId);
  };
  // A chunk gone since its notice was compacted into a snapshot, whose own notice follows.
  const takeStoredElsewhere = (key: readonly string[]) =>
    takeIn(key[0]!, async () => [await storage.load([...key]).catch(() => undefined)]);
  // The takes under way: a fence waits for those whose notices came before it.
  const taking = new Set<Promise<void>>();
  const unwatch = storage.watch?.((key) => {
    const took: Promise<void> = takeStoredElsewhere(key)
      .catch((e: unknown) =>
        say(
          "error",
          { event: "take-in-failed", err: String(e) },
          `taking in a change stored by another server failed: ${String(e)}`,
        ),
      )
      .finally(() => taking.delete(took));
    taking.add(took);
  });
  const catchUp = (documentId: string): Promise<void> =>
    takeIn(documentId, async () => (await storage.loadRange([documentId])).map((c) => c.data));
  // The listening connection whose notices each graph has followed since its last full catch-up.
  const followedSince = new Map<string, number>();
  // The server's own writes to a graph grow its document: the peers' change check reads its shape again.
  const stores = new GraphStores(repo, {
    handleOf,
    ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities }),
    appended: (documentId) => shapes.stale(documentId),
    // Every change the storage holds (other servers' included), taken into the loaded graph.
    catchUp,
    // Every change committed before now, taken in: behind the storage's notices when it has them
    // (a round trip), by reading the graph's chunks when notices may have been missed.
    fence: async (documentId) => {
      if (storage.fence === undefined) return;
      const listening = await storage.fence();
      await Promise.all([...taking]);
      if (listening !== undefined && followedSince.get(documentId) === listening) return;
      await catchUp(documentId);
      if (listening !== undefined) followedSince.set(documentId, listening);
    },
    ledgerOf: (documentId) => {
      const shared = storage.idempotencyLedger?.(documentId);
      if (shared !== undefined) return shared;
      if (options.dataDir === undefined) return new MemoryIdempotencyLedger();
      const dir = path.join(options.dataDir, ".kumiki-idempotency");
      makeDirs(dir);
      return new FileIdempotencyLedger(path.join(dir, `${documentId}.jsonl`));
    },
  });

  /** Anyone may connect: no tokens, or none stored yet (openUntilTokens); once false, never again. */
  let open = options.tokens === undefined || (options.openUntilTokens === true && options.tokens.size === 0);
  // Tokens that change while the server runs (kept in a database): each connection's grant is
  // looked up again, and a connection whose token was withdrawn is closed.
  const reviewGrants = () => {
    const tokens = options.tokens;
    if (tokens === undefined) return;
    if (open && tokens.size === 0) return;
    if (open)
      say(
        "info",
        { event: "tokens-stored", tokens: tokens.size },
        `tokens were stored (${tokens.size}): from now on every connection needs one`,
      );
    open = false;
    for (const ws of wss.clients) {
      const p = presented.get(ws);
      const grant = p === undefined ? undefined : tokens.lookup(p.token);
      if (grant === undefined) {
        grants.delete(ws);
        say(
          "info",
          { event: "token-withdrawn", connection: connectionIds.get(ws) },
          `disconnected: its token (${p === undefined ? "none" : "withdrawn"}) is no longer accepted`,
        );
        ws.close(
          CLOSE_FORBIDDEN,
          p === undefined ? "this server now requires a token" : "the token was withdrawn",
        );
      } else grants.set(ws, pinnedTo(grant, p?.pinned));
    }
    adapter.reviewGrants();
  };
  const unwatchTokens = options.tokens?.onChange?.(reviewGrants);

  const syncStates = new SyncStateKeeper(repo, 1000);
  faultSources.add(storage);
  watchStorageFaults();

  const health = (): SyncServerHealth => {
    // A fault stands until a write as large as the failed one fits: probe() tries one.
    const fault = storage.probe();
    const damaged = storage.damaged;
    const files = damaged
      .slice(0, HEALTH_DAMAGE_LIMIT)
      .map((d) => ({ graph: `automerge:${d.documentId}`, name: d.name, reason: d.reason }));
    return {
      ok: fault === undefined,
      ...(fault === undefined ? {} : { storage: { fault: fault.code, message: fault.message } }),
      ...(damaged.length === 0 ? {} : { damage: { count: damaged.length, files } }),
      service: "kumiki-sync-server",
      graphs: Object.keys(repo.handles).length,
      peers: repo.peers.length,
      refused: refusedCount,
      slowPeersDropped: slowPeers,
      auth: open ? "none" : "tokens",
      uptimeSeconds: Math.round((Date.now() - started) / 1000),
    };
  };

  const accessOf = (req: http.IncomingMessage, graph: string): RequestAccess => {
    const documentId = graph.startsWith("automerge:") ? graph.slice("automerge:".length) : graph;
    if (open || options.tokens === undefined) {
      const a = OPEN_GRANT.access(documentId)!;
      return { ok: true, name: OPEN_GRANT.name, access: a, open: true };
    }
    const token = tokenOf(req);
    if (token === undefined)
      return { ok: false, status: 401, message: "a token is required: send `Authorization: Bearer <token>`" };
    const grant = options.tokens.lookup(token);
    if (grant === undefined)
      return { ok: false, status: 403, message: "the token is not accepted by this server" };
    const access = grant.access(documentId);
    if (access === undefined)
      return { ok: false, status: 403, message: `the token grants no access to automerge:${documentId}` };
    return { ok: true, name: grant.name, access };
  };
  let self: SyncServer | undefined;

  const front = new HttpFront({
    health,
    metrics,
    ...(options.routes === undefined
      ? {}
      : { routes: (req, res) => self !== undefined && options.routes!(req, res, self) }),
  });
  const httpServer = front.server;

  const gate = new UpgradeGate(() => (open ? undefined : options.tokens));
  httpServer.on("upgrade", (req, socket, head) => {
    const verdict = gate.judge(req, socket);
    if (!verdict.ok) {
      if (verdict.refusal !== undefined) noteRefusal(verdict.refusal);
      else {
        refusedCount++;
        metrics.refused("too-many-refusals");
      }
      return;
    }
    const { grant: accepted, token, pinned } = verdict;
    const connection = `c${++connectionCount}`;
    wss.handleUpgrade(req, socket, head, (ws) => {
      // A socket error (a message over maxPayload: ws closes the connection with 1009) is this
      // connection's end, not the server's: without a listener it would be thrown.
      ws.on("error", (e: Error & { code?: string }) => {
        if (e.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH")
          noteRefusal({
            peer: "(unknown)",
            token: accepted.name,
            documentId: pinned,
            reason: `a message over ${maxMessageBytes.toLocaleString("en")} bytes (maxMessageBytes): connection closed unread`,
            code: "message-too-large",
          });
        else
          say(
            "warn",
            { event: "connection-error", connection, err: e.message },
            `connection error: ${e.message}`,
          );
      });
      grants.set(ws, accepted);
      if (token !== undefined) presented.set(ws, { token, ...(pinned === undefined ? {} : { pinned }) });
      connectionIds.set(ws, connection);
      say(
        "info",
        {
          event: "connected",
          connection,
          remote: req.socket.remoteAddress ?? "?",
          token: accepted.name,
          ...(pinned === undefined ? {} : { graph: `automerge:${pinned}` }),
        },
        `connected: ${req.socket.remoteAddress ?? "?"} (token ${accepted.name}, connection ${connection})`,
      );
      ws.once("close", (code) => {
        if (options.logger !== undefined)
          options.logger.info({ event: "closed", connection, code }, "connection closed");
      });
      wss.emit("connection", ws, req);
    });
  });

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
    refusals: () => refusals,
    metrics: async () => (await metrics.scrape()).text,
    openStore: (graph) => stores.open(graph),
    accessOf,
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
        unwatch?.();
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
