/**
 * A workspace's op log: the graph document in a Repo of its own over
 * {@link DurableFSStorageAdapter} (automerge-repo's NodeFS adapter with atomic, fsynced writes and an
 * inter-process lock), with the readable op log kept beside it. What a log does with its document
 * (read, append, take in what arrives) is {@link RepoOpLog}'s (repo-op-log.ts, Node-free); this
 * subclass adds what a folder brings: creating and opening it, other processes' chunks and damage,
 * opening again after a failed append, and a watch on the folder. No network adapter is configured
 * here; sync adds one to the same Repo (`network` option, or `log.repo.networkSubsystem.addNetworkAdapter`),
 * and the ops it brings in arrive through {@link RepoOpLog.onRemote} like those of other local processes.
 */
import fs from "node:fs";
import * as A from "@automerge/automerge";
import {
  type DocHandle,
  type DocumentId,
  isValidAutomergeUrl,
  type NetworkAdapterInterface,
  type PeerId,
  Repo,
  type SharePolicy,
} from "@automerge/automerge-repo";
import type { StoredOp } from "@kumiki-graph/core";
import { GENERATION_FILE } from "./chunk-files.js";
import type { FileLock } from "./file-lock.js";
import { DurableFSStorageAdapter } from "./fs-storage.js";
import {
  bundleText,
  emptyOpLogDocument,
  OP_LOG_FORMAT,
  OP_LOG_KIND,
  type OpLogDocument,
} from "./op-log-document.js";
import type { OpLogFile } from "./op-log-file.js";
import { PendingBundles } from "./pending-bundles.js";
import { OpLogOpenError, RepoOpLog } from "./repo-op-log.js";

/** How {@link AutomergeOpLog} builds its Repo. */
export interface AutomergeOpLogOptions {
  /** The automerge-repo storage directory (e.g. `.kumiki/automerge`). */
  readonly directory: string;
  /** Network adapters for the Repo (none by default: sync adds its own). */
  readonly network?: readonly NetworkAdapterInterface[];
  readonly peerId?: PeerId;
  readonly sharePolicy?: SharePolicy;
  /** The readable op log to keep complete after each append and on close. */
  readonly mirror?: OpLogFile;
  /** Bundles per inner list (tests use small values to exercise chunk boundaries). */
  readonly chunkSize?: number;
  /** The inter-process lock (default: `<directory>/.lock`); pass one you already hold to nest. */
  readonly lock?: FileLock;
  /**
   * Open without write access (a read-only mount, another user's workspace): no lock, nothing
   * written (the readable op log neither), appends refused; reads and catching up work as usual.
   */
  readonly readOnly?: boolean;
  /**
   * Hold the writes stored beside the document (`pending/`, see pending-bundles.ts) as its own ops.
   * Default true; a writable log also folds them into the document, a read-only one holds them
   * only. False shows the document as stored, which a repair's inspection needs: its ops after the
   * document's are exactly op-log.jsonl's (quick-write.test's repair case).
   */
  readonly readPending?: boolean;
  /**
   * Open a document that lacks changes the readable op log was written after, as if whole (what a
   * repair does once it has moved damaged chunks aside). Default: such a document opens damaged.
   */
  readonly acceptLostChanges?: boolean;
  /**
   * Why the workspace this log belongs to is no longer the one at its folder (removed, or another
   * graph made or cloned there), or undefined while it is. Asked before each append and at close:
   * from a yes on, the log writes nothing there again (no chunk, no op-log.jsonl) and refuses
   * appends with a {@link WorkspaceReplacedError}.
   */
  readonly replaced?: () => string | undefined;
}

/** A workspace's {@link RepoOpLog}: its document in `.kumiki/automerge`, opened from the folder. */
export class AutomergeOpLog<T extends StoredOp = StoredOp> extends RepoOpLog<T> {
  /** Creates a new, empty graph document in `options.directory`, durably. */
  static create<T extends StoredOp = StoredOp>(options: AutomergeOpLogOptions): Promise<AutomergeOpLog<T>> {
    return AutomergeOpLog.withRepo(options, async (repo, storage) => {
      const handle = repo.create<OpLogDocument>(emptyOpLogDocument());
      await repo.flush([handle.documentId]);
      const log = new AutomergeOpLog<T>(repo, handle, storage, withPending(options));
      log.reopenFrom(options, handle.url, storage);
      storage.foreignChunks(handle.documentId);
      handle.on("change", log.onChange);
      log.mirror?.update(log.ops, log.heads());
      return log;
    });
  }

  /** Opens the graph document `url` stored in `options.directory`. */
  static async open<T extends StoredOp = StoredOp>(
    options: AutomergeOpLogOptions & { readonly url: string },
  ): Promise<AutomergeOpLog<T>> {
    try {
      return await AutomergeOpLog.openOnce<T>(options, false);
    } catch (e) {
      // Every chunk held back as damaged: nothing loaded, so automerge-repo found no document.
      // Open again as an empty, damaged document (read from op-log.jsonl, writing nothing).
      if (e instanceof OpLogOpenError && e.damaged) return AutomergeOpLog.openOnce<T>(options, true);
      throw e;
    }
  }

  private static openOnce<T extends StoredOp>(
    options: AutomergeOpLogOptions & { readonly url: string },
    empty: boolean,
  ): Promise<AutomergeOpLog<T>> {
    const url = options.url;
    if (!isValidAutomergeUrl(url)) {
      return Promise.reject(new OpLogOpenError("store-corrupt", `not an Automerge document URL: ${url}`));
    }
    return AutomergeOpLog.withRepo(options, async (repo, storage) => {
      storage.sweepTemporaries();
      const documentId = url.slice("automerge:".length);
      const written =
        options.acceptLostChanges === true ? undefined : options.mirror?.writtenHeads(documentId);
      let handle: DocHandle<OpLogDocument>;
      let imported = false;
      if (empty || (!storage.hasDocument(documentId) && (options.network ?? []).length === 0)) {
        // Held back damaged chunks are recorded by this load (it returns only sound ones: none).
        if (empty) await storage.loadRange([documentId]);
        if (!empty && (written === undefined || written.length === 0)) {
          throw new OpLogOpenError(
            "store-missing",
            `the graph document ${url} is not in ${options.directory}`,
          );
        }
        // Every chunk is gone or damaged, but op-log.jsonl says there was a document: open it
        // damaged (empty, read from op-log.jsonl), writing nothing, so that it can be read and repaired.
        storage.freeze();
        handle = repo.import<OpLogDocument>(A.save(A.init()), { docId: documentId as DocumentId });
        handle.doneLoading();
        imported = true;
      } else {
        try {
          handle = await repo.find<OpLogDocument>(url);
        } catch (e) {
          throw new OpLogOpenError("store-corrupt", `cannot load ${url}: ${(e as Error).message}`, {
            cause: e,
            damaged: storage.damaged.length > 0,
          });
        }
      }
      const log = new AutomergeOpLog<T>(repo, handle, storage, withPending(options));
      const doc = handle.doc();
      const isOpLog = bundleText(doc.kind) === OP_LOG_KIND && typeof doc.format === "number";
      // Not an op log: unless it is one that lost its first change (op-log.jsonl vouches for more).
      const lost = (written ?? []).some((h) => !A.hasHeads(doc, [h]));
      if (!isOpLog && storage.damaged.length === 0 && !imported && !lost) {
        throw new OpLogOpenError("store-corrupt", `${url} is not a Kumiki op log`);
      }
      if (isOpLog && doc.format > OP_LOG_FORMAT) {
        throw new OpLogOpenError(
          "store-unsupported",
          `${url} has op log format ${doc.format}; this version reads up to ${OP_LOG_FORMAT}`,
        );
      }
      if (!empty) log.reopenFrom(options, url, storage);
      log.load(written);
      // Writes that did not load the document stored their bundles beside it: in they go. One that
      // cannot be stored now (a full disk) stays on disk for the next opener.
      await log.foldPending().catch(() => undefined);
      return log;
    });
  }

  /** Builds the Repo under the storage lock, and shuts it down again if `fn` fails. */
  private static async withRepo<R>(
    options: AutomergeOpLogOptions,
    fn: (repo: Repo, storage: DurableFSStorageAdapter) => Promise<R>,
  ): Promise<R> {
    const storage = new DurableFSStorageAdapter(options.directory, {
      ...(options.lock ? { lock: options.lock } : {}),
      ...(options.readOnly === true ? { readOnly: true } : {}),
    });
    return storage.lock.run(async () => {
      // The Repo reads (and, when absent, writes) its storage id in the background as it starts;
      // writing it here first keeps that write from outliving a quick close.
      storage.ensureStorageId();
      const repo = new Repo({
        storage,
        network: [...(options.network ?? [])],
        ...(options.peerId ? { peerId: options.peerId } : {}),
        ...(options.sharePolicy ? { sharePolicy: options.sharePolicy } : {}),
      });
      try {
        return await fn(repo, storage);
      } catch (e) {
        await repo.shutdown().catch(() => undefined);
        storage.dispose();
        options.mirror?.dispose();
        throw e;
      }
    });
  }

  /** Opens the document again from `options`' folder after a failed append, when it can be (see {@link reopenable}). */
  private reopenFrom(options: AutomergeOpLogOptions, url: string, storage: DurableFSStorageAdapter): void {
    const with_ = reopenable(options, url, storage);
    this.reopener = with_ === undefined ? undefined : () => AutomergeOpLog.open<T>(with_);
  }

  /**
   * Calls `changed` soon after another process stored a chunk of this log's folder (its generation
   * token moved), until the returned function is called: a file watch on the storage folder
   * (inotify), coalesced over 20 ms; where the system refuses a watch, a look every 500 ms. Neither
   * keeps the process alive. Our own writes move the token too: `changed` is then a cheap no-op
   * look.
   */
  override watch(changed: () => void): () => void {
    if (this.closed) return () => undefined;
    let timer: NodeJS.Timeout | undefined;
    const soon = () => {
      if (timer !== undefined || this.closed) return;
      timer = setTimeout(() => {
        timer = undefined;
        // A write that did not load the document moved the token: fold its bundle in first, so
        // that the look `changed` makes sees it.
        if (!this.closed)
          void this.foldPending()
            .catch(() => undefined)
            .then(() => {
              if (!this.closed) changed();
            });
      }, 20);
      timer.unref();
    };
    let stop: () => void;
    try {
      const watcher = fs.watch(this.storage.directory, { persistent: false }, (_event, name) => {
        if (name === null || name === GENERATION_FILE) soon();
      });
      // A folder removed under the watch ends it; the log then refuses as replaced.
      watcher.on("error", () => watcher.close());
      stop = () => watcher.close();
    } catch {
      const every = setInterval(soon, 500);
      every.unref();
      stop = () => clearInterval(every);
    }
    return () => {
      stop();
      if (timer !== undefined) clearTimeout(timer);
    };
  }
}

/**
 * `options` with the storage folder's pending bundles, held (and, when the log may write, folded
 * in), unless `readPending` is false.
 */
function withPending(options: AutomergeOpLogOptions): AutomergeOpLogOptions & { pending?: PendingBundles } {
  return options.readPending === false
    ? options
    : { ...options, pending: new PendingBundles(options.directory) };
}

/**
 * How a log opened from `options` is opened again after a failed append (see AutomergeOpLog's
 * `refuse`), or undefined when it cannot be: read-only (it never appends), or with a network (its
 * peers may hold the refused change already, so what the folder holds is not the whole truth).
 */
function reopenable(
  options: AutomergeOpLogOptions,
  url: string,
  storage: DurableFSStorageAdapter,
): (AutomergeOpLogOptions & { readonly url: string }) | undefined {
  if (options.readOnly === true || (options.network ?? []).length > 0) return undefined;
  return { ...options, url, lock: storage.lock };
}
