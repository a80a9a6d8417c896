/**
 * What a sync server counts for `GET /metrics`, in Prometheus' text format (prom-client, the
 * registry of the Node ecosystem's Prometheus users: the exposition format, histograms and the
 * process metrics are its, not ours to keep right). Each server has a registry of its own, so two
 * servers in one process (tests, a proxy in front of shards) never mix their counts.
 *
 * Labels are bounded: a refusal by its code, never by graph, token or peer (an id per series would
 * grow without end, and would show who uses which graph to whoever may scrape).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { RefusalCode } from "./server-adapter.js";

/** What the server reads live at each scrape (gauges that are states, not events). */
export interface MetricSources {
  /** Open WebSocket connections. */
  connections(): number;
  /** Graphs loaded in memory. */
  graphs(): number;
  /** True while the storage cannot store (`/health` answers 503). */
  storageFault(): boolean;
}

/** Seconds buckets for a sync flush, a change check and an MCP request: 1 ms to 10 s. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A sync server's metrics (see the module comment). */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly opsAccepted: Counter;
  private readonly refusals: Counter<"reason">;
  private readonly slowPeers: Counter;
  private readonly checkSeconds: Histogram;
  private readonly flushSeconds: Histogram;
  private readonly mcpSeconds: Histogram<"status">;
  private readonly faults: Counter;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: "kumiki_connections",
      help: "Open sync connections (WebSockets).",
      registers,
      collect() {
        this.set(sources.connections());
      },
    });
    new Gauge({
      name: "kumiki_graphs_loaded",
      help: "Graphs loaded in the server's memory.",
      registers,
      collect() {
        this.set(sources.graphs());
      },
    });
    new Gauge({
      name: "kumiki_storage_fault",
      help: "1 while the storage cannot store (a full disk, the database gone): /health answers 503.",
      registers,
      collect() {
        this.set(sources.storageFault() ? 1 : 0);
      },
    });
    this.faults = new Counter({
      name: "kumiki_storage_faults_total",
      help: "Writes the storage failed (each one a push confirmed for nothing new, or an MCP write refused).",
      registers,
    });
    this.opsAccepted = new Counter({
      name: "kumiki_ops_accepted_total",
      help: "Ops in pushed changes the server accepted and did not hold yet.",
      registers,
    });
    this.refusals = new Counter({
      name: "kumiki_refusals_total",
      help: "Connections and messages refused, by reason.",
      labelNames: ["reason"],
      registers,
    });
    this.slowPeers = new Counter({
      name: "kumiki_slow_peers_dropped_total",
      help: "Peers dropped for leaving more than maxBufferedBytes unread.",
      registers,
    });
    this.checkSeconds = new Histogram({
      name: "kumiki_sync_check_seconds",
      help: "Time to check one pushed sync message's changes before accepting them.",
      buckets: BUCKETS,
      registers,
    });
    this.flushSeconds = new Histogram({
      name: "kumiki_sync_flush_seconds",
      help: "Time to store a graph durably when a client asks (what a push waits for before it is confirmed).",
      buckets: BUCKETS,
      registers,
    });
    this.mcpSeconds = new Histogram({
      name: "kumiki_mcp_request_seconds",
      help: "Time to answer one HTTP request to an MCP endpoint (/g/<graph>/mcp), by HTTP status.",
      labelNames: ["status"],
      buckets: BUCKETS,
      registers,
    });
  }

  /** Ops accepted in pushed changes. */
  accepted(ops: number): void {
    if (ops > 0) this.opsAccepted.inc(ops);
  }

  refused(code: RefusalCode | undefined): void {
    this.refusals.inc({ reason: code ?? "other" });
  }

  slowPeer(): void {
    this.slowPeers.inc();
  }

  storageFailed(): void {
    this.faults.inc();
  }

  /** Times `work` as a change check. */
  timeCheck<T>(work: () => Promise<T>): Promise<T> {
    return timed(this.checkSeconds, work);
  }

  /** Times `work` as a flush. */
  timeFlush<T>(work: () => Promise<T>): Promise<T> {
    return timed(this.flushSeconds, work);
  }

  /** Starts timing an MCP request; call the result with the status it was answered with. */
  mcpRequest(): (status: number) => void {
    const end = this.mcpSeconds.startTimer();
    return (status) => end({ status: String(status) });
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ readonly text: string; readonly contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** `work`'s time observed in `histogram`, whether it resolves or rejects. */
async function timed<T>(histogram: Histogram, work: () => Promise<T>): Promise<T> {
  const end = histogram.startTimer();
  try {
    return await work();
  } finally {
    end();
  }
}
