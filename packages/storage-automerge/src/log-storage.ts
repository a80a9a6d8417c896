/**
 * What an op log needs of the storage under its Repo (see repo-op-log.ts): a workspace's
 * `DurableFSStorageAdapter` (fs-storage.ts) answers all of it; a log attached to a Repo that is not a
 * workspace's (a sync server's graphs, a page's IndexedDB) gets {@link ATTACHED}, which has nothing
 * to lock, no other process's chunks to take in, no damage to hold back and no readable op log to
 * keep. Node-free: the browser entry's log is typed by it.
 */

/** A chunk file held back because it is damaged. */
export interface DamagedChunk {
  /** The document it belongs to. */
  readonly documentId: string;
  /** `snapshot/<name>` or `incremental/<name>`, the chunk's key names it. */
  readonly name: string;
  /** Its path on disk. */
  readonly path: string;
  /** What is wrong with it (truncated, checksum mismatch, empty…). */
  readonly reason: string;
}

/** The storage under a log's Repo, as the log sees it. */
export interface LogStorage {
  /** Guards every write: no other process appends while `fn` runs. */
  readonly lock: {
    /** Runs `fn` holding the lock (nested calls of one holder ride on it). */
    run<R>(fn: () => R | Promise<R>): Promise<R>;
  };
  /** Chunks of `documentId` other processes stored since the last call (their changes to take in). */
  foreignChunks(documentId: string): Uint8Array[];
  /**
   * The storage's generation token as {@link foreignChunks} last saw it (every chunk write, removal
   * and pending write moves it); undefined when unknown. An equal token means nothing was stored
   * since, so a log need not look at the folder again.
   */
  readonly generation?: string | undefined;
  /** Chunks held back as damaged. */
  readonly damaged: readonly DamagedChunk[];
  /** From now on nothing is written (pending saves are dropped). */
  freeze(): void;
  /** Nothing is written: opened without write access, or frozen. */
  readonly readOnly: boolean;
  /** Where it stores, for messages. */
  readonly directory: string;
  /**
   * The names of `documentId`'s stored chunks (what the readable op log records it was written
   * from), or undefined when one of them is not sound: the file is then vouched for by no list.
   */
  chunkStamps(documentId: string): string[] | undefined;
  /**
   * Compacts `documentId` into one snapshot when more than `most` incremental chunks of it are
   * known here (see DurableFSStorageAdapter's); absent where the Repo's owner does the storing.
   */
  compact?(
    documentId: string,
    snapshot: () => { readonly bytes: Uint8Array; readonly heads: readonly string[] },
    most: number,
  ): Promise<boolean>;
  /** Lets go of what it holds open. */
  dispose(): void;
}

/** The storage of an attached log: the Repo's owner does the storing, locking and merging. */
export const ATTACHED: LogStorage = {
  lock: { run: async (fn) => fn() },
  foreignChunks: () => [],
  damaged: [],
  freeze: () => undefined,
  readOnly: false,
  directory: "(the Repo's own storage)",
  chunkStamps: () => [],
  dispose: () => undefined,
};
