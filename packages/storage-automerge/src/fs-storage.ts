/**
 * automerge-repo's NodeFS storage adapter, made safe for several processes sharing one directory and
 * for crashes: every chunk is written to a temporary file, fsynced and renamed into place (a reader
 * never sees half a chunk, a crash never leaves one), every write and removal happens under an
 * inter-process lock, and a generation token tells each process when another one has written, so
 * it can merge those chunks (see {@link DurableFSStorageAdapter.foreignChunks}).
 *
 * Why the lock: automerge-repo's compaction writes a snapshot and then deletes the chunks this
 * process loaded or wrote. That alone never loses data (whatever is deleted is in the snapshot
 * written just before), but a process that lists the snapshot directory, then the incremental one,
 * while another compacts in between, misses changes in memory. Under the lock a listing is consistent.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Chunk, StorageKey } from "@automerge/automerge-repo/slim";
import { NodeFSStorageAdapter } from "@automerge/automerge-repo-storage-nodefs";
import { fsyncDir, makeDirs, writeAll, writeFileAtomic } from "@kumiki-graph/core";
import { type ChunkKind, chunkDamage, snapshotName } from "./chunk-check.js";
import {
  CHUNK_TYPES,
  chunkStampsIn,
  GENERATION_FILE,
  storagePath,
  writeGenerationToken,
} from "./chunk-files.js";
import { FileLock } from "./file-lock.js";
import type { DamagedChunk } from "./log-storage.js";

export type { DamagedChunk };

/** Options of {@link DurableFSStorageAdapter}. */
export interface DurableStorageOptions {
  /** The inter-process lock; defaults to `<directory>/.lock`. */
  readonly lock?: FileLock;
  /**
   * Open without write access (a read-only mount, another user's workspace): no lock is taken and
   * nothing is written; saves and removals automerge-repo asks for are dropped.
   */
  readonly readOnly?: boolean;
  /**
   * Check every chunk file of a document as it is loaded (default true; see chunk-check.ts) and
   * hold back a damaged one, reporting it in {@link DurableFSStorageAdapter.damaged}, instead of
   * letting Automerge drop part of it silently. Off only for data that is not Automerge's (the
   * acceptance suite stores arbitrary bytes under "snapshot" keys).
   */
  readonly verifyChunks?: boolean;
}

/**
 * The lock of a read-only adapter: takes nothing. A reader needs no lock (chunks are written by
 * rename, and the generation token tells a reader that something moved while it listed).
 */
class NoLock extends FileLock {
  override async run<R>(fn: () => R | Promise<R>): Promise<R> {
    return fn();
  }
  override async acquire(): Promise<void> {}
  override release(): void {}
}

/** A write of the storage that failed (a full disk): its errno code and message. */
export interface StorageFault {
  readonly code: string;
  readonly message: string;
}

/**
 * Every error a {@link DurableFSStorageAdapter} of this process threw (see {@link isStorageFault}),
 * in one set for every copy of this package the process loaded (the CLI's bundle holds one, the
 * MCP server it runs loads the installed one).
 */
const storageFaults: WeakSet<object> = sharedFaults();

function sharedFaults(): WeakSet<object> {
  const g = globalThis as Record<symbol, WeakSet<object> | undefined>;
  const key = Symbol.for("@kumiki-graph/storage-automerge:faults");
  g[key] ??= new WeakSet<object>();
  return g[key];
}

/**
 * True when `e` is an error a storage write of this process threw (a disk fault: ENOSPC, EIO), not
 * a bug. automerge-repo saves in the background too and does not catch a failed save: a process
 * that holds a store open can let such a rejection go (the write that needed the save was refused
 * by its flush, and the next save retries) and still end on every other unhandled rejection.
 */
export function isStorageFault(e: unknown): boolean {
  return typeof e === "object" && e !== null && storageFaults.has(e);
}

/**
 * For a process that holds stores open (the CLI's calls and daemon, the MCP server): automerge-repo
 * saves in the background too and does not catch a failed save, so on a full disk an ENOSPC became
 * an unhandled rejection and ended the process with a raw stack, though the write that needed the
 * save is refused by its own flush. After this call such a rejection is let go; any other unhandled
 * rejection still ends the process, as it would without it. Once per process (every copy of this
 * package shares it).
 */
export function letStorageFaultsGo(): void {
  const g = globalThis as Record<symbol, boolean | undefined>;
  const key = Symbol.for("@kumiki-graph/storage-automerge:faults-let-go");
  if (g[key] === true) return;
  g[key] = true;
  process.on("unhandledRejection", (reason) => {
    if (isStorageFault(reason)) return;
    throw reason;
  });
}

function pidOfTemp(name: string): number | undefined {
  const m = /^(\d+)-/.exec(name);
  return m ? Number(m[1]) : undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** A NodeFS storage adapter with atomic, fsynced writes, shared safely by several processes. */
export class DurableFSStorageAdapter extends NodeFSStorageAdapter {
  /** The lock every write and removal takes; the op log holds it across its own read-modify-write. */
  readonly lock: FileLock;
  /** Nothing is written: opened without write access, or {@link freeze}d (see {@link DurableStorageOptions.readOnly}). */
  get readOnly(): boolean {
    return this.frozen;
  }
  private frozen: boolean;
  private readonly verify: boolean;
  /** Damaged chunk files met so far, by key ("docId/type/name"). */
  private readonly damage = new Map<string, DamagedChunk>();
  private readonly tmpDir: string;
  private readonly generationFile: string;
  private readonly prefix = `${process.pid}-${randomBytes(6).toString("hex")}-`;
  private tmpCount = 0;
  /** Chunk keys ("docId/type/name") this process has loaded or written and not removed. */
  private readonly known = new Set<string>();
  /** Chunk stamps ({@link chunkStamps}) whose files were found sound: not read again. */
  private readonly vouched = new Set<string>();
  /**
   * Every key this adapter saved and did not remove, in the order of its first save: loadRange
   * lists those first, in that order, then what only the disk holds, by key (the order
   * automerge-repo's acceptance suite expects of an adapter; NodeFS gets it from its data cache,
   * which this adapter does not keep, so that other processes' writes are never shadowed).
   */
  private readonly saveOrder = new Map<string, number>();
  private saves = 0;
  /** The generation token as of our last look (undefined: never looked, so list everything). */
  private seenGeneration: string | undefined;

  /** The generation token as of the last look (see LogStorage's `generation`). */
  get generation(): string | undefined {
    return this.seenGeneration;
  }
  /** Directories known to exist (chunk directories are never removed while a Repo uses them). */
  private readonly dirs = new Set<string>();
  /**
   * Descriptors kept open across appends: of chunk directories (to fsync them) and of the
   * generation file. Each open is a path lookup and, next to a pending fsync, measurably slow here.
   */
  private readonly dirFds = new Map<string, number>();
  private genFd: number | undefined;
  /** Set by {@link dispose}: the log using this adapter has closed. */
  private disposed = false;
  /** The last write that failed (ENOSPC, EIO, …), until a write succeeds again. */
  private lastFault: StorageFault | undefined;
  /** The size of the largest write that failed since the last success (what {@link probe} writes). */
  private faultBytes = 0;
  /** Errors this adapter's writes threw (so a process can tell a disk fault from a bug). */
  private readonly faults = new WeakSet<object>();

  constructor(
    /** The directory holding the chunks. */
    readonly directory: string,
    options: DurableStorageOptions = {},
  ) {
    super(directory);
    this.frozen = options.readOnly === true;
    this.verify = options.verifyChunks !== false;
    if (!this.frozen) makeDirs(directory);
    this.tmpDir = path.join(directory, ".tmp");
    this.generationFile = path.join(directory, GENERATION_FILE);
    this.lock = this.readOnly
      ? new NoLock(path.join(directory, ".lock"))
      : (options.lock ?? new FileLock(path.join(directory, ".lock")));
  }

  /** Writes a chunk atomically and durably (temp file, fsync, rename, fsync of the directory). */
  override async save(key: StorageKey, data: Uint8Array): Promise<void> {
    if (this.disposed) return; // see dispose()
    // Read-only: automerge-repo's own saves (its storage id, sync state, a compaction) are dropped;
    // the op log refuses appends before they reach here.
    if (this.readOnly) return;
    await this.late(() =>
      this.faulting(data.length, () =>
        this.lock.run(() => {
          if (this.disposed) return;
          const target = this.filePath(key);
          this.ensureDir(path.dirname(target));
          this.ensureDir(this.tmpDir);
          // In the storage's own temporaries folder (swept after a crash), the chunk folder kept open.
          writeFileAtomic(target, data, {
            tmp: path.join(this.tmpDir, `${this.prefix}${this.tmpCount++}`),
            fsyncDir: (dir) => this.fsyncDir(dir),
          });
          const joined = key.join("/");
          if (!this.saveOrder.has(joined)) this.saveOrder.set(joined, this.saves++);
          if (this.isChunk(key)) {
            this.known.add(joined);
            this.bumpGeneration();
          }
        }),
      ),
    );
  }

  /**
   * The write that failed last (its errno code and message), while no write has succeeded since:
   * what a server reports as unhealthy (a full disk), and clears once space returns.
   */
  get fault(): StorageFault | undefined {
    return this.lastFault;
  }

  /**
   * After a fault: tries a durable write as large as the one that failed (in `.tmp/`, fsynced,
   * then removed) and clears the fault when it succeeds — space came back — so a health check need
   * not wait for the next save. Returns the fault that remains, if any.
   */
  probe(): StorageFault | undefined {
    if (this.lastFault === undefined || this.readOnly) return this.lastFault;
    const file = path.join(this.tmpDir, `${this.prefix}probe`);
    try {
      this.ensureDir(this.tmpDir);
      const fd = fs.openSync(file, "w");
      try {
        // In blocks of at most 1 MiB: a failed compaction can be many megabytes.
        const size = Math.max(this.faultBytes, 4096);
        const block = new Uint8Array(Math.min(size, 1 << 20));
        for (let done = 0; done < size; done += block.length)
          writeAll(fd, block.subarray(0, Math.min(block.length, size - done)));
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      this.lastFault = undefined;
    } catch {
      // Still failing: the fault stands.
    } finally {
      fs.rmSync(file, { force: true });
    }
    return this.lastFault;
  }

  /** True when `e` is an error one of this adapter's writes threw (a disk fault, not a bug). */
  threw(e: unknown): boolean {
    return typeof e === "object" && e !== null && this.faults.has(e);
  }

  /**
   * Runs a write that began before {@link dispose} and may end after it: once disposed, its failure
   * (the folder removed meanwhile: ENOENT taking the lock, bumping the generation) is dropped as
   * the write itself would have been, where it surfaced as an unhandled rejection from
   * automerge-repo's throttled save.
   */
  private async late(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (e) {
      if (!this.disposed) throw e;
    }
  }

  private async faulting<R>(bytes: number, write: () => Promise<R>): Promise<R> {
    try {
      const r = await write();
      // A small write (a sync state) fitting says nothing of the large one that did not.
      if (bytes >= this.faultBytes) this.lastFault = undefined;
      return r;
    } catch (e) {
      if (typeof e === "object" && e !== null) {
        this.faults.add(e);
        storageFaults.add(e);
      }
      // The largest write that failed since the last success: what must fit again.
      this.faultBytes = this.lastFault === undefined ? bytes : Math.max(this.faultBytes, bytes);
      this.lastFault = {
        code: String((e as NodeJS.ErrnoException).code ?? "EIO"),
        message: e instanceof Error ? e.message : String(e),
      };
      throw e;
    }
  }

  /**
   * Compacts `documentId` into one snapshot when this process knows more than `most` incremental
   * chunks of it, and says whether it did. automerge-repo compacts only once the incremental
   * chunks outweigh the snapshot (at 5,000 definitions, after about 1,500 one-op writes), and a
   * process that opens the document pays for every chunk file (about 0.5 ms each: `kumiki add` in
   * its own process 1.3–1.4 s at 66 chunks, 1.8–2.0 s at 1,069). Under the lock, as
   * automerge-repo's own compaction: the snapshot `snapshot()` gives is written (durably, by
   * rename) before any chunk is removed, and only chunks this process loaded or wrote are
   * removed, so whatever is removed is in a snapshot on disk. A crash in between leaves chunks the
   * snapshot holds too (their changes load once); automerge-repo, whose list of the document's
   * chunks this leaves stale, removes a chunk that is gone as a no-op.
   */
  async compact(
    documentId: string,
    snapshot: () => { readonly bytes: Uint8Array; readonly heads: readonly string[] },
    most: number,
  ): Promise<boolean> {
    if (this.readOnly || this.disposed || this.damage.size > 0) return false;
    return this.lock.run(async () => {
      const prefix = `${documentId}/`;
      const mine = [...this.known].filter((k) => k.startsWith(prefix));
      if (mine.filter((k) => k.startsWith(`${prefix}incremental/`)).length <= most) return false;
      // Named as automerge-repo names a snapshot (by its heads): its own compaction at the same
      // heads writes the same file, and keeps it.
      const { bytes, heads } = snapshot();
      const name = snapshotName(heads);
      await this.save([documentId, "snapshot", name], bytes);
      for (const key of mine) if (key !== `${prefix}snapshot/${name}`) await this.remove(key.split("/"));
      return true;
    });
  }

  /** Removes one chunk (under the lock; refused on a read-only or frozen storage). */
  override async remove(key: StorageKey): Promise<void> {
    if (this.readOnly || this.disposed) return; // see dispose()
    await this.late(() =>
      this.lock.run(async () => {
        if (this.disposed) return;
        await super.remove(key);
        this.saveOrder.delete(key.join("/"));
        if (this.isChunk(key)) {
          this.known.delete(key.join("/"));
          this.bumpGeneration();
        }
      }),
    );
  }

  /** Removes every chunk under `keyPrefix` (under the lock; refused on a read-only or frozen storage). */
  override async removeRange(keyPrefix: StorageKey): Promise<void> {
    if (this.readOnly || this.disposed) return; // see dispose()
    await this.late(() =>
      this.lock.run(async () => {
        if (this.disposed) return;
        await super.removeRange(keyPrefix);
        this.dirs.clear();
        const p = `${keyPrefix.join("/")}/`;
        for (const k of [...this.known]) if (k.startsWith(p)) this.known.delete(k);
        for (const k of [...this.saveOrder.keys()]) if (k.startsWith(p)) this.saveOrder.delete(k);
        this.bumpGeneration();
      }),
    );
  }

  /**
   * Stops writing from now on, as if opened read-only (saves and removals are dropped): what a log
   * does once it finds damage, so that nothing derived from a partial document is stored.
   */
  freeze(): void {
    this.frozen = true;
  }

  /** The damaged chunk files met so far (held back from every load), oldest first. */
  get damaged(): readonly DamagedChunk[] {
    return [...this.damage.values()];
  }

  /** What is wrong with the chunk `key` holding `data` (recorded), or undefined when it is sound or not a chunk. */
  private chunkFault(key: StorageKey, data: Uint8Array): string | undefined {
    if (!this.verify || !this.isChunk(key)) return undefined;
    const reason = chunkDamage(key[1] as ChunkKind, key[2]!, data);
    if (reason !== undefined) {
      const joined = key.join("/");
      if (!this.damage.has(joined))
        this.damage.set(joined, {
          documentId: key[0]!,
          name: `${key[1]}/${key[2]}`,
          path: this.filePath(key),
          reason,
        });
    }
    return reason;
  }

  /** The chunks under `keyPrefix`, without those held back as damaged. */
  override async loadRange(keyPrefix: StorageKey): Promise<Chunk[]> {
    const chunks = (await super.loadRange(keyPrefix)).filter(
      (c) => c.data === undefined || this.chunkFault(c.key, c.data) === undefined,
    );
    for (const c of chunks) if (c.data !== undefined && this.isChunk(c.key)) this.known.add(c.key.join("/"));
    const rank = (c: Chunk): [number, string] => {
      const k = c.key.join("/");
      return [this.saveOrder.get(k) ?? Number.MAX_SAFE_INTEGER, k];
    };
    return chunks.sort((a, b) => {
      const [ra, ka] = rank(a);
      const [rb, kb] = rank(b);
      return ra - rb || (ka < kb ? -1 : ka > kb ? 1 : 0);
    });
  }

  /**
   * The chunks of `documentId` that other processes wrote since this one last looked (and that it
   * has not loaded or written itself), read from disk. Costs one small file read when nobody else
   * wrote. Safe without the {@link lock}: every chunk write and removal moves the generation token
   * after it, so a listing during which the token moved (a compaction may have removed a listed
   * chunk) is read again, up to `attempts` times; chunks already read are kept. If the token never
   * settles, what was read is returned and the next call looks again.
   */
  foreignChunks(documentId: string, attempts = 8): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let attempt = 0; attempt < attempts; attempt++) {
      const generation = this.readGeneration();
      if (generation !== undefined && generation === this.seenGeneration) return out;
      this.readUnknownChunks(documentId, out);
      const after = this.readGeneration();
      // Settled: nothing was written or removed while we listed. Otherwise look again, and if the
      // token never settles keep the older one as seen, so that the next call lists again.
      this.seenGeneration = generation;
      if (after === generation) return out;
    }
    return out;
  }

  private readUnknownChunks(documentId: string, out: Uint8Array[]): void {
    for (const type of CHUNK_TYPES) {
      const dir = this.filePath([documentId, type]);
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw e;
      }
      for (const name of names) {
        const k = `${documentId}/${type}/${name}`;
        if (this.known.has(k)) continue;
        try {
          const data = new Uint8Array(fs.readFileSync(path.join(dir, name)));
          this.known.add(k);
          if (this.chunkFault([documentId, type, name], data) === undefined) out.push(data);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        }
      }
    }
  }

  /**
   * The chunks of `documentId` on disk, sorted, each as `type/name size mtime` (see
   * {@link chunkStampsIn}): an equal list means equal stored contents, what lets a reader trust
   * op-log.jsonl derived from them (see OpLogFile.verified). Undefined when a file listed is
   * not sound: one damaged in place after this process loaded it (cut short, emptied, a byte
   * flipped) is never vouched for by a writer that holds its changes in memory, or readers would
   * be served op-log.jsonl and never told of the damage. Each stamp is checked once per process
   * (chunk-check.ts: an incremental chunk's hash against its name, a snapshot's checksums; about
   * 3 ms for 5 MB), after a write only the new chunk.
   */
  chunkStamps(documentId: string): string[] | undefined {
    const stamps = chunkStampsIn(this.directory, documentId);
    for (const stamp of stamps) {
      if (this.vouched.has(stamp)) continue;
      const [type = "", name = ""] = (stamp.split(" ")[0] ?? "").split("/");
      let data: Uint8Array;
      try {
        data = fs.readFileSync(this.filePath([documentId, type, name]));
      } catch {
        return undefined; // Removed since the listing: no list vouches for it.
      }
      if (chunkDamage(type as ChunkKind, name, data) !== undefined) return undefined;
      this.vouched.add(stamp);
    }
    return stamps;
  }

  /** The path of the chunk file `name` (`snapshot/<hash>` or `incremental/<hash>`) of `documentId`. */
  chunkFile(documentId: string, name: string): string {
    return this.filePath([documentId, ...name.split("/")]);
  }

  /** Writes automerge-repo's storage id (a UUID) if there is none yet. */
  ensureStorageId(): void {
    const file = this.filePath(["storage-adapter-id"]);
    if (this.readOnly || fs.existsSync(file)) return;
    this.ensureDir(path.dirname(file));
    // (Its temporary file was written without an fsync before: a crash could leave an empty id.)
    writeFileAtomic(file, randomUUID(), { tmp: path.join(this.directory, `.storage-id-${this.prefix}`) });
  }

  /** True when some chunk of `documentId` is on disk. */
  hasDocument(documentId: string): boolean {
    return CHUNK_TYPES.some((type) => {
      try {
        return fs.readdirSync(this.filePath([documentId, type])).length > 0;
      } catch {
        return false;
      }
    });
  }

  /** Removes temporary files left by processes that died mid-write. Call it while holding {@link lock}. */
  sweepTemporaries(): void {
    if (this.readOnly) return;
    let names: string[];
    try {
      names = fs.readdirSync(this.tmpDir);
    } catch {
      return;
    }
    for (const name of names) {
      const pid = pidOfTemp(name);
      if (name.startsWith(this.prefix) || (pid !== undefined && isRunning(pid))) continue;
      fs.rmSync(path.join(this.tmpDir, name), { force: true });
    }
  }

  private isChunk(key: StorageKey): boolean {
    return key.length === 3 && (key[1] === "snapshot" || key[1] === "incremental");
  }

  private filePath(key: StorageKey): string {
    return storagePath(this.directory, key);
  }

  private ensureDir(dir: string): void {
    if (this.dirs.has(dir)) return;
    if (fs.existsSync(dir)) {
      this.dirs.add(dir);
      return;
    }
    const created = makeDirs(dir);
    if (created === undefined) return;
    // A new directory's entry lives in its parent: sync the parent of the outermost new one and
    // every new one down to `dir`.
    fsyncDir(path.dirname(created));
    for (let d = dir; d.length >= created.length; d = path.dirname(d)) fsyncDir(d);
    this.dirs.add(dir);
  }

  /**
   * Closes the descriptors this adapter keeps open (a read reopens them), and drops every save and
   * removal from then on: what the Repo using it did after its user closed it. automerge-repo saves
   * from throttle timers that `Repo.shutdown` neither cancels nor waits for, so a save (sync state,
   * a chunk, a compaction's snapshot and removals) can run after the close, outside the workspace's
   * lock, once the folder is gone: an unhandled rejection that ended a process which removed a
   * workspace right after syncing it. Nothing is lost by dropping them: the close flushed the
   * whole document first (the op log under its lock, the server per graph), and a late save is of
   * that document or an earlier state; a compaction dropped halfway keeps its older chunks, whose
   * changes the next load merges. The Repo's storage id was written by ensureStorageId before it
   * started, so its late save of one is dropped too. A write already under way when this is
   * called stops at its next step, and its failure from the folder's removal is dropped (see late()).
   */
  dispose(): void {
    this.disposed = true;
    for (const fd of this.dirFds.values()) fs.closeSync(fd);
    this.dirFds.clear();
    if (this.genFd !== undefined) fs.closeSync(this.genFd);
    this.genFd = undefined;
  }

  private fsyncDir(dir: string): void {
    let fd = this.dirFds.get(dir);
    if (fd === undefined) {
      fd = fs.openSync(dir, "r");
      this.dirFds.set(dir, fd);
    }
    fs.fsyncSync(fd);
  }

  /** The generation file, open; reopened if it was removed or replaced under us. */
  private generationFd(create: boolean): number | undefined {
    if (this.genFd !== undefined) {
      const linked = fs.fstatSync(this.genFd).nlink > 0;
      if (linked) return this.genFd;
      fs.closeSync(this.genFd);
      this.genFd = undefined;
    }
    try {
      this.genFd = fs.openSync(this.generationFile, "r+");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || !create) return undefined;
      this.genFd = fs.openSync(this.generationFile, "w+");
    }
    return this.genFd;
  }

  private readGeneration(): string | undefined {
    const fd = this.generationFd(false);
    if (fd === undefined) return undefined;
    const buf = Buffer.alloc(64);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return n === 0 ? undefined : buf.toString("utf8", 0, n);
  }

  /** Records that the chunks changed; if nobody else wrote since our last look, we are still up to date. */
  private bumpGeneration(): void {
    const before = this.readGeneration();
    const next = writeGenerationToken(this.generationFd(true)!);
    if (before !== undefined && before === this.seenGeneration) this.seenGeneration = next;
  }
}
