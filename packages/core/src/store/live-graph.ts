/**
 * A store's graph kept current with its op log: what other writers stored is taken in before each
 * read and write (one small file read when nothing changed; a full fold again when the log decided
 * a contested op-id anew), a write's ops are stored durably and exclusively then applied, and every
 * change is announced to the store's listeners. Writes and arrivals run one at a time, in call
 * order. The Store facade (store.ts) asks this for the graph and writes through it.
 *
 * The log is folded at the first read, write or listener, not at open: a sync that receives nothing
 * never needs the graph (folding 10,000 ops takes about 35 ms), and neither does a command that
 * only reads the log.
 */
import { Graph } from "../graph/graph.js";
import { GraphReader } from "../graph/reader.js";
import type { LogOp } from "../ops/op.js";
import { isWritableLog, type OpLog, type ReadableOpLog, type SharedLogExtras } from "./op-log.js";
import type { ChangeEvent } from "./store-types.js";

/** The graph of a store and the queue its writes and arrivals run in (see the module comment). */
export class LiveGraph {
  /** The graph, once folded (see {@link graph}). */
  private folded: { graph: Graph; reader: GraphReader } | undefined;
  /** Set once {@link close} ran: nothing is taken in or written after. */
  closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  private readonly unsubscribe: () => void;
  /** How many of the log's ops (`log.all()`, which only grows) the graph has taken in. */
  private taken = 0;
  /** The log's {@link OpLog.generation} the graph was folded at. */
  private generation = 0;
  /** Stops watching the log for other processes' writes (set while there are listeners). */
  private unwatch: (() => void) | undefined;
  /** True while a write of ours is being stored: its ops are held by the log but not yet done. */
  private storing = false;

  /** The log's shared-log members (none for a read-only log). */
  private readonly shared: SharedLogExtras;

  constructor(private readonly log: OpLog | ReadableOpLog) {
    this.shared = isWritableLog(log) ? log : {};
    // Ops a sync peer delivers: taken in after the write in progress, if any.
    this.unsubscribe = log.onRemote(() => {
      void this.serially(async () => this.catchUp());
    });
  }

  /** The graph of every op the log held at the last look: folded now if it was not yet. */
  get graph(): Graph {
    return this.fold().graph;
  }

  get reader(): GraphReader {
    return this.fold().reader;
  }

  private fold(): { graph: Graph; reader: GraphReader } {
    if (this.folded !== undefined) return this.folded;
    this.generation = this.log.generation ?? 0;
    // A log that keeps a fold snapshot: the graph is taken up from it, only the ops after it read.
    const seeded = this.seeded();
    if (seeded !== undefined) {
      const rest = this.since(seeded.count);
      this.taken = seeded.count + rest.length;
      seeded.graph.receive(rest);
      this.folded = { graph: seeded.graph, reader: new GraphReader(seeded.graph) };
      return this.folded;
    }
    const held = this.log.all();
    this.taken = held.length;
    const graph = Graph.fold(held, { wireChecked: this.log.wireChecked ?? 0 });
    this.folded = { graph, reader: new GraphReader(graph) };
    return this.folded;
  }

  /** The graph of the log's fold snapshot, when it keeps one whose head fits (see `ReadableOpLog.seed`). */
  private seeded(): { graph: Graph; count: number } | undefined {
    const seed = this.log.since === undefined ? undefined : this.log.seed?.();
    if (seed === undefined) return undefined;
    try {
      return { graph: Graph.fromSnapshot(seed.snapshot), count: seed.count };
    } catch {
      return undefined;
    }
  }

  /** How many ops the log holds (without reading them, where it can say). */
  private held(): number {
    return this.log.heldCount?.() ?? this.log.all().length;
  }

  /** The log's ops from position `from` on (without reading those before, where it can). */
  private since(from: number): readonly LogOp[] {
    return (this.log.since?.(from) ?? this.log.all().slice(from)) as readonly LogOp[];
  }

  private setGraph(graph: Graph): void {
    this.folded = { graph, reader: new GraphReader(graph) };
  }

  /**
   * Takes into the log what its shared storage held when called (see {@link SharedLogExtras.fence}); the
   * next read's {@link catchUp} folds it. Nothing to do for a log without a fence (a workspace's:
   * its reads poll the folder themselves).
   */
  async fence(): Promise<void> {
    await this.shared.fence?.();
  }

  /** Takes in everything the log's shared storage holds (see {@link SharedLogExtras.catchUpAll}), then catches up. */
  async catchUpAll(): Promise<void> {
    await this.shared.catchUpAll?.();
    this.catchUp();
  }

  /**
   * Takes in what other writers stored since the last look (another process's appends, a sync
   * into the same folder, a peer), so that reads answer from the graph as it is now and writes are
   * judged against it; announces those ops as remote changes. One small file read when nothing
   * changed. Not while a write of ours is being stored: no other process can append then (the
   * write holds the log exclusively), and the write takes in what arrived once it is done.
   */
  catchUp(): void {
    if (this.closed || this.storing) return;
    this.shared.poll?.();
    // Not folded yet: the fold, when asked for, takes in everything held then.
    if (this.folded === undefined) return;
    if ((this.log.generation ?? 0) !== this.generation) {
      // The log decided a contested op-id anew (a held op replaced): fold everything again.
      const all = this.log.all();
      this.generation = this.log.generation ?? 0;
      const fresh = all.slice(this.taken) as LogOp[];
      this.taken = all.length;
      this.setGraph(Graph.fold(all));
      this.emit({ source: "remote", ops: fresh, refolded: true });
      return;
    }
    const held = this.held();
    if (held === this.taken) return;
    const fresh = this.since(this.taken);
    this.taken = held;
    // Ops of ours are held already (received as they were stored): `added` is only the others'.
    const { added, refolded } = this.graph.receive(fresh);
    if (refolded) this.setGraph(this.graph);
    if (added.length > 0) this.emit({ source: "remote", ops: added });
  }

  /**
   * Stores `ops` durably, exclusively (no other process appends meanwhile), then applies them to
   * the graph with whatever else arrived, and announces them as a local change.
   */
  async store(ops: readonly LogOp[]): Promise<void> {
    // Folded before the append, so that the graph takes these ops in once, as ours.
    this.fold();
    this.storing = true;
    try {
      // The store refuses writes to a read-only log before they get here (`read-only`).
      if (!isWritableLog(this.log)) throw new Error("a write reached a read-only log");
      await this.log.append(ops);
    } finally {
      this.storing = false;
    }
    const { refolded } = this.graph.receive(ops);
    if (refolded) this.setGraph(this.graph);
    this.catchUp();
    this.emit({ source: "local", ops });
  }

  /** Runs a write holding the log exclusively, after taking in what others stored. */
  exclusively<T>(fn: () => Promise<T>): Promise<T> {
    return this.serially(() => {
      const run = async () => {
        this.catchUp();
        return fn();
      };
      return this.shared.exclusive === undefined ? run() : this.shared.exclusive(run);
    });
  }

  serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Calls `listener` after every change; returns the function that stops it. While there are
   * listeners the log is watched, so another process's writes are announced as they are stored,
   * not at the next read.
   */
  onChange(listener: (e: ChangeEvent) => void): () => void {
    // What a listener is told is relative to a folded graph: remote ops are announced as they come.
    this.fold();
    this.listeners.add(listener);
    if (this.unwatch === undefined && !this.closed)
      this.unwatch = this.shared.watch?.(() => {
        void this.serially(async () => this.catchUp());
      });
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopWatching();
    };
  }

  private stopWatching(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Stops taking ops from elsewhere and closes the log, after the writes in flight. */
  async close(): Promise<void> {
    await this.serially(async () => {
      if (this.closed) return;
      this.closed = true;
      this.stopWatching();
      this.unsubscribe();
      await this.log.close();
    });
  }
}
