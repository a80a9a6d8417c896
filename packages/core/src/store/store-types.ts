/** What the Store API takes and gives: its options, receipts, previews and read results. */
import type { Conflict, GraphStatus } from "../graph/graph.js";
import type { DefinitionView } from "../graph/reader.js";
import type { Layer } from "../lang/layers.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { LogOp, LogOpKind } from "../ops/op.js";
import type { OpFate, OpStatus } from "./fate.js";
import type { IdempotencyLedger } from "./idempotency.js";
import type { OpLog, ReadableOpLog, StoreDamage } from "./op-log.js";
import type { WriteValidator } from "./validate.js";
import type { WriteOptions } from "./write-options.js";

/** How a store is opened. */
export interface StoreOptions {
  /**
   * Where the ops live (memory, or a workspace's Automerge document). A {@link ReadableOpLog} (no
   * `append`) makes a read-only store: every write is refused as `read-only`, nothing tried.
   */
  readonly log: OpLog | ReadableOpLog;
  /** Who writes through this store: `agent:claude-1`, `user:alice`. */
  readonly author: string;
  /**
   * Validators run after the built-in gate on every write. Here, in the store layer, none by
   * default; core's public `openStore` / `createStore` default to the checker (`DEFAULT_VALIDATORS`).
   */
  readonly validators?: readonly WriteValidator[];
  /** Milliseconds since the epoch, for op timestamps and ids; defaults to `Date.now`. */
  readonly now?: () => number;
  /** Random bytes for op-ids; defaults to `crypto.getRandomValues`. */
  readonly random?: (bytes: Uint8Array) => void;
  /**
   * Where idempotency keys are remembered (see store/idempotency.ts and the
   * `idempotency` of {@link WriteOptions}); without one, a write made under a key is an ordinary write. A workspace store has one.
   */
  readonly idempotency?: IdempotencyLedger;
}

/** How {@link Store.apply} writes a bundle (and, as for every write, as whom: {@link WriteOptions}). */
export interface ApplyOptions extends WriteOptions {
  /** The fingerprint of a preview: the write must be exactly those ops (`fingerprint-mismatch`). */
  readonly expect?: string;
  /**
   * Take the texts as written, errors included (a faithful import, §9.6.2's repair loop starts
   * from it): references to names nothing defines are stored unbound, and the checker's gate does
   * not judge the bundle; a name the bundle adds twice is kept twice (the later definition shows,
   * `check` reports E0007); a text that does not parse is kept as written, with no bindings, when
   * its first line names its layer and name (`check` reports E0008). Names the graph held before
   * must be free.
   */
  readonly keepErrors?: boolean;
  /**
   * Called as the items are read (parsed, bound), with how many are done of how many: what a long
   * import shows as it goes. The check and the durable write follow the last call.
   */
  readonly onProgress?: (done: number, total: number) => void;
}

/** What a successful write did. */
export interface WriteReceipt {
  readonly opIds: readonly OpId[];
  /** The ops as stored (wire format): definition ops, or the control op of a policy or lock write. */
  readonly ops: readonly LogOp[];
  /** The definitions a remove took away (`layer.name`; every one of a cascade). */
  readonly removed?: readonly string[];
  /**
   * True when this is the receipt of an earlier write under the same idempotency key, answered
   * again: nothing was written now.
   */
  readonly replayed?: true;
  /** What the write left that a person should know: references a forced remove left dangling. */
  readonly warnings?: readonly string[];
  /**
   * Ops that did not take effect in the graph after the merge (for ops taken in from elsewhere by
   * `ingest`: another replica's op can lose to one held here). A write of this store's own whose
   * op did not take effect is not a receipt but a `write-lost` rejection.
   */
  readonly lost?: readonly OpFate[];
  /** Conflict records that involve the write's ops, as recorded after the merge. */
  readonly conflicts?: readonly Conflict[];
}

/**
 * A write or bundle tried without writing (`kumiki patch apply --dry-run`): the exact ops it would
 * write, what it would change, and a fingerprint of those ops. `apply(bundle, {expect})` with the
 * fingerprint writes exactly these ops or refuses (`fingerprint-mismatch`).
 */
export interface Preview {
  readonly ops: readonly LogOp[];
  /** Unified-style diff per definition, current text → text after the write (names as shown). */
  readonly diff: string;
  /** blake3 over the canonical JSON of the ops, without op-ids and timestamps (see fingerprint.ts). */
  readonly fingerprint: string;
  readonly removed?: readonly string[];
  readonly warnings?: readonly string[];
  /**
   * For an undo of a task: what other authors changed since the task (the ops and a diff), which
   * the undo would discard; absent when nobody did.
   */
  readonly divergence?: string;
}

export type { LockEntry } from "../graph/graph.js";

/** What `view` returns. */
export interface ViewResult {
  readonly definitions: readonly DefinitionView[];
  /** The definitions' texts, one after another, each ending with a newline. */
  readonly text: string;
  /** The line of `text` (from 1) at which each of `definitions` starts, in the same order. */
  readonly lines: readonly number[];
}

/** One entry of `list`. */
export interface ListEntry {
  readonly layer: Layer;
  readonly name: string;
  readonly qname: string;
  readonly def: DefId;
}

/** One referrer of a definition, as `refs` returns it. */
export interface Referrer {
  readonly qname: string;
  readonly def: DefId;
  readonly layer: Layer;
  /** The lines of its text that reference the definition. */
  readonly lines: readonly number[];
  /** With a pattern (`refs slot.*`): which of the matched definitions it references. */
  readonly refersTo?: readonly string[];
}

/** What `refs` returns. */
export interface RefsResult {
  readonly target: string;
  readonly referrers: readonly Referrer[];
  /** How many referrers per layer. */
  readonly byLayer: Readonly<Partial<Record<Layer, number>>>;
  /** With a pattern (`refs slot.*`): the definitions it matched, whose referrers these are. */
  readonly matched?: readonly string[];
}

export type { OpFate, OpStatus } from "./fate.js";

/** One op in a definition's history. */
export interface HistoryEntry {
  readonly opId: OpId;
  readonly op: LogOpKind;
  readonly author: string;
  readonly ts: number;
  /** The definition's name when the op was written. */
  readonly name: string;
  readonly newName?: string;
  readonly task?: string;
  readonly reverts?: OpId;
  /** Set on a remove written with `force` (or inside a cascade). */
  readonly force?: true;
  readonly status: OpStatus;
  /** The conflict record that explains a status other than applied. */
  readonly conflict?: string;
}

/** The history of one definition (ai-edit.md §9.9), across renames and removal. */
export interface DefinitionHistory {
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  readonly qname: string;
  readonly alive: boolean;
  readonly visible: boolean;
  /** Every name it had, in order. */
  readonly names: readonly string[];
  readonly entries: readonly HistoryEntry[];
}

/** Where the store stands. */
export interface StoreStatus extends GraphStatus {
  readonly author: string;
  /** What is wrong with the stored document, when something is: reads work, writes wait for a repair. */
  readonly damage?: StoreDamage;
}

/** A change to the graph, local or from elsewhere. */
export interface ChangeEvent {
  readonly source: "local" | "remote";
  /** The ops newly taken in. */
  readonly ops: readonly LogOp[];
  /**
   * True when the graph was folded again from the whole log (the log decided a contested op-id
   * anew, replacing an op it held): anything may have changed, not only what `ops` touch.
   */
  readonly refolded?: boolean;
}
