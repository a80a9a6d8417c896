/**
 * Loss notices pushed to the session whose write lost. A write this server answered as done can
 * later lose the merge to ops that arrive from elsewhere (another process on the workspace, a sync
 * from a peer); core's `Store.onLoss` tells which. This server looks for arrivals every
 * {@link LOSS_POLL_MS} and tells its client at once, three ways: a `notifications/message` (level
 * warning, logger `kumiki`) carrying the structured loss, `notifications/resources/updated` for
 * `kumiki://conflicts` when the client subscribed to it, and the next tool answer, which carries
 * the losses told since the previous answer (`_meta["kumiki-graph/losses"]`, and a second text item
 * for clients that read only text).
 */
import type { LossNotice, Store } from "@kumiki-graph/core";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/** How often the server takes in other writers' ops to look for losses (the notice's delay bound). */
export const LOSS_POLL_MS = 250;

/** The URI of the conflict records resource. */
export const CONFLICTS_URI = "kumiki://conflicts";

/** One lost op as a notice carries it. */
export interface LostOpNotice {
  readonly opId: string;
  readonly status: string;
  readonly conflict: string;
  readonly reason: string;
  readonly retry: string;
}

/** What a notice sends: the lost ops with how to retry, and the records that explain them. */
export interface LossMessage {
  readonly kind: "write-lost";
  readonly lost: readonly LostOpNotice[];
  readonly conflicts: readonly unknown[];
  readonly message: string;
}

/** The JSON of a core loss notice, as this server sends it. */
export function lossMessage(n: LossNotice): LossMessage {
  const lost = n.lost.map((f) => ({
    opId: f.opId,
    status: f.status,
    conflict: f.conflict,
    reason: f.reason,
    retry: f.retry,
  }));
  const [first] = lost;
  return {
    kind: "write-lost",
    lost,
    conflicts: n.conflicts.map((c) => ({ ...c })),
    message:
      first === undefined
        ? "a write of this session lost the merge"
        : `${lost.length === 1 ? `op ${first.opId} of a write this session made was` : `${lost.length} ops of writes this session made were`} ${first.status} in a later merge: ${first.reason}; to retry: ${first.retry} (kumiki_conflicts lists the records)`,
  };
}

/** The watch of one server: started at connect, stopped at close. */
export interface LossNotices {
  /** The losses told since the last call, emptied (for the next tool answer). */
  take(): LossMessage[];
  /** Subscriptions of the client (resources/subscribe). */
  readonly subscribed: Set<string>;
  start(): void;
  stop(): void;
}

/** Watches `store` for losses of its writes and pushes each to `server`'s client. */
export function lossNotices(store: Store, server: Server, log: (line: string) => void): LossNotices {
  const pending: LossMessage[] = [];
  const subscribed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    subscribed,
    take: () => pending.splice(0),
    start() {
      unsubscribe = store.onLoss((n) => {
        const m = lossMessage(n);
        pending.push(m);
        // Best effort: a client gone is the transport's business, not a reason to stop serving.
        void server
          .sendLoggingMessage({ level: "warning", logger: "kumiki", data: m })
          .catch((e: unknown) => log(`sending a loss notice: ${String(e)}`));
        if (subscribed.has(CONFLICTS_URI))
          void server.sendResourceUpdated({ uri: CONFLICTS_URI }).catch(() => undefined);
      });
      timer = setInterval(() => {
        try {
          store.refresh();
        } catch (e) {
          log(`looking for other writers' ops: ${String(e)}`);
        }
      }, LOSS_POLL_MS);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
