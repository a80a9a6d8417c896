/**
 * What a sync server tells its operator: each event as a structured log record (pino) or a text
 * line, refusals kept (the last 1,000) and counted, slow peers counted, and each connection named
 * by an id (`c1`, `c2`, …) from `connected` to `closed`. The counts feed `/health`; the metrics
 * (prom-client) are told of each event too.
 */
import type { WebSocket } from "ws";
import type { LogFields, ServerLogger } from "./logger.js";
import type { ServerMetrics } from "./metrics.js";
import type { RefusalEvent, SlowPeerEvent } from "./server-adapter.js";

/** Refusals kept for {@link ServerEvents.refusals} (the oldest dropped first). */
const REFUSALS_KEPT = 1000;

/** Where events go: a structured logger, else text lines. */
export interface ServerEventsOutput {
  readonly log?: (line: string) => void;
  readonly logger?: ServerLogger;
}

export class ServerEvents {
  /** The latest refusals, oldest first. */
  readonly refusals: RefusalEvent[] = [];
  /** Every refusal since the start, the throttled ones included. */
  refusedCount = 0;
  /** Slow peers dropped since the start. */
  slowPeers = 0;
  private readonly ids = new WeakMap<WebSocket, string>();
  private connections = 0;

  constructor(
    private readonly output: ServerEventsOutput,
    private readonly metrics: ServerMetrics,
  ) {}

  /** An event: to the structured logger when there is one, else as the text line `text`. */
  say(level: "info" | "warn" | "error", fields: LogFields, text: string): void {
    if (this.output.logger !== undefined) this.output.logger[level](fields, text);
    else this.output.log?.(text);
  }

  /** A refusal, kept, counted and logged. */
  refused(e: RefusalEvent): void {
    this.refusedCount++;
    this.metrics.refused(e.code);
    this.refusals.push(e);
    if (this.refusals.length > REFUSALS_KEPT) this.refusals.shift();
    this.say(
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
  }

  /** A refusal the upgrade throttle answered without a word (a client refused again and again): counted only. */
  throttled(): void {
    this.refusedCount++;
    this.metrics.refused("too-many-refusals");
  }

  /** A peer that read too slowly, dropped. */
  slowPeer(event: SlowPeerEvent): void {
    this.slowPeers++;
    this.metrics.slowPeer();
    this.say(
      "warn",
      { event: "slow-peer-dropped", peer: event.peer, token: event.token },
      `slow reader dropped: peer ${event.peer} (token ${event.token}): ${event.reason}`,
    );
  }

  /** The id the next accepted connection goes by. */
  nextConnection(): string {
    return `c${++this.connections}`;
  }

  /** Names `socket` by `id` from now on, and logs its close. */
  follow(socket: WebSocket, id: string): void {
    this.ids.set(socket, id);
    socket.once("close", (code) => {
      if (this.output.logger !== undefined)
        this.output.logger.info({ event: "closed", connection: id, code }, "connection closed");
    });
  }

  /** A connection's id (undefined for one this server did not accept). */
  connectionOf(socket: WebSocket): string | undefined {
    return this.ids.get(socket);
  }
}
