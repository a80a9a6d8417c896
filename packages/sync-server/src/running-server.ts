/**
 * A sync server once it listens: what it answers (`SyncServer`) over the parts startSyncServer
 * wired, and the order they stop in — drain, the server's own stores, every graph flushed, then
 * the peers told the server is going away (1001) and the sockets closed.
 */
import type http from "node:http";
import type { DocumentId, Repo } from "@automerge/automerge-repo";
import type { Store } from "@kumiki-graph/core";
import type { WebSocket, WebSocketServer } from "ws";
import type { GraphStores } from "./graph-stores.js";
import type { HttpFront } from "./http-front.js";
import type { ServerMetrics } from "./metrics.js";
import { CLOSE_GOING_AWAY } from "./protocol.js";
import type { SyncResult } from "./result.js";
import type { RequestAccess, ServerAccess } from "./server-access.js";
import type { AccessControlledServerAdapter, RefusalEvent } from "./server-adapter.js";
import type { ServerEvents } from "./server-events.js";
import { type SyncServerHealth, serverHealth } from "./server-health.js";
import type { ServerStorage } from "./server-storage.js";
import { SyncStateKeeper } from "./sync-state.js";

/** The parts a running server answers from and stops. */
export interface ServerParts {
  readonly repo: Repo;
  readonly wss: WebSocketServer;
  readonly front: HttpFront<SyncServerHealth>;
  readonly adapter: AccessControlledServerAdapter;
  readonly stores: GraphStores;
  readonly events: ServerEvents;
  readonly access: ServerAccess;
  readonly metrics: ServerMetrics;
  readonly storage: ServerStorage;
}

/** Where it listens and how it runs. */
export interface ServerAddress {
  readonly host: string;
  readonly port: number;
  /** How long a drain waits for what is in flight, ms. */
  readonly drainMs: number;
  /** When the server started (ms since the epoch). */
  readonly started: number;
}

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

/** The `SyncServer` startSyncServer resolves with. */
export class RunningSyncServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly repo: Repo;
  private readonly syncStates: SyncStateKeeper;
  private drained: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /**
   * `stopFollowing` ends what feeds the server from outside (another server's changes, token
   * changes) first; `release` lets go of what it opened (its folder storage, its fault handling) last.
   */
  constructor(
    private readonly address: ServerAddress,
    private readonly parts: ServerParts,
    private readonly stopFollowing: () => void,
    private readonly release: () => void,
  ) {
    this.host = address.host;
    this.port = address.port;
    this.url = `ws://${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`;
    this.repo = parts.repo;
    this.syncStates = new SyncStateKeeper(parts.repo, 1000);
  }

  health(): SyncServerHealth {
    const { storage, repo, events, access } = this.parts;
    return serverHealth({ storage, repo, events, access, started: this.address.started });
  }

  refusals(): readonly RefusalEvent[] {
    return this.parts.events.refusals;
  }

  async metrics(): Promise<string> {
    return (await this.parts.metrics.scrape()).text;
  }

  openStore(graph: string): Promise<SyncResult<Store>> {
    return this.parts.stores.open(graph);
  }

  accessOf(req: http.IncomingMessage, graph: string): RequestAccess {
    return this.parts.access.ofRequest(req, graph);
  }

  drain(): Promise<void> {
    this.drained ??= (async () => {
      const { drainMs } = this.address;
      const unanswered = await this.parts.front.drain(drainMs, () => this.parts.adapter.settled());
      if (unanswered > 0)
        this.parts.events.say(
          "warn",
          { event: "drain-timeout", requests: unanswered, drainMs },
          `drain: ${unanswered} request(s) not answered within ${drainMs} ms`,
        );
    })();
    return this.drained;
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    const { repo, wss, front, stores } = this.parts;
    this.stopFollowing();
    await this.drain();
    await stores.close();
    try {
      const ready = Object.values(repo.handles)
        .filter((h) => h.isReady())
        .map((h) => h.documentId as DocumentId);
      await repo.flush(ready);
      await this.syncStates.flush();
    } finally {
      // Going away (1001), so a client knows to come back rather than that it was refused.
      await goingAway([...wss.clients]);
      for (const a of repo.networkSubsystem.adapters) a.disconnect();
      await this.syncStates.flush().catch(() => undefined);
      for (const c of wss.clients) c.terminate();
      wss.close();
      front.server.closeAllConnections();
      this.release();
    }
  }
}
