/**
 * The op log on Automerge, in a Repo the caller holds: one document per graph, its ops read,
 * appended as bundles, and taken in as they arrive (from a sync peer, another server of the
 * database, a page's WebSocket). Nothing here touches a file: a workspace's log on disk is
 * {@link AutomergeOpLog} (automerge-op-log.ts), a subclass that adds the folder, its lock and its
 * readable op log; a sync server and a page in a browser attach this one to their own Repo
 * ({@link RepoOpLog.attach}), over whatever storage and network it was given.
 *
 * Layout ({@link OpLogDocument}, format 1; docs/architecture.md "Storage" has the measurements):
 * every append is one bundle, stored as one ImmutableString holding the JSON array of its ops; bundles
 * sit in lists of at most {@link CHUNK_SIZE}, the lists in one outer list. Nothing is ever deleted or
 * overwritten, so concurrent appends on any replicas merge without conflict; an op-id held twice
 * (the same op appended on two replicas) is read once. Chunking keeps each change cheap: a change's
 * cost grows with the size of the containers it touches (measured at 10k entries: 10 ms per change
 * for a flat map keyed by op-id, 1 ms for a flat list), while a list of at most 512 inside a list of
 * a few hundred stays near 0.5 ms at 100k ops.
 */
import * as A from "@automerge/automerge";
import type { AutomergeUrl, DocHandle, DocHandleChangePayload, Repo } from "@automerge/automerge-repo";
import {
  copyStoredOp,
  DAMAGE_REMEDY,
  type OpLog,
  opContentHash,
  type StoreDamage,
  type StoredOp,
} from "@kumiki-graph/core";
import { ATTACHED, type LogStorage } from "./log-storage.js";
import { decideClaims } from "./op-id-claims.js";
import {
  bundleText,
  CHUNK_SIZE,
  forEachStoredOp,
  type InvalidEntry,
  OP_LOG_FORMAT,
  OP_LOG_KIND,
  type OpLogDocument,
  pushBundle,
  reuseReason,
} from "./op-log-document.js";
import type { OpLogFile } from "./op-log-file.js";
import { OpLogFileError } from "./op-log-file-error.js";
import { isHeldOp, type PendingBundle, type PendingSource } from "./pending-bundles.js";

/**
 * Incremental chunks of the document a log lets pile up before it compacts them into a snapshot:
 * each costs every later open about 0.5 ms (at most about 0.13 s, then); a snapshot costs one
 * `A.save` (120–150 ms at 5,000 definitions), about 0.5 ms a write at that size. At 64 a
 * long-running writer (the MCP server) paid 2 ms a write for it: 9.95 ms of CPU per
 * acknowledged `kumiki_add` at 5,000 definitions against issue 42's 10 (4.4 without).
 */
const COMPACT_AFTER = 256;
/** An append refused because the stored document is damaged (see {@link StoreDamage}); `code` is "store-damaged". */
export class StoreDamagedError extends Error {
  readonly code = "store-damaged";
}

/**
 * An append refused because the workspace was removed or replaced under the open log (see
 * {@link AutomergeOpLogOptions.replaced}); `code` is "workspace-replaced". Nothing was written.
 */
export class WorkspaceReplacedError extends Error {
  readonly code = "workspace-replaced";
}

/** Why {@link AutomergeOpLog.open} failed. */
export class OpLogOpenError extends Error {
  constructor(
    readonly code: "store-missing" | "store-corrupt" | "store-unsupported",
    message: string,
    options?: { cause?: unknown; damaged?: boolean },
  ) {
    super(message, options);
    this.damaged = options?.damaged === true;
  }
  /** The open failed because damaged chunks were held back (then it opens again, damaged). */
  readonly damaged: boolean;
}

/** The parts of a log that its options set (the mirror and the replaced question: a workspace's). */
export interface RepoOpLogParts {
  /** Bundles per inner list (tests use small values to exercise chunk boundaries). */
  readonly chunkSize?: number;
  /** The readable op log to keep complete after each append and on close (a workspace's). */
  readonly mirror?: OpLogFile;
  /**
   * Why the workspace this log belongs to is no longer the one at its folder, or undefined while
   * it is (see {@link AutomergeOpLogOptions.replaced}).
   */
  readonly replaced?: () => string | undefined;
  /**
   * Bundles stored beside the document by writes that did not load it (a workspace's
   * pending-bundles.ts): folded in by each append, `fence` and close, each as a bundle of its own.
   */
  readonly pending?: PendingSource;
}

/** An {@link OpLog} kept in one Automerge document of an automerge-repo Repo. */
export class RepoOpLog<T extends StoredOp = StoredOp> implements OpLog<T> {
  protected readonly ops: T[] = [];
  private readonly listeners = new Set<(ops: readonly T[]) => void>();
  protected invalidEntries: InvalidEntry[] = [];
  /** The held op of each op-id (held once; the same op again is told from another under its id). */
  protected readonly byId = new Map<string, T>();
  /** Op-ids seen with a second content since the last decision (see op-id-claims.ts). */
  protected undecided = new Set<string>();
  protected gen = 0;
  private readonly chunkSize: number;
  protected readonly mirror: OpLogFile | undefined;
  private readonly replaced: (() => string | undefined) | undefined;
  protected readonly pending: PendingSource | undefined;
  /**
   * Op-ids held from pending bundles that the document does not hold yet (taken in by a
   * {@link poll}, so that reads see them at once), and those bundles' file names: folded in by the
   * next locked write, or found in the document once another process folded them.
   */
  private readonly heldPending = new Set<string>();
  private readonly heldPendingFiles = new Set<string>();
  /** The storage's generation token when the pending folder was last listed (see takePending). */
  private pendingLookedAt: string | undefined;
  protected damageFound: StoreDamage | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private local = false;
  protected closed = false;
  protected failure: unknown;
  private mirrorError: unknown;
  /**
   * What op-log.jsonl was last brought up to (or held at open): how many of {@link ops}, at which
   * heads, at which {@link generation}. The ops after that count are what it lacks, so ops taken in
   * from a peer or another process are appended, not the whole file rewritten, when they sort after
   * everything it holds (the file checks its sidecar's heads and last op-id before it appends).
   */
  protected mirrored:
    | { readonly count: number; readonly heads: readonly string[]; readonly gen: number }
    | undefined;
  /** The handle's change listener: a change that did not come from this log's own append is taken in. */
  protected readonly onChange = (payload: DocHandleChangePayload<OpLogDocument>) => this.received(payload);

  /** The Repo, handle and storage: replaced together when the log is opened again after a failed append. */
  protected parts: { repo: Repo; handle: DocHandle<OpLogDocument>; storage: LogStorage };
  /**
   * Opens the document again from where it is stored after a failed append (see `refuse`): set by
   * a workspace's log of its own Repo with no network, whose document nobody else holds.
   */
  protected reopener: (() => Promise<RepoOpLog<T>>) | undefined;

  protected constructor(
    repo: Repo,
    handle: DocHandle<OpLogDocument>,
    storage: LogStorage,
    options: RepoOpLogParts,
  ) {
    this.parts = { repo, handle, storage };
    this.chunkSize = Math.max(1, options.chunkSize ?? CHUNK_SIZE);
    this.replaced = options.replaced;
    this.pending = options.pending;
    // Read-only or damaged: the readable op log is read (for what the document lacks), never written.
    this.mirror = options.mirror;
    if (this.mirror !== undefined) this.mirror.document = handle.documentId;
  }

  /** The Repo holding the document; sync reuses it (add a network adapter, share policy). */
  get repo(): Repo {
    return this.parts.repo;
  }

  /** The graph document's handle. */
  get handle(): DocHandle<OpLogDocument> {
    return this.parts.handle;
  }

  /** The storage adapter under the Repo (its `lock` guards every write). */
  get storage(): LogStorage {
    return this.parts.storage;
  }

  /** The graph document's URL (what `.kumiki/config.json` records). */
  get url(): AutomergeUrl {
    return this.handle.url;
  }

  /** What is wrong with the stored document, when something is (see {@link StoreDamage}); then writes are refused. */
  get damage(): StoreDamage | undefined {
    return this.damageFound;
  }

  /** Entries of the document that are not valid bundles or ops (from a buggy or hostile peer). */
  get invalid(): readonly InvalidEntry[] {
    return this.invalidEntries;
  }

  /**
   * Bumped when the op held under a contested op-id changed: a claim that came later turned out to
   * be first by the rule of op-id-claims.ts, so the op at that position of {@link all} was replaced.
   * A reader that sees it change reads `all()` afresh (see {@link OpLog.generation}).
   */
  get generation(): number {
    return this.gen;
  }

  /**
   * A log over a graph document that a Repo of the caller's holds (a sync server's, a page's): appends change
   * `handle` and flush it through the Repo's storage (resolving once it is stored: fsynced on a
   * folder, committed on PostgreSQL), and changes that reach the handle otherwise (a sync peer,
   * another server of the database) arrive through {@link onRemote}. The Repo stays the caller's:
   * closing the log detaches it and leaves the Repo running. `onAppend` is told after each append
   * (the server's check of peers' changes learns the document grew). Throws an
   * {@link OpLogOpenError} when the document is not a Kumiki op log.
   */
  static attach<T extends StoredOp = StoredOp>(
    repo: Repo,
    handle: DocHandle<OpLogDocument>,
    options: {
      readonly chunkSize?: number;
      readonly onAppend?: () => void;
      /** Takes into `handle` every change the Repo's storage holds (see {@link catchUpAll}). */
      readonly catchUp?: () => Promise<void>;
      /** Resolves once every change the storage held when called is in `handle` (see `fence`). */
      readonly fence?: () => Promise<void>;
    } = {},
  ): RepoOpLog<T> {
    const doc = handle.doc();
    if (bundleText(doc.kind) !== OP_LOG_KIND || typeof doc.format !== "number")
      throw new OpLogOpenError("store-corrupt", `${handle.url} is not a Kumiki op log`);
    if (doc.format > OP_LOG_FORMAT)
      throw new OpLogOpenError(
        "store-unsupported",
        `${handle.url} has op log format ${doc.format}; this version reads up to ${OP_LOG_FORMAT}`,
      );
    const log = new RepoOpLog<T>(
      repo,
      handle,
      ATTACHED,
      options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize },
    );
    log.attached = options.onAppend ?? (() => undefined);
    log.attachedCatchUp = options.catchUp;
    log.attachedFence = options.fence;
    log.load();
    return log;
  }

  /**
   * Starts taking in the handle's changes and reads the document as it is: every op held, contested
   * op-ids decided, what other processes stored merged, damage found (`written`: the heads the
   * readable op log was written at, a change of which the document lacks is damage).
   */
  protected load(written?: readonly string[]): void {
    const doc = this.handle.doc();
    this.handle.on("change", this.onChange);
    this.readAll(doc);
    this.decideContested(doc);
    // Everything stored was just loaded: this records the generation (and merges any stragglers).
    this.mergeForeign();
    this.checkDamage(written);
    this.mirrored = { count: this.ops.length, heads: this.heads(), gen: this.gen };
    // Writes stored beside the document are read at once (a writable open then folds them in).
    this.takePending();
  }

  /** Set when attached to a caller's Repo ({@link attach}): told after each append; the Repo is not ours to shut down. */
  private attached: (() => void) | undefined;
  private attachedCatchUp: (() => Promise<void>) | undefined;
  private attachedFence: (() => Promise<void>) | undefined;

  /**
   * For an attached log (whose {@link poll} sees nothing of other servers): takes in every change
   * the Repo's storage holds, through the caller's `catchUp` (their ops reach {@link onRemote}).
   * A workspace's log sees every process's chunks by {@link poll}: nothing to do.
   */
  async catchUpAll(): Promise<void> {
    if (this.closed) return;
    await this.attachedCatchUp?.();
  }

  /**
   * For an attached log: resolves once every change the Repo's storage held when called (other
   * servers' included) is in the log, through the caller's `fence`. A workspace's log: nothing to
   * do ({@link poll} sees every process's chunks).
   */
  async fence(): Promise<void> {
    if (this.closed) return;
    await this.attachedFence?.();
    await this.foldPending();
  }

  /**
   * Folds the pending bundles writes stored beside the document into it (see
   * {@link RepoOpLogParts.pending}), when there are any and this log may write; their ops reach
   * {@link onRemote}. One directory listing when there are none.
   */
  async foldPending(): Promise<void> {
    if (this.pending === undefined || this.closed || !this.mayWrite() || !this.pending.any()) return;
    await this.append([]);
  }

  /** Whether an append would be taken (not read-only, damaged, replaced or failed). */
  private mayWrite(): boolean {
    return (
      !this.storage.readOnly &&
      this.damageFound === undefined &&
      this.replacedWhy === undefined &&
      this.failure === undefined
    );
  }

  all(): readonly T[] {
    return this.ops;
  }

  /**
   * Appends `ops` as one bundle: one Automerge change, flushed (written, fsynced, renamed) before the
   * promise resolves, then the readable op log brought up to date. Before writing, chunks other
   * processes wrote are merged (their ops reach {@link onRemote} first). A bad op (not a JSON object
   * with a string "op-id") rejects the whole call before anything is written. If the storage write
   * fails the promise rejects, and the refused ops are neither held nor written later (see
   * `refuse`); the next append opens the document again from the folder first. A log that
   * cannot be opened again (attached to a caller's Repo, or syncing over a network, whose peers
   * may have the change already) refuses further appends instead: reopen it.
   */
  append(ops: readonly T[]): Promise<readonly T[]> {
    const run = this.queue.then(() => this.appendNow(ops));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async appendNow(ops: readonly T[]): Promise<readonly T[]> {
    if (this.failure !== undefined && this.reopener !== undefined && !this.closed) await this.reopen();
    this.assertWritable();
    const batch = new Map<string, T>();
    for (const op of ops) {
      const copy = copyStoredOp(op);
      if (!this.byId.has(copy["op-id"]) && !batch.has(copy["op-id"])) batch.set(copy["op-id"], copy);
    }
    if (batch.size === 0 && this.pending?.any() !== true) return [];
    return this.underLock(() => this.storeLocked(batch));
  }

  /**
   * Stores, under the lock, the pending bundles (each a bundle of its own, in the order they were
   * written) and then `batch`'s ops that are still new, as one change, flushed; then removes the
   * pending files, announces their ops as others' and brings the readable op log up to date.
   * Returns the ops of `batch` that were stored.
   */
  private async storeLocked(batch: ReadonlyMap<string, T>): Promise<T[]> {
    this.assertInPlace();
    this.mergeForeign();
    const pending = this.pending?.read() ?? [];
    const taken = new Set<string>();
    const folded: T[][] = [];
    // Held already (by a poll) and durable in its file: announced then, not again.
    const announced: T[] = [];
    for (const bundle of pending) {
      const ops: T[] = [];
      for (const op of bundle.ops as readonly T[]) {
        const id = op["op-id"];
        if (taken.has(id) || (this.byId.has(id) && !this.heldPending.has(id))) continue;
        taken.add(id);
        const held = this.byId.get(id);
        if (held === undefined) {
          const copy = copyStoredOp(op);
          this.hold(copy);
          this.heldPending.add(id);
          announced.push(copy);
          ops.push(copy);
        } else ops.push(held);
      }
      this.heldPendingFiles.add(bundle.name);
      if (ops.length > 0) folded.push(ops);
    }
    const fresh = [...batch.values()].filter((op) => !this.byId.has(op["op-id"]));
    const names = pending.map((b) => b.name);
    if (fresh.length === 0 && folded.length === 0) {
      // Every pending op is in the document already (a fold cut short after its flush).
      this.forgetPending(names);
      return [];
    }
    const before = this.heads();
    const size = this.chunkSize;
    this.local = true;
    try {
      this.handle.change((d) => {
        for (const ops of folded) pushBundle(d, ops, size);
        if (fresh.length > 0) pushBundle(d, fresh, size);
      });
    } finally {
      this.local = false;
    }
    const others = folded.flat();
    for (const op of fresh) this.hold(op);
    try {
      await this.repo.flush([this.handle.documentId]);
    } catch (e) {
      // Only this write is refused: the pending ops stay held (their files are durable), and the
      // next append, opening the document again, folds them.
      this.refuse(fresh, e);
      if (announced.length > 0) this.announce(announced);
      throw e;
    }
    for (const op of others) this.heldPending.delete(op["op-id"]);
    // Stored: the files may go (a removal that fails is redone, without a second copy, next time).
    this.forgetPending(names);
    if (announced.length > 0) this.announce(announced);
    this.attached?.();
    await this.compactAfterAppend();
    this.updateMirror([...others, ...fresh], before);
    return fresh;
  }

  /** Removes pending files whose ops the document holds now (a removal that fails is redone later). */
  private forgetPending(names: readonly string[]): void {
    try {
      this.pending?.remove(names);
    } catch {
      // Left for the next fold, which finds their ops in the document.
    }
    for (const name of names) this.heldPendingFiles.delete(name);
  }

  /**
   * Holds, synchronously and without the lock, the ops of pending files not seen yet (a directory
   * listing only when the generation token moved), announcing them as others'; the document takes them
   * in at the next locked write. Returns the ops that were new.
   */
  private takePending(): T[] {
    if (this.pending === undefined || this.closed) return [];
    // A pending write moves the generation token once its file is in place (and before it is
    // answered): while the token stands where the last listing saw it, there is nothing new to
    // list. Every read polls, so this keeps a directory listing off a read's path.
    const generation = this.storage.generation;
    if (generation !== undefined && generation === this.pendingLookedAt) return [];
    this.pendingLookedAt = generation;
    let fresh: PendingBundle[];
    try {
      const names = this.pending.names();
      const unseen = names.filter((n) => !this.heldPendingFiles.has(n));
      // Files folded and removed meanwhile (here or by another process) need not be remembered.
      if (this.heldPendingFiles.size > 0) {
        const listed = new Set(names);
        for (const n of this.heldPendingFiles) if (!listed.has(n)) this.heldPendingFiles.delete(n);
      }
      if (unseen.length === 0) return [];
      fresh = this.pending.read(unseen);
    } catch {
      return []; // The next look tries again; a write folds them under the lock.
    }
    const added: T[] = [];
    for (const bundle of fresh) {
      this.heldPendingFiles.add(bundle.name);
      for (const op of bundle.ops as readonly T[]) {
        const copy = copyStoredOp(op);
        if (!this.hold(copy)) continue;
        this.heldPending.add(copy["op-id"]);
        added.push(copy);
      }
    }
    if (added.length > 0) this.announce(added);
    return added;
  }

  /**
   * The names of the pending files whose ops this log holds but its document does not yet: with
   * the document's heads, the state its ops are in (`opsState`), as the read path names it.
   */
  pendingHeld(): string[] {
    return this.heldPending.size === 0 ? [] : [...this.heldPendingFiles].sort();
  }

  /**
   * After an append (stored: nothing here can take it back), the document compacted into one
   * snapshot once more than {@link COMPACT_AFTER} incremental chunks of it are known, before the
   * readable op log records the chunks it was written from. A compaction that fails (a full disk)
   * leaves the chunks as they were: the next append tries again.
   */
  private async compactAfterAppend(): Promise<void> {
    const { storage, handle } = this;
    if (storage.compact === undefined) return;
    try {
      const snapshot = () => {
        const doc = handle.doc();
        return { bytes: A.save(doc), heads: A.getHeads(doc) };
      };
      await storage.compact(handle.documentId, snapshot, COMPACT_AFTER);
    } catch {
      // The chunks stand as they were; the next append tries again.
    }
  }

  /**
   * Merges the chunks other processes wrote since the last look (their ops reach {@link onRemote})
   * and returns the ops that were new. Appends do this on their own; call it to poll.
   */
  refresh(): Promise<readonly T[]> {
    const run = this.queue.then(() => {
      this.assertOpen();
      return this.storage.lock.run(() => this.mergeForeign());
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Takes in, synchronously, the chunks other processes stored since the last look (their ops
   * reach {@link onRemote}) and returns the ops that were new. One small file read when nobody
   * wrote; safe without the lock (see DurableFSStorageAdapter.foreignChunks).
   */
  poll(): readonly T[] {
    if (this.closed) return [];
    const merged = this.mergeForeign();
    const pending = this.takePending();
    return pending.length === 0 ? merged : [...merged, ...pending];
  }

  /**
   * Calls `changed` soon after another process stored a chunk of this log's storage, until the
   * returned function is called. Nothing for a log attached to a caller's Repo (its owner is told by
   * its storage); a workspace's log watches its folder ({@link AutomergeOpLog.watch}).
   */
  watch(_changed: () => void): () => void {
    return () => undefined;
  }

  /**
   * Runs `fn` holding the storage lock: no other process appends meanwhile; this one may. A write
   * judged in `fn` after a {@link poll} is judged against everything stored, the pending bundles
   * included (the poll holds them; the append folds them in with the write's own bundle).
   */
  exclusive<R>(fn: () => Promise<R>): Promise<R> {
    this.assertOpen();
    return this.underLock(fn);
  }

  /**
   * Runs `fn` holding the storage lock. A lock that cannot be taken because the workspace was
   * removed (no folder for its file) is a {@link WorkspaceReplacedError}, not an I/O error; the
   * check costs a file read only then.
   */
  private async underLock<R>(fn: () => Promise<R>): Promise<R> {
    try {
      return await this.storage.lock.run(fn);
    } catch (e) {
      if ((e as { code?: unknown }).code === "ENOENT") this.assertInPlace();
      throw e;
    }
  }

  onRemote(listener: (ops: readonly T[]) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Flushes what is pending (changes that arrived from a peer), brings the readable op log up to
   * date and shuts the Repo down. Rejects if the final write failed, and with an
   * {@link OpLogFileError} when only the readable log could not be written (the document is stored).
   */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const run = this.queue.then(async () => {
      if (this.closed) return;
      try {
        // Replaced under us: its folder is another workspace's now, and nothing of ours goes there.
        if (!this.isReplaced())
          await this.storage.lock.run(async () => {
            if (this.isReplaced()) return;
            // What writes stored beside the document goes into it before the readable log is
            // rewritten (a fold that fails leaves the files for the next opener: nothing is lost).
            if (this.pending !== undefined && this.mayWrite())
              await this.storeLocked(new Map()).catch(() => undefined);
            await this.repo.flush([this.handle.documentId]);
            // The readable log is rewritten from what this process holds: first take in what
            // others wrote since our last append, or the rewrite would drop their ops.
            this.mergeForeign();
            this.mirrorError = undefined;
            this.updateMirror();
          });
      } finally {
        this.closed = true;
        this.handle.off("change", this.onChange);
        this.listeners.clear();
        if (this.attached === undefined) await this.repo.shutdown().catch(() => undefined);
        this.storage.dispose();
        this.mirror?.dispose();
      }
      // The document is stored; the file's sidecar no longer vouches for it (no reader takes it for
      // the document) and the next writer rewrites it. Said apart from a failed write, so that a
      // caller whose write was stored can say so (the CLI warns), and one that needs the file fails.
      if (this.mirrorError !== undefined && this.mirror !== undefined)
        throw new OpLogFileError(this.mirror.path, this.mirrorError);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("the op log is closed");
  }

  /** Why the workspace is not this log's any more (asked once more each time until it is). */
  private replacedWhy: string | undefined;

  /** True once the workspace was found removed or replaced: storage frozen from then on. */
  private isReplaced(): boolean {
    if (this.replacedWhy === undefined) {
      this.replacedWhy = this.replaced?.();
      // Automerge-repo's own late saves would land in the other workspace's folder: dropped.
      if (this.replacedWhy !== undefined) this.storage.freeze();
    }
    return this.replacedWhy !== undefined;
  }

  private assertInPlace(): void {
    if (this.isReplaced())
      throw new WorkspaceReplacedError(
        `${this.replacedWhy}: nothing was written; this store holds ${this.url}; open the workspace again to work on what is there now`,
      );
  }

  private assertWritable(): void {
    this.assertOpen();
    // Found replaced (its storage frozen since): said as such, not as a read-only workspace.
    if (this.replacedWhy !== undefined) this.assertInPlace();
    if (this.damageFound !== undefined) {
      const d = this.damageFound;
      const what = [
        ...d.chunks.map((c) => `${c.name}: ${c.reason}`),
        ...(d.lostChanges.length > 0
          ? [`${d.lostChanges.length} change(s) op-log.jsonl holds are missing`]
          : []),
      ];
      throw new StoreDamagedError(
        `the workspace's stored document is damaged (${what.slice(0, 3).join("; ")}${what.length > 3 ? "; …" : ""}): reads show what could be read, writes are refused until it is repaired: ${DAMAGE_REMEDY}`,
      );
    }
    if (this.storage.readOnly) {
      throw new Error(
        `the workspace is open read-only (no write access to ${this.storage.directory}): reads work, writes need write access`,
      );
    }
    if (this.failure !== undefined) {
      throw new Error(`the op log refuses writes after a failed one (reopen it): ${String(this.failure)}`, {
        cause: this.failure,
      });
    }
  }

  /**
   * An append whose flush failed (a full disk, an I/O error): its change stays in the open document
   * (Automerge cannot take a change back), so that document must never be saved again — a later
   * save, once there is space, would store a write its caller was told was refused, and a retry
   * would then store it twice. The storage is frozen (automerge-repo's pending saves are dropped),
   * the refused ops are let go (reads never show them; {@link generation} is bumped because `all()`
   * shrank), and the next append opens the document again from the folder ({@link reopen}).
   */
  private refuse(refused: readonly T[], e: unknown): void {
    this.failure = e;
    if (this.reopener === undefined) return;
    this.storage.freeze();
    const ids = new Set(refused.map((op) => op["op-id"]));
    for (const id of ids) this.byId.delete(id);
    const kept = this.ops.filter((op) => !ids.has(op["op-id"]));
    this.ops.length = 0;
    this.ops.push(...kept);
    this.gen++;
  }

  /**
   * Opens the document again from the folder after a failed append (see `refuse`): what the
   * disk holds is the truth again, other processes' writes included, and appends work once there
   * is space. Rides on the same lock (two instances on one path would exclude each other). The old
   * Repo is shut down with its storage frozen, so it writes nothing.
   */
  private async reopen(): Promise<void> {
    if (this.reopener === undefined) return;
    const fresh = await this.reopener();
    const old = this.parts;
    old.handle.off("change", this.onChange);
    await old.repo.shutdown().catch(() => undefined);
    old.storage.dispose();
    fresh.handle.off("change", fresh.onChange);
    this.parts = fresh.parts;
    this.handle.on("change", this.onChange);
    this.ops.length = 0;
    this.ops.push(...fresh.ops);
    this.byId.clear();
    for (const [id, op] of fresh.byId) this.byId.set(id, op);
    this.undecided = fresh.undecided;
    this.heldPending.clear();
    for (const id of fresh.heldPending) this.heldPending.add(id);
    this.heldPendingFiles.clear();
    for (const name of fresh.heldPendingFiles) this.heldPendingFiles.add(name);
    this.invalidEntries = fresh.invalidEntries;
    this.damageFound = fresh.damageFound;
    // Positions in all() may differ from what was held (the disk's order): readers read afresh.
    this.gen++;
    this.mirrored = { count: this.ops.length, heads: this.heads(), gen: this.gen };
    this.failure = undefined;
  }

  /**
   * The mirror is derived: a failure here is mended by the next update (a rewrite), and never
   * undoes a stored append.
   */
  private updateMirror(added: readonly T[] = [], before: readonly string[] = []): void {
    if (!this.mirror || this.storage.readOnly) return;
    try {
      // Chunk names only when the file shows the whole document (no invalid entry it leaves out).
      const chunks =
        this.invalidEntries.length === 0 ? this.storage.chunkStamps(this.handle.documentId) : undefined;
      // Every op since the file was last brought up to date (a replaced op: rewritten whole).
      const since = this.mirrored;
      const delta =
        since !== undefined && since.gen === this.gen
          ? { added: this.ops.slice(since.count), before: since.heads }
          : { added, before };
      const heads = this.heads();
      this.mirror.update(this.ops, heads, delta.added, delta.before, chunks);
      this.mirrored = { count: this.ops.length, heads, gen: this.gen };
      this.mirrorError = undefined;
    } catch (e) {
      // `mirrored` still says what the file holds, so the next update rewrites it.
      this.mirrorError = e;
    }
  }

  /** The document's current heads. */
  heads(): string[] {
    return A.getHeads(this.handle.doc());
  }

  /**
   * Enters the damaged state when the storage held back a chunk of this document, or the document
   * lacks a change of `written` (the heads op-log.jsonl was written at): from then on nothing is
   * written (op-log.jsonl neither, so it keeps every op it had), and on the first entry the ops
   * op-log.jsonl holds that the document lacks are read from it.
   */
  protected checkDamage(written?: readonly string[]): void {
    const chunks = this.storage.damaged.filter((d) => d.documentId === this.handle.documentId);
    const doc = this.handle.doc();
    const lost = (written ?? []).filter((h) => !A.hasHeads(doc, [h]));
    if (chunks.length === 0 && lost.length === 0) return;
    let fromOpLog = this.damageFound?.fromOpLog ?? 0;
    if (this.damageFound === undefined && this.mirror !== undefined) {
      // Only a file that is as this code wrote it: its ops were all in the document once.
      if (written !== undefined || this.mirror.writtenHeads(this.handle.documentId) !== undefined) {
        for (const op of this.mirror.readTolerant().ops) if (this.hold(op as T)) fromOpLog++;
      }
    }
    this.storage.freeze();
    this.damageFound = {
      chunks,
      lostChanges: [...new Set([...(this.damageFound?.lostChanges ?? []), ...lost])],
      fromOpLog,
    };
  }

  private mergeForeign(): T[] {
    const chunks = this.storage.foreignChunks(this.handle.documentId);
    const damaged = this.storage.damaged.filter((d) => d.documentId === this.handle.documentId);
    if (damaged.length !== (this.damageFound?.chunks.length ?? 0)) this.checkDamage();
    if (chunks.length === 0) return [];
    const before = this.ops.length;
    this.handle.update((doc) => {
      let d = doc;
      for (const c of chunks) d = A.loadIncremental(d, c);
      return d;
    });
    return this.ops.slice(before);
  }

  private hold(op: T): boolean {
    const id = op["op-id"];
    if (this.byId.has(id)) return false;
    this.byId.set(id, op);
    this.ops.push(op);
    return true;
  }

  /**
   * An op whose op-id is held already: the same op again (two replicas appended it) is nothing;
   * another op under that id (forged, or corrupted: the sync server and ingest refuse those, a
   * peer that bypassed both did not) is reported as an invalid entry, and the id is decided by
   * {@link decideContested} once the change that brought it is taken in.
   */
  private noteReuse(op: T, at: readonly number[]): void {
    const held = this.byId.get(op["op-id"]);
    if (held === undefined || opContentHash(held) === opContentHash(op)) return;
    this.undecided.add(op["op-id"]);
    if (this.invalidEntries.some((e) => e.opId === op["op-id"] && e.at.join(".") === at.join("."))) return;
    this.invalidEntries.push({ at, opId: op["op-id"], reason: reuseReason(op["op-id"]) });
  }

  /**
   * Decides every op-id seen with a second content (op-id-claims.ts: the causally first claim, of
   * concurrent ones the lowest content hash), whatever order the claims arrived in: the winner
   * takes the held op's position in {@link all} (and {@link generation} is bumped when that
   * changed what was held), every other claim is reported where the document stores it.
   * Returns the ops that replaced held ones.
   */
  private decideContested(doc: A.Doc<OpLogDocument>): T[] {
    if (this.undecided.size === 0) return [];
    const winners = decideClaims(doc, this.undecided);
    this.undecided = new Set();
    if (winners.size === 0) return [];
    const replaced: T[] = [];
    for (const [id, w] of winners) {
      const held = this.byId.get(id);
      if (held === undefined || opContentHash(held) === w.hash) continue;
      const at = this.ops.indexOf(held);
      if (at < 0) continue; // Not reachable: every held op is in `ops`; never write ops[-1].
      const op = copyStoredOp(w.op) as T;
      this.ops[at] = op;
      this.byId.set(id, op);
      replaced.push(op);
    }
    // Every losing claim, where the document stores it (the same list on every replica).
    this.invalidEntries = this.invalidEntries.filter((e) => e.opId === undefined || !winners.has(e.opId));
    forEachStoredOp(doc, (op, at) => {
      const w = winners.get(op["op-id"]);
      if (w !== undefined && opContentHash(op) !== w.hash) {
        this.invalidEntries.push({ at, opId: op["op-id"], reason: reuseReason(op["op-id"]) });
      }
    });
    if (replaced.length > 0) this.gen++;
    return replaced;
  }

  /**
   * Parses one bundle and holds its new ops, appending them to `added`; ops that are not JSON
   * objects with a string op-id are reported, not held. (Plain loops: at open this runs per op.)
   */
  private takeBundle(text: string, at: () => number[], added: T[]): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      this.invalidEntries.push({ at: at(), reason: `not JSON: ${(e as Error).message}` });
      return;
    }
    const list: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    for (let i = 0; i < list.length; i++) {
      const op = list[i];
      if (isHeldOp(op)) {
        if (this.hold(op as T)) added.push(op as T);
        else {
          // Held from a pending file, and now in the document (another process folded it).
          this.heldPending.delete(op["op-id"]);
          this.noteReuse(op as T, [...at(), i]);
        }
        continue;
      }
      this.invalidEntries.push({
        at: [...at(), i],
        reason: 'not an op (a JSON object with a string "op-id")',
      });
    }
  }

  private readAll(doc: A.Doc<OpLogDocument>): T[] {
    const added: T[] = [];
    const chunks: unknown = doc.chunks;
    if (!Array.isArray(chunks)) return added;
    for (let c = 0; c < chunks.length; c++) {
      const chunk: unknown = chunks[c];
      if (!Array.isArray(chunk)) {
        this.invalidEntries.push({ at: [c], reason: "not a list of bundles" });
        continue;
      }
      for (let b = 0; b < chunk.length; b++) {
        const text = bundleText(chunk[b]);
        if (text === undefined) this.invalidEntries.push({ at: [c, b], reason: "not a string" });
        else this.takeBundle(text, () => [c, b], added);
      }
    }
    return added;
  }

  /** A change that did not come from our own append: hold and announce the ops it brought. */
  private received({ patches, doc }: DocHandleChangePayload<OpLogDocument>): void {
    if (this.local || this.closed) return;
    const added: T[] = [];
    let rescan = false;
    const take = (v: unknown, at: readonly number[]) => {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) take(v[i], [...at, i]);
        return;
      }
      const text = bundleText(v);
      if (text !== undefined) this.takeBundle(text, () => [...at], added);
    };
    for (const p of patches) {
      if (p.path[0] !== "chunks") continue;
      if (p.action === "insert") {
        const at = p.path.slice(1).filter((x): x is number => typeof x === "number");
        const base = at[at.length - 1] ?? 0;
        for (let i = 0; i < p.values.length; i++) take(p.values[i], [...at.slice(0, -1), base + i]);
      } else {
        // Not something this layout's writers produce (a peer rewrote the document): read it all again.
        rescan = true;
      }
    }
    if (rescan) added.push(...this.readAll(doc));
    const replaced = this.decideContested(doc);
    if (added.length === 0 && replaced.length === 0) return;
    this.announce([...added, ...replaced]);
  }

  /** Tells the {@link onRemote} listeners of ops that others stored. */
  private announce(ops: readonly T[]): void {
    for (const l of [...this.listeners]) {
      try {
        l(ops);
      } catch (e) {
        warn(`an onRemote listener threw: ${String(e)}`);
      }
    }
  }
}

/** Says a problem that is not the caller's failure: Node's warning channel, or the console in a page. */
function warn(message: string): void {
  const proc = (globalThis as { process?: { emitWarning?: (m: string) => void } }).process;
  if (typeof proc?.emitWarning === "function") proc.emitWarning(message);
  else console.warn(message);
}
