/** What `GET /health` answers: the storage's fault and damage, and the server's counts. */
import type { Repo } from "@automerge/automerge-repo";
import type { ServerAccess } from "./server-access.js";
import type { ServerEvents } from "./server-events.js";
import type { ServerStorage } from "./server-storage.js";

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

/** The parts of a server its health is read from. */
export interface HealthSources {
  readonly storage: ServerStorage;
  readonly repo: Repo;
  readonly events: ServerEvents;
  readonly access: ServerAccess;
  /** When the server started (ms since the epoch). */
  readonly started: number;
}

/** The server's health now: a storage fault stands until a write as large as the failed one fits. */
export function serverHealth({ storage, repo, events, access, started }: HealthSources): SyncServerHealth {
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
    refused: events.refusedCount,
    slowPeersDropped: events.slowPeers,
    auth: access.isOpen ? "none" : "tokens",
    uptimeSeconds: Math.round((Date.now() - started) / 1000),
  };
}
