/**
 * Persisted sync state, under our control. automerge-repo saves each peer's sync state (keyed by
 * the peer's storage id) on a timer that outlives `Repo.shutdown`: a process that closes right after
 * a sync loses it (the next sync starts from nothing), and the late write lands in a storage
 * already closed. This keeper takes over: it records the latest state per (document, peer storage
 * id) and writes it when asked ({@link SyncStateKeeper.flush}, which closing calls) or, for a
 * long-running server, after `delayMs`.
 */

import type * as A from "@automerge/automerge";
import type { Repo, StorageId } from "@automerge/automerge-repo";

interface Pending {
  readonly documentId: string;
  readonly storageId: StorageId;
  readonly syncState: A.SyncState;
}

interface SyncStateEvent {
  readonly peerId: string;
  readonly documentId: string;
  readonly syncState: A.SyncState;
}

/** Keeps a Repo's sync states and writes them to its storage on {@link flush}. */
export class SyncStateKeeper {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: Repo,
    /** Write this long after a change (undefined: only on flush). */
    private readonly delayMs?: number,
  ) {
    const synchronizer = repo.synchronizer as unknown as {
      removeAllListeners(event: string): void;
      on(event: string, fn: (e: SyncStateEvent) => void): void;
    };
    // The Repo's own listener only saves on its timer and records remote heads we do not read.
    synchronizer.removeAllListeners("sync-state");
    synchronizer.on("sync-state", (e) => this.record(e));
  }

  /** Tells the Repo a peer's metadata (a storage id withheld until this keeper was installed). */
  trackPeer(peerId: string, metadata: { storageId?: StorageId; isEphemeral?: boolean }): void {
    this.repo.peerMetadataByPeerId[peerId as never] = { ...metadata };
  }

  private record(e: SyncStateEvent): void {
    const meta = this.repo.peerMetadataByPeerId[e.peerId as never];
    if (meta?.storageId === undefined || meta.isEphemeral === true) return;
    this.pending.set(`${e.documentId}/${meta.storageId}`, {
      documentId: e.documentId,
      storageId: meta.storageId,
      syncState: e.syncState,
    });
    if (this.delayMs !== undefined && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush().catch(() => undefined);
      }, this.delayMs);
      this.timer.unref();
    }
  }

  /** Writes every recorded state not yet written. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const run = this.writing.then(async () => {
      const storage = this.repo.storageSubsystem;
      if (storage === undefined) return;
      const batch = [...this.pending.values()];
      this.pending.clear();
      for (const p of batch) await storage.saveSyncState(p.documentId as never, p.storageId, p.syncState);
    });
    this.writing = run.catch(() => undefined);
    return run;
  }
}
