/**
 * Changes another server stored in a storage several share (PostgreSQL), taken into the graphs
 * loaded here: from the storage's notices as they come, by reading a graph's chunks when notices
 * may have been missed, and behind a fence before a read that must see every acknowledged write.
 */
import * as A from "@automerge/automerge";
import type { DocumentId, Repo } from "@automerge/automerge-repo";
import type { ServerStorage } from "./server-storage.js";

/** What {@link StoredElsewhere} tells the server. */
export interface StoredElsewhereEvents {
  /** A graph took in chunks: its document shape (its lists) may have grown. */
  readonly stale: (documentId: string) => void;
  /** Taking in a noticed change failed (logged; the graph's next catch-up reads it again). */
  readonly failed: (e: unknown) => void;
}

export class StoredElsewhere {
  /** The takes under way: a fence waits for those whose notices came before it. */
  private readonly taking = new Set<Promise<void>>();
  /** The listening connection whose notices each graph has followed since its last full catch-up. */
  private readonly followedSince = new Map<string, number>();
  private readonly unwatch: (() => void) | undefined;

  constructor(
    private readonly repo: Repo,
    private readonly storage: ServerStorage,
    private readonly events: StoredElsewhereEvents,
  ) {
    this.unwatch = storage.watch?.((key) => {
      // A chunk gone since its notice was compacted into a snapshot, whose own notice follows.
      const took: Promise<void> = this.takeIn(key[0]!, async () => [
        await storage.load([...key]).catch(() => undefined),
      ])
        .catch((e: unknown) => events.failed(e))
        .finally(() => this.taking.delete(took));
      this.taking.add(took);
    });
  }

  /** Every change the storage holds (other servers' included), taken into the loaded graph. */
  catchUp(documentId: string): Promise<void> {
    return this.takeIn(documentId, async () =>
      (await this.storage.loadRange([documentId])).map((c) => c.data),
    );
  }

  /**
   * Every change committed before now, taken in: behind the storage's notices when it has them (a
   * round trip), by reading the graph's chunks when notices may have been missed.
   */
  async fence(documentId: string): Promise<void> {
    if (this.storage.fence === undefined) return;
    const listening = await this.storage.fence();
    await Promise.all([...this.taking]);
    if (listening !== undefined && this.followedSince.get(documentId) === listening) return;
    await this.catchUp(documentId);
    if (listening !== undefined) this.followedSince.set(documentId, listening);
  }

  /** Stops following the storage's notices. */
  close(): void {
    this.unwatch?.();
  }

  /**
   * Takes stored chunks (`read` of the storage) into the graph when it is loaded here (a graph not
   * loaded here reads every chunk when it is first asked for).
   */
  private async takeIn(
    documentId: string,
    read: () => Promise<readonly (Uint8Array | undefined)[]>,
  ): Promise<void> {
    const handle = this.repo.handles[documentId as DocumentId];
    if (handle === undefined || !handle.isReady()) return;
    const chunks = await read();
    if (chunks.every((c) => c === undefined)) return;
    handle.update((doc) => {
      let d = doc;
      for (const c of chunks) if (c !== undefined) d = A.loadIncremental(d, c);
      return d;
    });
    // Read again at the next check, keeping what was accepted and not applied yet (dropping the
    // shape lost it: a peer's next push into a chunk list it had just made was refused).
    this.events.stale(documentId);
  }
}
