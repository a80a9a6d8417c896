/**
 * The Store facade (ai-edit.md §9.2, §9.3): reads answer from the graph as it is now; writes are
 * drafted, gated and durably appended before they are reported.
 */

import type { Conflict, Graph, LockEntry } from "../graph/graph.js";
import type { GraphReader } from "../graph/reader.js";
import type { ContentHash } from "../lang/hash.js";
import type { Layer } from "../lang/layers.js";
import type { Result } from "../lang/result.js";
import {
  type AuthorId,
  createOpIdGenerator,
  isAuthorId,
  isOpId,
  type OpId,
  type OpIdGenerator,
} from "../ops/ids.js";
import { CONFLICT_POLICIES, type ConflictPolicy, isConflictPolicy, type LogOp } from "../ops/op.js";
import { canonicalItem } from "./bundle-form.js";
import { Draft } from "./draft.js";
import { lostWrite, receiptFates } from "./fate.js";
import { fingerprintOps } from "./fingerprint.js";
import type { IdempotencyLedger } from "./idempotency.js";
import { checkIncoming } from "./ingest.js";
import {
  type AddInput,
  AddInputSchema,
  type BundleInput,
  BundleSchema,
  bundleInputError,
  type EditInput,
  EditInputSchema,
  type IngestInput,
  invalidInput,
  type LinkInput,
  LinkInputSchema,
  type RemoveInput,
  RemoveInputSchema,
  type RenameInput,
  RenameInputSchema,
  type ReplaceInput,
  ReplaceInputSchema,
  type UnlinkInput,
  UnlinkInputSchema,
} from "./inputs.js";
import { LiveGraph } from "./live-graph.js";
import { draftLock, draftUnlock } from "./lock-drafts.js";
import { type LossNotice, LossWatch } from "./loss-watch.js";
import { DAMAGE_REMEDY, isWritableLog, type OpLog, type ReadableOpLog, type StoredOp } from "./op-log.js";
import { diffOf, previewOf } from "./preview.js";
import { hashOf, historyByName, listOf, refsOf, viewOf } from "./reads.js";
import { checkTask, lockInput } from "./request-checks.js";
import { ok, quoted, type Rejection, reject, type StoreResult } from "./result.js";
import { completeSpecOps, isSpecOp } from "./spec-op.js";
import type {
  ApplyOptions,
  ChangeEvent,
  DefinitionHistory,
  ListEntry,
  Preview,
  RefsResult,
  StoreOptions,
  StoreStatus,
  ViewResult,
  WriteReceipt,
} from "./store-types.js";
import { planTaskUndo, type TaskUndoPlan } from "./task-undo.js";
import { builtinGate, type ValidationProblem, type WriteValidator } from "./validate.js";
import { gateProblems, lockRefusal } from "./write-gate.js";
import { invalidAuthor, type WriteOptions, writeContext } from "./write-options.js";

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

/**
 * A new store over an empty log, running exactly `options.validators` after the built-in gate
 * (none when absent). Refused (`store-not-empty`) when the log already holds ops: use
 * {@link openStoreWith} for an existing graph. Core's public `createStore` is this with the checker.
 */
export function createStoreWith(options: StoreOptions): StoreResult<Store> {
  if ((options.log.heldCount?.() ?? options.log.all().length) > 0) {
    return reject(
      "store-not-empty",
      "the log already holds ops; open it with openStore instead of creating a store",
    );
  }
  return openStoreWith(options);
}

/** A write to a store over a {@link ReadableOpLog}: refused before anything is drafted. */
function readOnly(): StoreResult<WriteReceipt> {
  return reject(
    "read-only",
    "this store was opened read-only (its log takes no writes); nothing was written — open the workspace for writing",
  );
}

/** The refusal of a write whose request was cancelled before it was stored. */
function cancelledWrite(): StoreResult<WriteReceipt> {
  return reject("cancelled", "the request was cancelled before its write was stored; nothing was written");
}

/** An error the operating system gave (a failed system call: `ENOSPC`, `EIO`, `EROFS`…), not a bug. */
function isSystemError(e: unknown): boolean {
  const x = e as { code?: unknown; syscall?: unknown } | null;
  return typeof x?.code === "string" && /^E[A-Z0-9]+$/.test(x.code) && typeof x.syscall === "string";
}

/**
 * A log's append that threw, as a rejection: `store-damaged` when the log says its stored document
 * is damaged (an error whose `code` says so: it refuses writes until repaired), else `storage-failed`.
 */
function storeFailure<T>(e: unknown, what: string): StoreResult<T> {
  const message = e instanceof Error ? e.message : String(e);
  if ((e as { code?: unknown } | null)?.code === "store-damaged")
    return reject<T>(
      "store-damaged",
      message,
      message.endsWith(DAMAGE_REMEDY) ? { remedy: DAMAGE_REMEDY } : {},
    );
  if ((e as { code?: unknown } | null)?.code === "workspace-replaced")
    return reject<T>("workspace-replaced", message);
  return reject<T>("storage-failed", `${what}: ${message}`);
}

/**
 * Opens a store over a log: folds every op it holds (ops that fail the wire schema are quarantined,
 * see `status`), running exactly `options.validators` after the built-in gate (none when absent).
 * Core's public `openStore` is this with the checker as the default validator.
 */
export function openStoreWith(options: StoreOptions): StoreResult<Store> {
  if (!isAuthorId(options.author)) return invalidAuthor(options.author);
  return ok(new Store(options));
}

/**
 * The graph store (ai-edit.md §9.2, §9.3): reads render the graph as text; writes are ops, checked
 * by the write gate against the graph they would produce and durably appended to the log before
 * they are reported. A refused write changes nothing: the log is not touched.
 *
 * Writes and ops arriving from elsewhere are taken one at a time, in call order.
 */
export class Store {
  /** The graph, kept current with the log (live-graph.ts): catch-up, stores, the write queue, events. */
  private readonly live: LiveGraph;
  private readonly log: OpLog | ReadableOpLog;
  private readonly author: AuthorId;
  private readonly validators: readonly WriteValidator[];
  private readonly now: () => number;
  private readonly ids: OpIdGenerator;
  private readonly idempotency: IdempotencyLedger | undefined;
  /** The ops this store wrote, watched for losses in later merges (loss-watch.ts). */
  private readonly losses: LossWatch;
  private watchingLosses = false;
  /** The requests of {@link once} running now, by key. */
  private readonly running = new Map<string, Promise<void>>();

  /** @internal Use `openStoreWith` or `createStoreWith` (or core's `openStore`). */
  constructor(options: StoreOptions) {
    this.log = options.log;
    this.author = options.author as AuthorId;
    this.validators = [builtinGate, ...(options.validators ?? [])];
    this.now = options.now ?? Date.now;
    this.idempotency = options.idempotency;
    this.ids = createOpIdGenerator({
      now: this.now,
      ...(options.random === undefined ? {} : { random: options.random }),
    });
    this.live = new LiveGraph(this.log);
    this.losses = new LossWatch(() => this.live.graph);
  }

  private get graph(): Graph {
    return this.live.graph;
  }

  private get reader(): GraphReader {
    return this.live.reader;
  }

  private get closed(): boolean {
    return this.live.closed;
  }

  private catchUp(): void {
    this.live.catchUp();
  }

  private exclusively<T>(fn: () => Promise<StoreResult<T>>): Promise<StoreResult<T>> {
    let started = false;
    // A log that cannot take its lock because its workspace was removed or replaced says so by an
    // error with that code: a refusal like any other, nothing written. So is a file system that
    // failed the lock itself (a full disk cannot create the lock file: ENOSPC), before the write
    // began — it was reported as a bug in the server.
    return this.live
      .exclusively(() => {
        started = true;
        return fn();
      })
      .catch((e: unknown) => {
        const code = (e as { code?: unknown } | null)?.code;
        if (code === "workspace-replaced") return storeFailure<T>(e, "");
        if (!started && isSystemError(e))
          return storeFailure<T>(e, "the workspace's lock could not be taken, so nothing was written");
        throw e;
      });
  }

  // -------------------------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------------------------

  /** A reader over the current graph (for validators, projections, tests). */
  read(): GraphReader {
    this.catchUp();
    return this.reader;
  }

  /**
   * Definitions as text (`kumiki view`): one (`slot.todos`, or `def_…` for a definition hidden by a
   * name conflict or removed), or a pattern (`slot.*`, `tile.Todo*`); with `withDeps`, everything
   * they reference, transitively, after them.
   */
  view(selector: string, options: { withDeps?: boolean } = {}): StoreResult<ViewResult> {
    this.catchUp();
    return viewOf(this.graph, this.reader, selector, options.withDeps === true);
  }

  /** The definitions that show under their names (`kumiki list`), in one layer or all. */
  list(layer?: Layer): StoreResult<ListEntry[]> {
    this.catchUp();
    return listOf(this.graph, layer);
  }

  /** The live definitions that reference a definition, with the lines that do (`kumiki view --refs`). */
  refs(qname: string): StoreResult<RefsResult> {
    this.catchUp();
    return refsOf(this.graph, this.reader, qname);
  }

  /** A live definition's content hash (`kumiki view --hash`). */
  hash(qname: string): StoreResult<ContentHash> {
    this.catchUp();
    return hashOf(this.graph, this.reader, qname);
  }

  /**
   * The history of the definitions that have had a name (`kumiki view --history`): the one that
   * shows under it now and every one that ever had it (renamed away, removed, or a same-name add
   * that lost), each across all its renames; or of one definition by identity.
   */
  history(qname: string): StoreResult<DefinitionHistory[]> {
    this.catchUp();
    return historyByName(this.graph, qname);
  }

  /** Every conflict record (which ops, why, what was decided, how to retry), sorted by id. */
  conflicts(): Conflict[] {
    this.catchUp();
    return this.graph.conflicts();
  }

  /** The conflict policy in force (`kumiki config conflict-policy`): state in the graph, `strict` by default. */
  conflictPolicy(): ConflictPolicy {
    this.catchUp();
    return this.graph.policy();
  }

  /** The live ownership locks (§9.8.3), sorted by pattern then agent. */
  locks(): readonly LockEntry[] {
    this.catchUp();
    return this.graph.locks();
  }

  /** Where the store stands: op counts, quarantined ops, heads, conflicts. */
  status(): StoreStatus {
    this.catchUp();
    const s = this.graph.status();
    // What the log itself would not hold (an op under a reused op-id, an entry that is no op).
    const invalid = (this.log.invalid ?? []).map((e) => ({
      opId: e.opId ?? `entry ${e.at.join(".")}`,
      code: e.opId === undefined ? "invalid-entry" : "op-id-reused",
      message: e.reason,
    }));
    return {
      ...s,
      ...(invalid.length > 0 ? { quarantined: [...s.quarantined, ...invalid] } : {}),
      author: this.author,
      ...(this.log.damage === undefined ? {} : { damage: this.log.damage }),
    };
  }

  /**
   * Calls `listener` after every change; returns the function that stops it. Over a workspace's
   * log, another process's writes are announced as they are stored (within a second: the log is
   * watched while there are listeners); over a log that cannot watch, at the next read or write.
   */
  onChange(listener: (e: ChangeEvent) => void): () => void {
    return this.live.onChange(listener);
  }

  /**
   * Calls `listener` whenever ops that arrived from elsewhere (another process on the workspace, a
   * sync) make the merge decide against ops this store wrote (while a listener was registered)
   * after their write was answered: each lost op once, with its conflict record and how to retry
   * (loss-watch.ts). A write lost at once is told in its own answer (`write-lost`), not here. A
   * log that can watch (a workspace's) tells the store of another process's ops as they are
   * stored; over any other log the store learns of them when it reads, writes or is
   * {@link refresh}ed.
   */
  onLoss(listener: (notice: LossNotice) => void): () => void {
    if (!this.watchingLosses) {
      this.watchingLosses = true;
      this.live.onChange((e) => {
        if (e.source === "remote") this.losses.changed();
      });
    }
    return this.losses.onLoss(listener);
  }

  /**
   * Takes in what other writers stored since the last look, telling change and loss listeners; one
   * small file read when nothing changed. Reads and writes do this themselves.
   */
  refresh(): void {
    this.catchUp();
  }

  /**
   * For a store over a log that other servers write through a shared storage (a sync server's
   * graph on PostgreSQL): resolves once every write stored anywhere before the call began is in
   * this store's graph, so that a read after it sees every write acknowledged before it (read your
   * writes, and others' acknowledged writes, across servers). For a workspace's store (whose
   * reads look at the folder themselves) it takes in what writes stored beside the document without
   * loading it (storage-automerge's pending bundles); for a store in memory there is nothing to do.
   */
  async fence(): Promise<void> {
    await this.live.fence();
  }

  // -------------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------------

  /** Adds a definition (`kumiki add <layer> <name> <body>`). */
  add(input: AddInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = AddInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("add", r.error) });
    return this.write(options, (d) => d.add(r.data));
  }

  /** Replaces a definition's whole text (`kumiki replace <layer>.<name> <body>`). */
  replace(input: ReplaceInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = ReplaceInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("replace", r.error) });
    return this.write(options, (d) => d.replace(r.data));
  }

  /** Edits part of a definition's text: every anchor must match exactly once; all apply or none. */
  edit(input: EditInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = EditInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("edit", r.error) });
    return this.write(options, (d) => d.edit(r.data));
  }

  /** Renames a definition: no hash and no dependent's op changes; every dependent shows the new name. */
  rename(input: RenameInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = RenameInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("rename", r.error) });
    return this.write(options, (d) => d.rename(r.data));
  }

  /**
   * Removes a definition; refused while live definitions reference it (listing them), unless
   * `cascade` (they are removed too, transitively, in the same atomic write) or `force` (they are
   * left dangling, and the receipt's warnings say where).
   */
  remove(input: RemoveInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = RemoveInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("remove", r.error) });
    return this.write(options, (d) => d.remove(r.data));
  }

  /** Binds a reference of a definition's text to another definition (of the reference's layer). */
  link(input: LinkInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = LinkInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("link", r.error) });
    return this.write(options, (d) => d.link(r.data));
  }

  /** Drops the binding of a reference of a definition's text. */
  unlink(input: UnlinkInput, options: WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const r = UnlinkInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("unlink", r.error) });
    return this.write(options, (d) => d.unlink(r.data));
  }

  /**
   * Applies a bundle of writes, all or nothing (`kumiki patch apply`): each item is written against
   * the graph as the items before it left it, and definitions the bundle adds can be referenced by
   * any item (mutually recursive definitions go in one bundle). With `expect` (a {@link preview}'s
   * fingerprint), writes exactly the previewed ops or refuses with `fingerprint-mismatch`.
   */
  apply(bundle: BundleInput, options: ApplyOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const build = this.bundleBuild(bundle, options.keepErrors === true, options.onProgress);
    if (typeof build !== "function") return Promise.resolve({ ok: false, error: build });
    return this.write(options, build, options.expect);
  }

  /**
   * What a bundle would write, without writing it: the exact ops, a unified-style diff per
   * definition and the ops' fingerprint (pass it to `apply` as `expect`). Refused exactly as `apply`
   * would refuse, nothing written.
   */
  preview(
    bundle: BundleInput,
    options: Pick<ApplyOptions, "keepErrors" | "author"> = {},
  ): StoreResult<Preview> {
    const build = this.bundleBuild(bundle, options.keepErrors === true);
    if (typeof build !== "function") return { ok: false, error: build };
    if (this.closed) return reject("store-closed", "the store is closed");
    const context = writeContext(options, this.author);
    if (!context.ok) return context;
    this.catchUp();
    return this.draftWrite(context.value.author, build, (d, ops) =>
      ok(previewOf(d, ops, this.graph, this.reader)),
    );
  }

  private bundleBuild(
    bundle: unknown,
    keepErrors = false,
    onProgress?: (done: number, total: number) => void,
  ): ((d: Draft) => Rejection | undefined) | Rejection {
    // The shape is told first, so that a bad item is named by its place and field (parsing the
    // union of both shapes at once answered "(input): Invalid input" for any bad item of an array).
    const raw = Array.isArray(bundle)
      ? bundle
      : typeof bundle === "object" && bundle !== null && Array.isArray((bundle as { ops?: unknown }).ops)
        ? (bundle as { ops: unknown[] }).ops
        : undefined;
    if (raw === undefined) {
      const got = bundle === null ? "null" : Array.isArray(bundle) ? "an array" : typeof bundle;
      return {
        code: "invalid-input",
        message: `invalid bundle: give {"ops": [item, …]} or the array of items, not ${got === "object" ? "an object without ops" : got}`,
      };
    }
    const [asObject, asArray] = BundleSchema.options;
    const r = Array.isArray(bundle)
      ? asArray.safeParse(raw.map(canonicalItem))
      : asObject.safeParse({ ...(bundle as object), ops: raw.map(canonicalItem) });
    if (!r.success) return bundleInputError(raw, Array.isArray(bundle), r.error);
    const items = Array.isArray(r.data) ? r.data : r.data.ops;
    if (items.length === 0) return { code: "bundle-empty", message: "the bundle holds no ops" };
    return (d) => {
      if (keepErrors) d.keepErrors = true;
      d.reserve(items);
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!;
        const why = d.item(item);
        if (why !== undefined) {
          return {
            ...why,
            message: `bundle item ${i + 1} (${item.op}): ${why.message}`,
            details: { ...why.details, item: i },
          };
        }
        onProgress?.(i + 1, items.length);
      }
      return d.settle();
    };
  }

  /**
   * Reverts an op (`kumiki patch revert`) with a new op, itself revertable: an add by a remove, a
   * remove by bringing the definition back, a text change by restoring the text before it, a
   * rename by the name before it. Refused when the op had no effect, or when the definition changed
   * since (revert the later changes first).
   */
  revert(opId: string, options: { task?: string } & WriteOptions = {}): Promise<StoreResult<WriteReceipt>> {
    if (!isOpId(opId))
      return Promise.resolve(
        reject("invalid-op-id", `${quoted(opId)} is not an op-id (op_ and a 26-character ULID)`),
      );
    return this.write(options, (d) => d.revert(opId, options.task));
  }

  /**
   * Takes ops written elsewhere, in the wire format (an exported op file, a peer's ops), all or
   * nothing, validated as a set: each must pass the wire schema, have its parents held or in the
   * batch, target a definition that exists, and carry a text that parses and whose references the
   * graph or the batch binds (a link of the batch included). An op as ai-edit.md §9.3.2 writes it,
   * without `def` and `refs`, is completed first by name (see spec-op.ts). Ops of the batch that
   * lose the merge are listed in the receipt's `lost`.
   */
  ingest<T extends StoredOp>(input: IngestInput<T>): Promise<StoreResult<WriteReceipt>> {
    if (this.closed) return Promise.resolve(reject<WriteReceipt>("store-closed", "the store is closed"));
    if (!isWritableLog(this.log)) return Promise.resolve(readOnly());
    return this.exclusively(async () => {
      if (this.closed) return reject<WriteReceipt>("store-closed", "the store is closed");
      // Typed for callers, checked here: what arrives may be anything a file held.
      const raw: readonly unknown[] = Array.isArray(input) ? (input as readonly unknown[]) : [input];
      const completed = completeSpecOps(this.graph, raw);
      if (!completed.ok) return completed;
      // Ops in the §9.3.2 form were written by hand or a model: held to what a local write is.
      const spec = new Set(raw.filter(isSpecOp).map((o) => String(o["op-id"])));
      const checked = checkIncoming(this.graph, completed.value, spec);
      if (!checked.ok) return checked;
      const fresh = checked.value;
      if (fresh.length > 0) {
        try {
          await this.live.store(fresh);
        } catch (e) {
          return storeFailure<WriteReceipt>(e, "the ops could not be stored");
        }
      }
      const opIds = fresh.map((o) => o["op-id"]);
      return ok({ opIds, ops: fresh, ...receiptFates(this.graph, opIds) });
    });
  }

  /** Stops taking ops from elsewhere and closes the log, after the writes in flight. */
  close(): Promise<void> {
    return this.live.close();
  }

  /**
   * Sets the conflict policy (`kumiki config conflict-policy <strict|heal|warn>`) with a `config`
   * op: state in the graph, so every replica decides dangling references alike. It governs the
   * decisions the fold makes after the op in the causal order (docs/semantics.md §11).
   */
  setConflictPolicy(
    policy: string,
    options: { task?: string } & WriteOptions = {},
  ): Promise<StoreResult<WriteReceipt>> {
    if (!isConflictPolicy(policy)) {
      return Promise.resolve(
        reject(
          "invalid-policy",
          `unknown conflict policy ${quoted(policy)}: one of ${CONFLICT_POLICIES.join(", ")}`,
          { policy, policies: [...CONFLICT_POLICIES] },
        ),
      );
    }
    const task = checkTask(options.task);
    if (task !== undefined) return Promise.resolve({ ok: false, error: task });
    return this.write(options, (d) => {
      const now = d.fork.policy();
      if (now === policy)
        return {
          code: "no-change",
          message: `the conflict policy is already ${policy}`,
          details: { policy },
        };
      return d.control({ op: "config", key: "conflict-policy", value: policy }, options.task);
    });
  }

  /**
   * Gives `agent` ownership of the definitions matching `patterns` (`slot.todos*`, `reducer.todo-*`;
   * `*` is the only wildcard; a pattern may hold several, comma-separated): from then on a write by
   * any other author that touches one of them is refused (`locked`). Refused when another agent
   * holds the same pattern, or a live definition that both patterns match.
   */
  lock(
    input: {
      agent: string;
      patterns: readonly string[];
      task?: string;
    },
    options: WriteOptions = {},
  ): Promise<StoreResult<WriteReceipt>> {
    const parsed = lockInput(input, true);
    if (!parsed.ok) return Promise.resolve(parsed);
    const { agent, patterns } = parsed.value;
    return this.write(options, (d) => draftLock(d, agent, patterns ?? [], input.task));
  }

  /**
   * Ends `agent`'s locks on `patterns`, or all of them. Only the agent holding a lock lifts it: an
   * unlock of another agent's lock is refused (`locked`) unless `force` (a stale lock whose agent is
   * gone), and then the receipt warns that it lifted another agent's lock; the op log records the
   * unlock with its author either way.
   */
  unlock(
    input: {
      agent: string;
      patterns?: readonly string[];
      task?: string;
      force?: boolean;
    },
    options: WriteOptions = {},
  ): Promise<StoreResult<WriteReceipt>> {
    const parsed = lockInput(input, false);
    if (!parsed.ok) return Promise.resolve(parsed);
    const { agent, patterns } = parsed.value;
    const context = writeContext(options, this.author);
    if (!context.ok) return Promise.resolve(context);
    const me = context.value.author;
    const others = agent !== me;
    if (others && input.force !== true) {
      return Promise.resolve(
        reject(
          "locked",
          `${agent}'s locks are ${agent}'s to lift; ${me} may not unlock them. Ask ${agent} to unlock, or force it if ${agent} is gone (the op log records that ${me} lifted them)`,
          { agent, author: me, ...(patterns === undefined ? {} : { patterns }) },
        ),
      );
    }
    return this.write(options, (d) => draftUnlock(d, agent, patterns, me, input.task));
  }

  /**
   * Undoes a whole task (seed 001): every definition the task's ops touched returns to its state
   * just before the task's first op on it, with new ops (an ordinary write, itself undoable: its
   * ops carry the task `options.task`, by default `undo:<task>`). Refused with `undo-diverged`
   * (`details.diff`: who changed what since) when other ops touched those definitions after the
   * task, unless `confirm`; with `expect`, exactly the ops of a {@link previewUndoTask} or
   * `fingerprint-mismatch`.
   */
  undoTask(
    task: string,
    options: { confirm?: boolean; task?: string; expect?: string } & WriteOptions = {},
  ): Promise<StoreResult<WriteReceipt>> {
    const undoTask = this.undoTaskId(task, options.task);
    if (!undoTask.ok) return Promise.resolve(undoTask);
    return this.write(
      options,
      (d) => {
        const plan = planTaskUndo(d.fork, d.reader, task);
        if (!plan.ok) return plan.error;
        if (plan.value.divergence !== undefined && options.confirm !== true) {
          return {
            code: "undo-diverged",
            message: `cannot undo task ${task} as is: ${plan.value.divergedSummary}; nothing was written (confirm to undo anyway, discarding those changes)`,
            details: { task, diff: plan.value.divergence, definitions: plan.value.diverged },
          };
        }
        return d.undo(plan.value, undoTask.value);
      },
      options.expect,
    );
  }

  /** What {@link undoTask} would write (confirmed), with the divergence it would discard, if any. */
  previewUndoTask(task: string, options: { task?: string; author?: string } = {}): StoreResult<Preview> {
    if (this.closed) return reject("store-closed", "the store is closed");
    const undoTask = this.undoTaskId(task, options.task);
    if (!undoTask.ok) return undoTask;
    const context = writeContext(options, this.author);
    if (!context.ok) return context;
    this.catchUp();
    let plan: TaskUndoPlan | undefined;
    return this.draftWrite(
      context.value.author,
      (d) => {
        const p = planTaskUndo(d.fork, d.reader, task);
        if (!p.ok) return p.error;
        plan = p.value;
        return d.undo(p.value, undoTask.value);
      },
      (d, ops) => {
        const preview = previewOf(d, ops, this.graph, this.reader);
        return ok(plan?.divergence === undefined ? preview : { ...preview, divergence: plan.divergence });
      },
    );
  }

  private undoTaskId(task: string, given: string | undefined): StoreResult<string> {
    const bad = checkTask(task) ?? checkTask(given);
    if (bad !== undefined) return { ok: false, error: bad };
    const id = given ?? `undo:${task}`;
    if (id.length > 128)
      return reject(
        "invalid-input",
        `the task id undo:${task} is too long (at most 128 characters); give options.task`,
      );
    return ok(id);
  }

  /**
   * Authors a write against a fork of the graph and runs the gate on it, then hands the fork and
   * the finished ops to `then` (while the fork still exists). The fork is always dropped: nothing
   * changes here. Synchronous, so nothing else runs between the draft and `then`.
   */
  private draftWrite<T>(
    author: AuthorId,
    build: (d: Draft) => Rejection | undefined,
    then: (d: Draft, ops: LogOp[]) => StoreResult<T>,
  ): StoreResult<T> {
    const draft = new Draft(this.graph, author, this.now, this.ids);
    try {
      const refused = build(draft);
      if (refused !== undefined) return { ok: false, error: refused };
      if (draft.ops.length === 0) return reject("no-change", "the write changes nothing");
      const locked = lockRefusal(this.graph, author, draft.ops);
      if (locked !== undefined) return { ok: false, error: locked };
      const problems = gateProblems(draft, this.reader, this.validators);
      if (problems.length > 0) {
        const [first] = problems as [ValidationProblem];
        return reject(first.code, first.message, { ...first.details, problems });
      }
      return then(draft, draft.finish());
    } finally {
      draft.discard();
    }
  }

  /**
   * One write: author its ops against a fork of the graph, run the gate on the fork, store the ops
   * durably, then apply them. Any refusal drops the fork: nothing changed, the log untouched. With
   * `expect`, the ops must have that fingerprint (what a preview showed). `options` says as whom,
   * cancellable by what and idempotent under which key (write-options.ts).
   */
  private write(
    options: WriteOptions,
    build: (d: Draft) => Rejection | undefined,
    expect?: string,
  ): Promise<StoreResult<WriteReceipt>> {
    if (this.closed) return Promise.resolve(reject<WriteReceipt>("store-closed", "the store is closed"));
    if (!isWritableLog(this.log)) return Promise.resolve(readOnly());
    const context = writeContext(options, this.author);
    if (!context.ok) return Promise.resolve(context);
    const { author, signal } = context.value;
    // Without a ledger a key cannot be kept: the write is an ordinary one (as documented on StoreOptions).
    const idem = this.idempotency === undefined ? undefined : context.value.idempotency;
    if (signal?.aborted === true) return Promise.resolve(cancelledWrite());
    return this.exclusively(async () => {
      if (this.closed) return reject<WriteReceipt>("store-closed", "the store is closed");
      if (idem !== undefined) {
        const replay = await this.replay(idem.key, idem.request);
        if (replay !== undefined) return replay;
      }
      const drafted = this.draftWrite(author, build, (d, ops) => {
        if (expect !== undefined) {
          const actual = fingerprintOps(ops);
          if (actual !== expect) {
            return reject<{ ops: LogOp[]; removed: string[]; warnings: string[] }>(
              "fingerprint-mismatch",
              `the write would now be other ops than the ones previewed (fingerprint ${actual}, expected ${expect}): the graph changed since; preview again`,
              { expected: expect, actual, diff: diffOf(d, ops, this.graph, this.reader) },
            );
          }
        }
        return ok({ ops, removed: [...d.removed], warnings: [...d.warnings] });
      });
      if (!drafted.ok) return drafted;
      const { ops, removed, warnings } = drafted.value;
      // The last moment a cancellation can take effect: under the lock, before anything is
      // recorded or appended. From the append on, the write stands (cancellation.ts).
      if (signal?.aborted === true) return cancelledWrite();
      try {
        // Recorded before the append: a crash between the two leaves a key whose ops the graph
        // lacks, and a retry then writes them (see replay).
        if (idem !== undefined)
          await this.idempotency?.record({
            key: idem.key,
            request: idem.request,
            opIds: ops.map((o) => o["op-id"]),
            ...(removed.length > 0 ? { removed } : {}),
            ...(warnings.length > 0 ? { warnings } : {}),
          });
        await this.live.store(ops);
      } catch (e) {
        return storeFailure<WriteReceipt>(e, "the write could not be stored, nothing changed");
      }
      const opIds = ops.map((o) => o["op-id"]);
      const fates = receiptFates(this.graph, opIds);
      this.losses.wrote(
        ops,
        (fates.lost ?? []).map((f) => f.opId),
      );
      const receipt: WriteReceipt = {
        opIds,
        ops,
        ...(removed.length > 0 ? { removed } : {}),
        ...(warnings.length > 0 ? { warnings } : {}),
        ...fates,
      };
      if (fates.lost !== undefined) return lostWrite(receipt, fates.lost);
      return ok(receipt);
    });
  }

  /**
   * Runs a request made of several writes (`kumiki fix --apply`, the MCP `kumiki_fix_apply`) at most
   * once under `key`: when it finishes, its answer is recorded under the key (durably, in the
   * workspace's ledger), and a retry with the same key and `request` is answered with that answer
   * (`replayed: true`) instead of running again; the same key with another request is refused
   * (`idempotency-key-reused`). A run that was cancelled midway finishes with what it wrote, so that
   * is what a retry reports. A run the process did not finish (a crash) left no answer: a retry
   * runs it again, and since each of its writes took effect or did not, it does what is left.
   * Without a ledger (a store opened with none), `run` simply runs.
   */
  async once<T extends object, E = Rejection>(
    key: string,
    request: string,
    run: () => Promise<Result<T, E>>,
  ): Promise<Result<T & { readonly replayed?: true }, E | Rejection>> {
    const ledger = this.idempotency;
    if (ledger === undefined) return run();
    // A retry that arrives while the first run is still going (its client cancelled it, and the
    // run stops at its next step) waits for it, then is answered with what it recorded.
    let prior: Awaited<ReturnType<IdempotencyLedger["lookup"]>>;
    for (let waited = 0; ; waited++) {
      while (this.running.has(key) && waited < 1_000) {
        waited++;
        await this.running.get(key);
      }
      prior = await ledger.lookup(key);
      // A run under the key that began while the ledger was asked (it answers asynchronously):
      // wait for it too, then ask again.
      if (!this.running.has(key) || waited >= 1_000) break;
    }
    if (prior !== undefined) {
      if (prior.request !== request || prior.answer === undefined)
        return reject(
          "idempotency-key-reused",
          `the idempotency key ${quoted(key)} was given before with another request; nothing was written (a new request needs a new key)`,
          { opIds: [...prior.opIds] },
        );
      return ok({ ...(prior.answer as T), replayed: true as const });
    }
    // Settled only once the answer is recorded (or there is none to record).
    let settle = (): void => undefined;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.running.set(key, settled);
    try {
      const r = await run();
      if (!r.ok) return r;
      try {
        await ledger.record({ key, request, opIds: [], answer: r.value });
      } catch (e) {
        return storeFailure(e, "the request was done, but its idempotency key could not be recorded");
      }
      return r;
    } finally {
      this.running.delete(key);
      settle();
    }
  }

  /**
   * The answer to a write under an idempotency key already recorded: the first write's receipt
   * when the graph holds its ops, a refusal when the key was given with another request, and
   * undefined when the first write never reached the log (then it is written now).
   */
  private async replay(key: string, request: string): Promise<StoreResult<WriteReceipt> | undefined> {
    const prior = await this.idempotency?.lookup(key);
    if (prior === undefined) return undefined;
    if (prior.request !== request) {
      return reject(
        "idempotency-key-reused",
        `the idempotency key ${quoted(key)} was given before with another request; nothing was written (a new write needs a new key)`,
        { opIds: [...prior.opIds] },
      );
    }
    let ops = prior.opIds.map((id) => this.graph.op(id as OpId));
    if (ops.some((o) => o === undefined)) {
      // Maybe written by another server whose notice has not arrived: look at the shared storage
      // before deciding the first write never reached the log (and writing it again).
      await this.live.catchUpAll();
      ops = prior.opIds.map((id) => this.graph.op(id as OpId));
      if (ops.some((o) => o === undefined)) return undefined;
    }
    const opIds = prior.opIds as readonly OpId[];
    const fates = receiptFates(this.graph, opIds);
    const receipt: WriteReceipt = {
      opIds,
      ops: ops as LogOp[],
      replayed: true,
      ...(prior.removed !== undefined && prior.removed.length > 0 ? { removed: prior.removed } : {}),
      ...(prior.warnings !== undefined && prior.warnings.length > 0 ? { warnings: prior.warnings } : {}),
      ...fates,
    };
    return fates.lost !== undefined ? lostWrite(receipt, fates.lost) : ok(receipt);
  }
}
