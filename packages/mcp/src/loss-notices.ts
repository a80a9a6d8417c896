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
import {
  type CapabilityManifest,
  type KeptChecks,
  type LossNotice,
  type MergeErrorNotice,
  onMergeErrors,
  type Store,
} from "@kumiki-graph/core";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { diagnosticOf } from "./tools/check.js";

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

/**
 * What a notice sends: `write-lost`, the lost ops with how to retry and the records that explain
 * them; `write-met`, writes of this session that won but met a concurrent same-name add (the
 * graph now has two definitions of that name, E0007), with the records; `merge-errors`, error
 * diagnostics a merge left in a definition this session wrote or in one referencing it, which no
 * single write made (as kumiki_check reports them, in `diagnostics`).
 */
export interface LossMessage {
  readonly kind: "write-lost" | "write-met" | "merge-errors";
  readonly lost: readonly LostOpNotice[];
  readonly conflicts: readonly unknown[];
  readonly diagnostics?: readonly unknown[];
  readonly message: string;
}

/** The JSON of a core loss notice, as this server sends it: one message per kind it holds. */
export function lossMessages(n: LossNotice): LossMessage[] {
  const out: LossMessage[] = [];
  const lost = n.lost.map((f) => ({
    opId: f.opId,
    status: f.status,
    conflict: f.conflict,
    reason: f.reason,
    retry: f.retry,
  }));
  const [first] = lost;
  if (first !== undefined)
    out.push({
      kind: "write-lost",
      lost,
      conflicts: n.conflicts.map((c) => ({ ...c })),
      message: `${lost.length === 1 ? `op ${first.opId} of a write this session made was` : `${lost.length} ops of writes this session made were`} ${first.status} in a later merge: ${first.reason}; to retry: ${first.retry} (kumiki_conflicts lists the records)`,
    });
  const [met] = n.met;
  if (met !== undefined)
    out.push({
      kind: "write-met",
      lost: [],
      conflicts: n.met.map((c) => ({ ...c })),
      message: `a write of this session met a concurrent one in a later merge and kept its name: ${met.reason}; ${met.decision}; the graph now has two definitions of that name (E0007): ${met.retry}`,
    });
  return out;
}

/** The JSON of a core merge-error notice, as this server sends it. */
export function mergeErrorMessage(n: MergeErrorNotice): LossMessage {
  const [first] = n.diagnostics;
  const where = first === undefined ? "" : `: ${first.code} at ${first.location}: ${first.message}`;
  return {
    kind: "merge-errors",
    lost: [],
    conflicts: [],
    diagnostics: n.diagnostics.map(diagnosticOf),
    message: `a later merge with writes made elsewhere left ${n.total === 1 ? "an error" : `${n.total} errors`} in or beside definitions this session wrote, which no single write made${where}${n.total > 1 ? " (kumiki_check lists them all)" : ""}; repair with kumiki_fix or an edit`,
  };
}

/** The part of a store's loss notice about ops `mine` says this session wrote, or undefined when none. */
function ofSession(n: LossNotice, mine: (opId: string) => boolean): LossNotice | undefined {
  const lost = n.lost.filter((f) => mine(f.opId));
  const met = n.met.filter((c) => c.ops.some(mine));
  if (lost.length === 0 && met.length === 0) return undefined;
  return { lost, met, conflicts: n.conflicts.filter((c) => lost.some((f) => c.ops.includes(f.opId))) };
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
export function lossNotices(
  store: Store,
  server: Server,
  log: (line: string) => void,
  options: {
    readonly capabilities?: CapabilityManifest | undefined;
    /** Whether an op is one this session wrote: only those are told (sessions share a store). */
    readonly mine: (opId: string) => boolean;
    /** Checks kept by earlier processes: the watch's first check goes on from one. */
    readonly kept?: KeptChecks;
  },
): LossNotices {
  const { capabilities, mine, kept } = options;
  const pending: LossMessage[] = [];
  const subscribed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let stopErrors: (() => void) | undefined;
  const tell = (m: LossMessage) => {
    pending.push(m);
    // Best effort: a client gone is the transport's business, not a reason to stop serving.
    void server
      .sendLoggingMessage({ level: "warning", logger: "kumiki", data: m })
      .catch((e: unknown) => log(`sending a loss notice: ${String(e)}`));
  };
  return {
    subscribed,
    take: () => pending.splice(0),
    start() {
      unsubscribe = store.onLoss((all) => {
        const n = ofSession(all, mine);
        if (n === undefined) return;
        for (const m of lossMessages(n)) tell(m);
        if (subscribed.has(CONFLICTS_URI))
          void server.sendResourceUpdated({ uri: CONFLICTS_URI }).catch(() => undefined);
      });
      stopErrors = onMergeErrors(
        store,
        (all) => {
          const keep = all.diagnostics.flatMap((d, i) => (all.ops[i]!.some(mine) ? [d] : []));
          if (keep.length > 0)
            tell(
              mergeErrorMessage({
                diagnostics: keep,
                ops: [],
                total: keep.length + all.total - all.diagnostics.length,
              }),
            );
        },
        capabilities === undefined ? {} : { capabilities },
        kept,
      );
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
      stopErrors?.();
      stopErrors = undefined;
    },
  };
}
