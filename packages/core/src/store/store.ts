import { z } from "zod";
import type { LockEntry } from "../graph/graph.js";
import { type Conflict, type DefinitionState, Graph, type GraphStatus } from "../graph/graph.js";
import { compareDefinitions, parseText, qualified, siteTarget } from "../graph/materialize.js";
import { type DefinitionView, GraphReader } from "../graph/reader.js";
import type { ContentHash } from "../lang/hash.js";
import { isLayer, LAYER_PLURALS, type Layer } from "../lang/layers.js";
import type { ReferenceSite } from "../lang/references.js";
import { commentBlockStart } from "../lang/split.js";
import { isStandardReference } from "../lang/stdlib.js";
import { matchesLockPattern } from "../ops/glob.js";
import {
  type AuthorId,
  createOpIdGenerator,
  type DefId,
  defIdOf,
  isAuthorId,
  isDefId,
  isOpId,
  type OpId,
  type OpIdGenerator,
} from "../ops/ids.js";
import {
  type Anchor,
  CONFLICT_POLICIES,
  type ConfigOp,
  type ConflictPolicy,
  type ControlOp,
  isConflictPolicy,
  isControlOp,
  isDefinitionName,
  isLockPattern,
  isRefKey,
  type LockOp,
  type LogOp,
  type LogOpKind,
  OP_KINDS,
  OP_LIMITS,
  type Op,
  type OpKind,
  parseOp,
  RESERVED_WORDS,
  type RefBindings,
  type RefKey,
  splitRefKey,
  type UnlockOp,
} from "../ops/op.js";
import { applyPatch, describePatchFailure } from "../ops/patch.js";
import { composeSource, decomposeSource } from "../ops/source.js";
import { canonicalItem } from "./bundle-form.js";
import { definitionDiff } from "./diff.js";
import { fatesOf, type OpFate, type OpStatus, statusOf } from "./fate.js";
import { fingerprintOps, opContentHash } from "./fingerprint.js";
import { type IdempotencyLedger, idempotencyContext } from "./idempotency.js";
import { LINE_KEY, type LinePatch, patchAnchors } from "./line-patch.js";
import type { OpLog, StoreDamage } from "./op-log.js";
import { clip, ok, quoted, type Rejection, reject, type StoreResult } from "./result.js";
import { matchesPattern, parseSelector } from "./selector.js";
import { completeSpecOps, isSpecOp } from "./spec-op.js";
import { suggest } from "./suggest.js";
import { planTaskUndo, type TaskUndoPlan } from "./task-undo.js";
import { builtinGate, type ValidationProblem, type WriteValidator } from "./validate.js";

/** How a store is opened. */
export interface StoreOptions {
  /** Where the ops live (memory, or a workspace's Automerge document). */
  readonly log: OpLog;
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
   * Where idempotency keys are remembered (see store/idempotency.ts and {@link withIdempotency});
   * without one, a write made under a key is an ordinary write. A workspace store has one.
   */
  readonly idempotency?: IdempotencyLedger;
}

/** How {@link Store.apply} writes a bundle. */
export interface ApplyOptions {
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
}

/** What `refs` returns. */
export interface RefsResult {
  readonly target: string;
  readonly referrers: readonly Referrer[];
  /** How many referrers per layer. */
  readonly byLayer: Readonly<Partial<Record<Layer, number>>>;
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

// ---------------------------------------------------------------------------------------------
// Inputs. Adapters pass what a person or an agent typed; every field is checked here.
// ---------------------------------------------------------------------------------------------

const Task = z.string().min(1).max(128).optional();
const Text = z.string().max(1_000_000);

/** `add`: `layer` + `name` + `body` (what follows the name, or a §9.2.2 CLI form), or a whole `source`. */
export const AddInputSchema = z
  .strictObject({
    layer: z.string().optional(),
    name: z.string().optional(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
  })
  .refine(
    (i) => (i.source !== undefined) !== (i.body !== undefined),
    "give either body (with layer and name) or source, not both",
  )
  .refine(
    (i) => i.source !== undefined || (i.layer !== undefined && i.name !== undefined),
    "a body needs layer and name",
  );
/** `replace`: the target and its new `body`, or a whole `source`. */
export const ReplaceInputSchema = z
  .strictObject({ qname: z.string(), body: Text.optional(), source: Text.optional(), task: Task })
  .refine((i) => (i.source !== undefined) !== (i.body !== undefined), "give either body or source, not both");
/**
 * An edit's patch: anchors (each `find` must match exactly once in the text as shown), or the
 * `body:N` form of ai-edit.md §9.6 (`{"body:2": "replace 'a' -> 'b'"}`, see line-patch.ts).
 */
const EditPatchSchema = z.union([
  z
    .array(z.strictObject({ find: z.string(), replace: z.string() }))
    .min(1)
    .max(256),
  z
    .record(z.string().regex(LINE_KEY, "a line key is body:N, N from 1"), z.string().max(1_000_000))
    .refine((r) => Object.keys(r).length > 0, "the patch holds no line")
    .refine((r) => Object.keys(r).length <= 256, "at most 256 lines"),
]);
/** `edit`: the target and its patch (anchors, or `body:N` lines). */
export const EditInputSchema = z.strictObject({
  qname: z.string(),
  patch: EditPatchSchema,
  task: Task,
});
/** `rename`: the target and its new name. */
export const RenameInputSchema = z.strictObject({ qname: z.string(), newName: z.string(), task: Task });
const removeFields = {
  qname: z.string(),
  /** Also remove every definition that references it, transitively, in the same atomic write. */
  cascade: z.boolean().optional(),
  /** Remove it although definitions reference it, leaving those references dangling (with warnings). */
  force: z.boolean().optional(),
  task: Task,
};
const notBoth = (i: { cascade?: boolean | undefined; force?: boolean | undefined }) =>
  !(i.cascade === true && i.force === true);
const notBothMessage = "give cascade or force, not both";
/** `remove`: the target; `cascade` or `force` when definitions reference it. */
export const RemoveInputSchema = z.strictObject(removeFields).refine(notBoth, notBothMessage);
/** `link`: bind the reference `ref` (`layer:name` as shown) in the target's text to the definition `to`. */
export const LinkInputSchema = z.strictObject({
  qname: z.string(),
  ref: z.string(),
  to: z.string(),
  task: Task,
});
/** `unlink`: drop the binding of the reference `ref` (`layer:name` as shown) in the target's text. */
export const UnlinkInputSchema = z.strictObject({ qname: z.string(), ref: z.string(), task: Task });

/**
 * The §9.3.2 fields a bundle item may carry (bundle-form.ts): `author` must be the store's,
 * `ts` is informative (the store stamps the time it stores the op), and each `depends-on` entry
 * (`layer:name@h:<hash>`) must still hold: that definition's hash now, or the item is refused.
 */
const specFields = {
  author: z.string().max(128).optional(),
  ts: z.number().int().nonnegative().optional(),
  "depends-on": z
    .array(
      z
        .string()
        .regex(
          /^[a-z]+:[A-Za-z][A-Za-z0-9_-]*@h:[0-9a-f]{64}$/,
          "a depends-on entry is layer:name@h:<64 hex digits>",
        ),
    )
    .max(1_000)
    .optional(),
};

/**
 * One item of a bundle: an input of one write kind, tagged with `op`. Items in the words of
 * §9.3.2 (`layer` and `name` for any kind, `new-name`) are brought to this form first (see
 * `canonicalItem`).
 */
export const BundleItemSchema = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("add"),
    layer: z.string().optional(),
    name: z.string().optional(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({
    op: z.literal("replace"),
    qname: z.string(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({
    op: z.literal("edit"),
    qname: z.string(),
    patch: EditInputSchema.shape.patch,
    task: Task,
    ...specFields,
  }),
  z.strictObject({
    op: z.literal("rename"),
    qname: z.string(),
    newName: z.string(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({ op: z.literal("remove"), ...removeFields, ...specFields }).refine(notBoth, notBothMessage),
  z.strictObject({
    op: z.literal("link"),
    qname: z.string(),
    ref: z.string(),
    to: z.string(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({ op: z.literal("unlink"), qname: z.string(), ref: z.string(), task: Task, ...specFields }),
]);
/** A bundle: items applied all or nothing, in order (`{ops: [...]}` or the array itself). */
export const BundleSchema = z.union([
  z.strictObject({ ops: z.array(BundleItemSchema).max(10_000) }),
  z.array(BundleItemSchema).max(10_000),
]);

export type AddInput = z.input<typeof AddInputSchema>;
export type ReplaceInput = z.input<typeof ReplaceInputSchema>;
export type EditInput = z.input<typeof EditInputSchema>;
export type RenameInput = z.input<typeof RenameInputSchema>;
export type RemoveInput = z.input<typeof RemoveInputSchema>;
export type LinkInput = z.input<typeof LinkInputSchema>;
export type UnlinkInput = z.input<typeof UnlinkInputSchema>;
export type BundleItem = z.input<typeof BundleItemSchema>;

/** A schema issue in our words: limits by name and number, not the schema library's phrasing. */
function issueMessage(i: z.core.$ZodIssue): string {
  if (i.code === "too_big" || i.code === "too_small") {
    const n = Number(i.code === "too_big" ? i.maximum : i.minimum).toLocaleString("en");
    const unit = i.origin === "string" ? "characters" : i.origin === "array" ? "entries" : "";
    const limit = i.code === "too_big" && i.origin === "string" && Number(i.maximum) === OP_LIMITS.bodyChars;
    return i.code === "too_big"
      ? `too long: at most ${n} ${unit}${limit ? " (the bodyChars limit: split the definition)" : ""}`
      : `too short: at least ${n} ${unit}`;
  }
  return i.message;
}

function invalidInput(what: string, error: z.ZodError): Rejection {
  const issues = error.issues.map((i) => ({ path: i.path.map(String), message: issueMessage(i) }));
  const first = issues[0];
  return {
    code: "invalid-input",
    message: `invalid ${what}: ${first === undefined ? "" : `${first.path.join(".") || "(input)"}: ${first.message}`}`,
    details: { issues },
  };
}

/**
 * A bundle that fails its schema, by the item at fault: `item 2 (add): layer: …`, and an unknown
 * op kind by the kinds there are.
 */
function bundleInputError(items: readonly unknown[], bare: boolean, error: z.ZodError): Rejection {
  const issue = error.issues.find((i) => i.code !== "invalid_union" || i.path.length > 0) ?? error.issues[0];
  const path = (issue?.path ?? []).map(String);
  const at = bare ? path : path[0] === "ops" ? path.slice(1) : path;
  const index = at.length > 0 && /^\d+$/.test(at[0]!) ? Number(at[0]) : undefined;
  if (issue === undefined || index === undefined) return invalidInput("bundle", error);
  const op = (items[index] as { op?: unknown } | null)?.op;
  const field = at.slice(1).join(".");
  const what =
    field === "op" && issue.code === "invalid_union"
      ? `"op" must be one of ${OP_KINDS.join(", ")}${op === undefined ? "" : ` (got ${quoted(op)})`}`
      : issue.code === "unrecognized_keys" && field === ""
        ? `unknown field ${quoted(issue.keys[0])}`
        : `${field === "" ? "(item)" : field}: ${issueMessage(issue)}`;
  return {
    code: "invalid-input",
    message: `invalid bundle: item ${index + 1}${typeof op === "string" && field !== "op" ? ` (${op})` : ""}: ${what}`,
    details: {
      item: index,
      issues: error.issues.map((i) => ({ path: i.path.map(String), message: issueMessage(i) })),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

/**
 * A new store over an empty log, running exactly `options.validators` after the built-in gate
 * (none when absent). Refused (`store-not-empty`) when the log already holds ops: use
 * {@link openStoreWith} for an existing graph. Core's public `createStore` is this with the checker.
 */
export function createStoreWith(options: StoreOptions): StoreResult<Store> {
  if (options.log.all().length > 0) {
    return reject(
      "store-not-empty",
      "the log already holds ops; open it with openStore instead of creating a store",
    );
  }
  return openStoreWith(options);
}

/**
 * A log's append that threw, as a rejection: `store-damaged` when the log says its stored document
 * is damaged (an error whose `code` says so: it refuses writes until repaired), else `storage-failed`.
 */
function storeFailure<T>(e: unknown, what: string): StoreResult<T> {
  const message = e instanceof Error ? e.message : String(e);
  if ((e as { code?: unknown } | null)?.code === "store-damaged") return reject<T>("store-damaged", message);
  return reject<T>("storage-failed", `${what}: ${message}`);
}

/**
 * Opens a store over a log: folds every op it holds (ops that fail the wire schema are quarantined,
 * see `status`), running exactly `options.validators` after the built-in gate (none when absent).
 * Core's public `openStore` is this with the checker as the default validator.
 */
export function openStoreWith(options: StoreOptions): StoreResult<Store> {
  if (!isAuthorId(options.author)) {
    return reject(
      "invalid-author",
      `invalid author ${quoted(options.author)}: letters, digits and . _ : @ / + - without spaces, at most 128 characters (e.g. agent:claude-1)`,
    );
  }
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
  private graph: Graph;
  private reader: GraphReader;
  private readonly log: OpLog;
  private readonly author: AuthorId;
  private readonly validators: readonly WriteValidator[];
  private readonly now: () => number;
  private readonly ids: OpIdGenerator;
  private readonly idempotency: IdempotencyLedger | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  private readonly unsubscribe: () => void;
  /** How many of the log's ops (`log.all()`, which only grows) the graph has taken in. */
  private taken = 0;
  /** The log's {@link OpLog.generation} the graph was folded at. */
  private generation = 0;
  /** True while a write of ours is being stored: its ops are held by the log but not yet done. */
  private storing = false;

  /** @internal Use {@link openStoreWith} or {@link createStoreWith} (or core's `openStore`). */
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
    const held = this.log.all();
    this.generation = this.log.generation ?? 0;
    this.graph = Graph.fold(held);
    this.taken = held.length;
    this.reader = new GraphReader(this.graph);
    // Ops a sync peer delivers: taken in after the write in progress, if any.
    this.unsubscribe = this.log.onRemote(() => {
      void this.serially(async () => this.catchUp());
    });
  }

  /**
   * Takes in what other writers stored since the last look (another process's appends, a sync
   * into the same folder, a peer), so that reads answer from the graph as it is now and writes are
   * judged against it; announces those ops as remote changes. One small file read when nothing
   * changed. Not while a write of ours is being stored: no other process can append then (the
   * write holds the log exclusively), and the write takes in what arrived once it is done.
   */
  private catchUp(): void {
    if (this.closed || this.storing) return;
    this.log.poll?.();
    const all = this.log.all();
    if ((this.log.generation ?? 0) !== this.generation) {
      // The log decided a contested op-id anew (a held op replaced): fold everything again.
      this.generation = this.log.generation ?? 0;
      const fresh = all.slice(this.taken) as LogOp[];
      this.taken = all.length;
      this.graph = Graph.fold(all);
      this.reader = new GraphReader(this.graph);
      this.emit({ source: "remote", ops: fresh, refolded: true });
      return;
    }
    if (all.length === this.taken) return;
    const fresh = all.slice(this.taken);
    this.taken = all.length;
    // Ops of ours are held already (received as they were stored): `added` is only the others'.
    const { added, refolded } = this.graph.receive(fresh);
    if (refolded) this.reader = new GraphReader(this.graph);
    if (added.length > 0) this.emit({ source: "remote", ops: added });
  }

  /**
   * Stores `ops` durably, exclusively (no other process appends meanwhile), then applies them to
   * the graph with whatever else arrived, and announces them as a local change.
   */
  private async store(ops: readonly LogOp[]): Promise<void> {
    this.storing = true;
    try {
      await this.log.append(ops);
    } finally {
      this.storing = false;
    }
    const { refolded } = this.graph.receive(ops);
    if (refolded) this.reader = new GraphReader(this.graph);
    this.catchUp();
    this.emit({ source: "local", ops });
  }

  /** Runs a write holding the log exclusively, after taking in what others stored. */
  private exclusively<T>(fn: () => Promise<T>): Promise<T> {
    return this.serially(() => {
      const run = async () => {
        this.catchUp();
        return fn();
      };
      return this.log.exclusive === undefined ? run() : this.log.exclusive(run);
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
    const selected = this.select(selector);
    if (!selected.ok) return selected;
    const ids = [...selected.value];
    if (options.withDeps === true) {
      const seen = new Set(ids);
      const deps: DefinitionState[] = [];
      const stack = [...ids];
      while (stack.length > 0) {
        const s = this.graph.definition(stack.pop()!);
        if (s === undefined) continue;
        for (const d of this.reader.materializer.dependencies(s)) {
          if (seen.has(d)) continue;
          seen.add(d);
          deps.push(this.graph.definition(d)!);
          stack.push(d);
        }
      }
      ids.push(...deps.sort(compareDefinitions).map((s) => s.id));
    }
    const definitions = ids.map((id) => this.reader.get(id)!);
    const text = definitions
      .map((d) => {
        const shown = withoutLeadingTrivia(d.text);
        return shown.endsWith("\n") ? shown : `${shown}\n`;
      })
      .join("");
    return ok({ definitions, text });
  }

  /** The definitions that show under their names (`kumiki list`), in one layer or all. */
  list(layer?: string): StoreResult<ListEntry[]> {
    this.catchUp();
    if (layer !== undefined && !isLayer(layer)) {
      return reject(
        "invalid-layer",
        `unknown layer ${quoted(layer)}: one of type, slot, effect, reducer, tile, fn, app, test, theme, motion`,
      );
    }
    const out = [...this.graph.definitions()]
      .filter((s) => (layer === undefined || s.layer === layer) && this.graph.isVisible(s.id))
      .sort(compareDefinitions)
      .map((s) => ({ layer: s.layer, name: s.name, qname: qualified(s.layer, s.name), def: s.id }));
    return ok(out);
  }

  /** The live definitions that reference a definition, with the lines that do (`kumiki view --refs`). */
  refs(qname: string): StoreResult<RefsResult> {
    this.catchUp();
    const t = this.target(qname, { live: false });
    if (!t.ok) return t;
    const referrers = this.reader.referrers(t.value.id).map((r) => ({
      qname: r.view.visible ? r.view.qname : `${r.view.qname} (${r.view.id})`,
      def: r.view.id,
      layer: r.view.layer,
      lines: r.lines,
    }));
    const byLayer: Partial<Record<Layer, number>> = {};
    for (const r of referrers) byLayer[r.layer] = (byLayer[r.layer] ?? 0) + 1;
    return ok({ target: this.graph.label(t.value.id), referrers, byLayer });
  }

  /** A live definition's content hash (`kumiki view --hash`). */
  hash(qname: string): StoreResult<ContentHash> {
    this.catchUp();
    const t = this.target(qname, { live: true });
    if (!t.ok) return t;
    const h = this.reader.hash(t.value.id);
    if (h === undefined) return reject("not-found", `${qname} has no content hash: it is not live`);
    return ok(h);
  }

  /**
   * The history of the definitions that have had a name (`kumiki view --history`): the one that
   * shows under it now and every one that ever had it (renamed away, removed, or a same-name add
   * that lost), each across all its renames; or of one definition by identity.
   */
  history(qname: string): StoreResult<DefinitionHistory[]> {
    this.catchUp();
    const sel = parseSelector(qname);
    if ("error" in sel) return reject("invalid-selector", sel.error);
    let ids: DefId[];
    if (sel.kind === "id") ids = this.graph.definition(sel.id) === undefined ? [] : [sel.id];
    else {
      if (sel.wildcard || sel.layer === undefined)
        return reject(
          "invalid-selector",
          `history takes one layer.name or a definition id, not ${quoted(qname)}`,
        );
      const now = this.graph.lookup(sel.layer, sel.pattern);
      ids = [
        ...new Set([...(now === undefined ? [] : [now]), ...this.graph.everNamed(sel.layer, sel.pattern)]),
      ].filter((id) => this.graph.definition(id) !== undefined || this.graph.opsOf(id).length > 0);
    }
    if (ids.length === 0) return reject("not-found", `no definition has ever been named ${clip(qname)}`);
    return ok(ids.flatMap((id) => this.historyOf(id)));
  }

  private historyOf(id: DefId): DefinitionHistory[] {
    const g = this.graph;
    const s = g.definition(id);
    const opIds = g.opsOf(id);
    const first = g.defOp(opIds[0]!);
    if (first === undefined) return [];
    const byOp = new Map<string, Conflict>();
    for (const c of g.conflicts(new Set([id]))) byOp.set(c.ops[0]!, c);
    const names: string[] = [];
    const entries = opIds.map((o): HistoryEntry => {
      const op = g.defOp(o)!;
      const conflict = byOp.get(o);
      const status: OpStatus = statusOf(g, o, conflict);
      if (status === "applied" || status === "lost") {
        const n = op.op === "add" ? op.name : op.op === "rename" ? op["new-name"] : undefined;
        if (n !== undefined && names[names.length - 1] !== n) names.push(n);
      }
      const rolled = g.isRolledBack(o)
        ? g.rollbackConflictId(o)
        : g.orphanReason(o) !== undefined
          ? `orphaned:${o}`
          : conflict?.id;
      return {
        opId: o,
        op: op.op,
        author: op.author,
        ts: op.ts,
        name: op.name,
        ...(op.op === "rename" ? { newName: op["new-name"] } : {}),
        ...(op.task === undefined ? {} : { task: op.task }),
        ...(op.reverts === undefined ? {} : { reverts: op.reverts }),
        ...(op.op === "remove" && op.force === true ? { force: true as const } : {}),
        status,
        ...(status === "applied" || rolled === undefined ? {} : { conflict: rolled }),
      };
    });
    const layer = s?.layer ?? first.layer;
    const name = s?.name ?? first.name;
    return [
      {
        def: id,
        layer,
        name,
        qname: qualified(layer, name),
        alive: s?.alive === true,
        visible: g.isVisible(id),
        names: names.length > 0 ? names : [name],
        entries,
      },
    ];
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

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: (e: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** The ids a selector names: live, shown definitions for names and patterns; any for an identity. */
  private select(selector: string): StoreResult<DefId[]> {
    const sel = parseSelector(selector);
    if ("error" in sel) return reject("invalid-selector", sel.error);
    if (sel.kind === "id") {
      if (this.graph.definition(sel.id) === undefined) return reject("not-found", `no definition ${sel.id}`);
      return ok([sel.id]);
    }
    if (!sel.wildcard && sel.layer !== undefined) {
      const t = this.target(selector, { live: true });
      return t.ok ? ok([t.value.id]) : t;
    }
    const ids = [...this.graph.definitions()]
      .filter(
        (s) =>
          (sel.layer === undefined || s.layer === sel.layer) &&
          matchesPattern(sel.pattern, s.name) &&
          this.graph.isVisible(s.id),
      )
      .sort(compareDefinitions)
      .map((s) => s.id);
    return ok(ids);
  }

  /** Resolves `layer.name` (the definition shown under it) or `def_…`. */
  private target(
    qname: string,
    opts: { live: boolean },
    graph: Graph = this.graph,
  ): StoreResult<DefinitionState> {
    const q = qname.trim();
    if (isDefId(q)) {
      const s = graph.definition(q);
      if (s === undefined) return reject("not-found", `no definition ${q}`);
      if (opts.live && !s.alive) {
        return reject(
          "not-found",
          `${graph.label(q)} is removed; revert its removal to bring it back (see history ${q})`,
          { def: q },
        );
      }
      return ok(s);
    }
    const dot = q.indexOf(".");
    const layer = q.slice(0, dot);
    const name = q.slice(dot + 1);
    if (dot <= 0 || !isLayer(layer)) {
      return reject(
        "invalid-selector",
        `${quoted(qname)} is not layer.name (e.g. slot.todos) or a definition id (def_…)`,
      );
    }
    const id = graph.lookup(layer, name);
    if (id !== undefined) return ok(graph.definition(id)!);
    const removed = graph.everNamed(layer, name).filter((d) => graph.definition(d)?.alive === false);
    const near = suggest(
      name,
      [...graph.definitions()].filter((s) => s.layer === layer && s.alive).map((s) => s.name),
    );
    const hints = [
      ...(removed.length > 0
        ? [`it was removed (${removed.join(", ")}); history ${q} shows how to bring it back`]
        : []),
      ...(near.length > 0 ? [`did you mean ${near.map((n) => `${layer}.${n.name}`).join(", ")}?`] : []),
    ];
    return reject(
      "not-found",
      `no ${layer} named ${clip(name)}${hints.length > 0 ? `: ${hints.join("; ")}` : ""}`,
      {
        layer,
        name,
        suggestions: near,
        removed,
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------------

  /** Adds a definition (`kumiki add <layer> <name> <body>`). */
  add(input: AddInput): Promise<StoreResult<WriteReceipt>> {
    const r = AddInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("add", r.error) });
    return this.write((d) => d.add(r.data));
  }

  /** Replaces a definition's whole text (`kumiki replace <layer>.<name> <body>`). */
  replace(input: ReplaceInput): Promise<StoreResult<WriteReceipt>> {
    const r = ReplaceInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("replace", r.error) });
    return this.write((d) => d.replace(r.data));
  }

  /** Edits part of a definition's text: every anchor must match exactly once; all apply or none. */
  edit(input: EditInput): Promise<StoreResult<WriteReceipt>> {
    const r = EditInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("edit", r.error) });
    return this.write((d) => d.edit(r.data));
  }

  /** Renames a definition: no hash and no dependent's op changes; every dependent shows the new name. */
  rename(input: RenameInput): Promise<StoreResult<WriteReceipt>> {
    const r = RenameInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("rename", r.error) });
    return this.write((d) => d.rename(r.data));
  }

  /**
   * Removes a definition; refused while live definitions reference it (listing them), unless
   * `cascade` (they are removed too, transitively, in the same atomic write) or `force` (they are
   * left dangling, and the receipt's warnings say where).
   */
  remove(input: RemoveInput): Promise<StoreResult<WriteReceipt>> {
    const r = RemoveInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("remove", r.error) });
    return this.write((d) => d.remove(r.data));
  }

  /** Binds a reference of a definition's text to another definition (of the reference's layer). */
  link(input: LinkInput): Promise<StoreResult<WriteReceipt>> {
    const r = LinkInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("link", r.error) });
    return this.write((d) => d.link(r.data));
  }

  /** Drops the binding of a reference of a definition's text. */
  unlink(input: UnlinkInput): Promise<StoreResult<WriteReceipt>> {
    const r = UnlinkInputSchema.safeParse(input);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("unlink", r.error) });
    return this.write((d) => d.unlink(r.data));
  }

  /**
   * Applies a bundle of writes, all or nothing (`kumiki patch apply`): each item is written against
   * the graph as the items before it left it, and definitions the bundle adds can be referenced by
   * any item (mutually recursive definitions go in one bundle). With `expect` (a {@link preview}'s
   * fingerprint), writes exactly the previewed ops or refuses with `fingerprint-mismatch`.
   */
  apply(bundle: unknown, options: ApplyOptions = {}): Promise<StoreResult<WriteReceipt>> {
    const build = this.bundleBuild(bundle, options.keepErrors === true, options.onProgress);
    if (typeof build !== "function") return Promise.resolve({ ok: false, error: build });
    return this.write(build, options.expect);
  }

  /**
   * What a bundle would write, without writing it: the exact ops, a unified-style diff per
   * definition and the ops' fingerprint (pass it to `apply` as `expect`). Refused exactly as `apply`
   * would refuse, nothing written.
   */
  preview(bundle: unknown, options: Pick<ApplyOptions, "keepErrors"> = {}): StoreResult<Preview> {
    const build = this.bundleBuild(bundle, options.keepErrors === true);
    if (typeof build !== "function") return { ok: false, error: build };
    if (this.closed) return reject("store-closed", "the store is closed");
    this.catchUp();
    return this.draftWrite(build, (d, ops) => ok(this.previewOf(d, ops)));
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

  private previewOf(d: Draft, ops: readonly LogOp[]): Preview {
    return {
      ops,
      diff: this.diffOf(d, ops),
      fingerprint: fingerprintOps(ops),
      ...(d.removed.length > 0 ? { removed: [...d.removed] } : {}),
      ...(d.warnings.length > 0 ? { warnings: [...d.warnings] } : {}),
    };
  }

  /** The diff of a drafted write: each definition it changes (as shown), then each control op. */
  private diffOf(d: Draft, ops: readonly LogOp[]): string {
    const ids: DefId[] = [];
    const seen = new Set<DefId>();
    const note = (id: DefId) => {
      if (seen.has(id)) return;
      seen.add(id);
      ids.push(id);
    };
    for (const op of ops) if (!isControlOp(op)) note(op.def);
    for (const op of ops) {
      if (isControlOp(op) || (op.op !== "rename" && op.op !== "remove")) continue;
      for (const r of d.fork.referrersOf(op.def)) note(r);
      for (const r of this.graph.referrersOf(op.def)) note(r);
    }
    const parts: string[] = [];
    for (const id of ids) {
      const before = this.reader.get(id);
      const after = d.reader.get(id);
      const text = definitionDiff(
        before?.alive === true ? { label: before.qname, text: before.text } : undefined,
        after?.alive === true ? { label: after.qname, text: after.text } : undefined,
      );
      if (text !== "") parts.push(text);
    }
    for (const op of ops) if (isControlOp(op)) parts.push(describeControl(op, this.graph));
    return parts.join("");
  }

  /**
   * Reverts an op (`kumiki patch revert`) with a new op, itself revertable: an add by a remove, a
   * remove by bringing the definition back, a text change by restoring the text before it, a
   * rename by the name before it. Refused when the op had no effect, or when the definition changed
   * since (revert the later changes first).
   */
  revert(opId: string, options: { task?: string } = {}): Promise<StoreResult<WriteReceipt>> {
    if (!isOpId(opId))
      return Promise.resolve(
        reject("invalid-op-id", `${quoted(opId)} is not an op-id (op_ and a 26-character ULID)`),
      );
    return this.write((d) => d.revert(opId, options.task));
  }

  /**
   * Takes ops written elsewhere, in the wire format (an exported op file, a peer's ops), all or
   * nothing, validated as a set: each must pass the wire schema, have its parents held or in the
   * batch, target a definition that exists, and carry a text that parses and whose references the
   * graph or the batch binds (a link of the batch included). An op as ai-edit.md §9.3.2 writes it,
   * without `def` and `refs`, is completed first by name (see spec-op.ts). Ops of the batch that
   * lose the merge are listed in the receipt's `lost`.
   */
  ingest(input: unknown): Promise<StoreResult<WriteReceipt>> {
    if (this.closed) return Promise.resolve(reject<WriteReceipt>("store-closed", "the store is closed"));
    return this.exclusively(async () => {
      if (this.closed) return reject<WriteReceipt>("store-closed", "the store is closed");
      const raw = Array.isArray(input) ? input : [input];
      const completed = completeSpecOps(this.graph, raw);
      if (!completed.ok) return completed;
      // Ops in the §9.3.2 form were written by hand or a model: held to what a local write is.
      const spec = new Set(raw.filter(isSpecOp).map((o) => String(o["op-id"])));
      const checked = checkIncoming(this.graph, completed.value, spec);
      if (!checked.ok) return checked;
      const fresh = checked.value;
      if (fresh.length > 0) {
        try {
          await this.store(fresh);
        } catch (e) {
          return storeFailure<WriteReceipt>(e, "the ops could not be stored");
        }
      }
      const opIds = fresh.map((o) => o["op-id"]);
      return ok({ opIds, ops: fresh, ...this.fates(opIds) });
    });
  }

  /** Stops taking ops from elsewhere and closes the log, after the writes in flight. */
  async close(): Promise<void> {
    await this.serially(async () => {
      if (this.closed) return;
      this.closed = true;
      this.unsubscribe();
      await this.log.close();
    });
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Sets the conflict policy (`kumiki config conflict-policy <strict|heal|warn>`) with a `config`
   * op: state in the graph, so every replica decides dangling references alike. It governs the
   * decisions the fold makes after the op in the causal order (docs/semantics.md §11).
   */
  setConflictPolicy(policy: string, options: { task?: string } = {}): Promise<StoreResult<WriteReceipt>> {
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
    return this.write((d) => {
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
  lock(input: {
    agent: string;
    patterns: readonly string[];
    task?: string;
  }): Promise<StoreResult<WriteReceipt>> {
    const parsed = lockInput(input, true);
    if (!parsed.ok) return Promise.resolve(parsed);
    const { agent, patterns } = parsed.value;
    return this.write((d) => {
      const live = d.fork.locks();
      const fresh = (patterns ?? []).filter((p) => !live.some((l) => l.agent === agent && l.pattern === p));
      if (fresh.length === 0)
        return {
          code: "no-change",
          message: `${agent} already holds ${(patterns ?? []).join(", ")}`,
          details: { agent },
        };
      for (const p of fresh) {
        for (const l of live) {
          if (l.agent === agent) continue;
          const clash =
            l.pattern === p
              ? undefined
              : [...d.fork.definitions()].find(
                  (x) =>
                    x.alive &&
                    matchesLockPattern(p, x.layer, x.name) &&
                    matchesLockPattern(l.pattern, x.layer, x.name),
                );
          if (l.pattern !== p && clash === undefined) continue;
          return {
            code: "locked",
            message: `${l.agent} already locks ${l.pattern}${clash === undefined ? "" : `, which covers ${qualified(clash.layer, clash.name)} too`}; ask them to unlock it first`,
            details: { agent: l.agent, pattern: l.pattern, lock: l.opId, requested: p },
          };
        }
      }
      return d.control({ op: "lock", agent: agent as AuthorId, patterns: fresh }, input.task);
    });
  }

  /**
   * Ends `agent`'s locks on `patterns`, or all of them. Only the agent holding a lock lifts it: an
   * unlock of another agent's lock is refused (`locked`) unless `force` (a stale lock whose agent is
   * gone), and then the receipt warns that it lifted another agent's lock; the op log records the
   * unlock with its author either way.
   */
  unlock(input: {
    agent: string;
    patterns?: readonly string[];
    task?: string;
    force?: boolean;
  }): Promise<StoreResult<WriteReceipt>> {
    const parsed = lockInput(input, false);
    if (!parsed.ok) return Promise.resolve(parsed);
    const { agent, patterns } = parsed.value;
    const others = agent !== this.author;
    if (others && input.force !== true) {
      return Promise.resolve(
        reject(
          "locked",
          `${agent}'s locks are ${agent}'s to lift; ${this.author} may not unlock them. Ask ${agent} to unlock, or force it if ${agent} is gone (the op log records that ${this.author} lifted them)`,
          { agent, author: this.author, ...(patterns === undefined ? {} : { patterns }) },
        ),
      );
    }
    return this.write((d) => {
      if (others)
        d.warnings.push(
          `lifted ${agent}'s lock${patterns === undefined ? "s" : ` on ${patterns.join(", ")}`} as ${this.author} (forced)`,
        );
      const held = d.fork.locks().filter((l) => l.agent === agent);
      const lifted = patterns === undefined ? held : held.filter((l) => patterns.includes(l.pattern));
      if (lifted.length === 0) {
        return {
          code: "not-found",
          message: `${agent} holds no lock${patterns === undefined ? "" : ` on ${patterns.join(", ")}`}${held.length > 0 ? ` (it holds ${held.map((l) => l.pattern).join(", ")})` : ""}`,
          details: { agent, held: held.map((l) => l.pattern) },
        };
      }
      return d.control(
        {
          op: "unlock",
          agent: agent as AuthorId,
          ...(patterns === undefined ? {} : { patterns: lifted.map((l) => l.pattern) }),
        },
        input.task,
      );
    });
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
    options: { confirm?: boolean; task?: string; expect?: string } = {},
  ): Promise<StoreResult<WriteReceipt>> {
    const undoTask = this.undoTaskId(task, options.task);
    if (!undoTask.ok) return Promise.resolve(undoTask);
    return this.write((d) => {
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
    }, options.expect);
  }

  /** What {@link undoTask} would write (confirmed), with the divergence it would discard, if any. */
  previewUndoTask(task: string, options: { task?: string } = {}): StoreResult<Preview> {
    if (this.closed) return reject("store-closed", "the store is closed");
    const undoTask = this.undoTaskId(task, options.task);
    if (!undoTask.ok) return undoTask;
    this.catchUp();
    let plan: TaskUndoPlan | undefined;
    return this.draftWrite(
      (d) => {
        const p = planTaskUndo(d.fork, d.reader, task);
        if (!p.ok) return p.error;
        plan = p.value;
        return d.undo(p.value, undoTask.value);
      },
      (d, ops) => {
        const preview = this.previewOf(d, ops);
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
    build: (d: Draft) => Rejection | undefined,
    then: (d: Draft, ops: LogOp[]) => StoreResult<T>,
  ): StoreResult<T> {
    const draft = new Draft(this.graph, this.author, this.now, this.ids);
    try {
      const refused = build(draft);
      if (refused !== undefined) return { ok: false, error: refused };
      if (draft.ops.length === 0) return reject("no-change", "the write changes nothing");
      const locked = this.lockedBy(draft.ops);
      if (locked !== undefined) return { ok: false, error: locked };
      const problems = this.gate(draft);
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
   * `expect`, the ops must have that fingerprint (what a preview showed).
   */
  private write(
    build: (d: Draft) => Rejection | undefined,
    expect?: string,
  ): Promise<StoreResult<WriteReceipt>> {
    if (this.closed) return Promise.resolve(reject<WriteReceipt>("store-closed", "the store is closed"));
    const scope = idempotencyContext.getStore();
    const idem = scope !== undefined && !scope.used && this.idempotency !== undefined ? scope : undefined;
    if (idem !== undefined) idem.used = true;
    return this.exclusively(async () => {
      if (this.closed) return reject<WriteReceipt>("store-closed", "the store is closed");
      if (idem !== undefined) {
        const replay = this.replay(idem.key, idem.request);
        if (replay !== undefined) return replay;
      }
      const drafted = this.draftWrite(build, (d, ops) => {
        if (expect !== undefined) {
          const actual = fingerprintOps(ops);
          if (actual !== expect) {
            return reject<{ ops: LogOp[]; removed: string[]; warnings: string[] }>(
              "fingerprint-mismatch",
              `the write would now be other ops than the ones previewed (fingerprint ${actual}, expected ${expect}): the graph changed since; preview again`,
              { expected: expect, actual, diff: this.diffOf(d, ops) },
            );
          }
        }
        return ok({ ops, removed: [...d.removed], warnings: [...d.warnings] });
      });
      if (!drafted.ok) return drafted;
      const { ops, removed, warnings } = drafted.value;
      try {
        // Recorded before the append: a crash between the two leaves a key whose ops the graph
        // lacks, and a retry then writes them (see replay).
        if (idem !== undefined)
          this.idempotency?.record({
            key: idem.key,
            request: idem.request,
            opIds: ops.map((o) => o["op-id"]),
            ...(removed.length > 0 ? { removed } : {}),
            ...(warnings.length > 0 ? { warnings } : {}),
          });
        await this.store(ops);
      } catch (e) {
        return storeFailure<WriteReceipt>(e, "the write could not be stored, nothing changed");
      }
      const opIds = ops.map((o) => o["op-id"]);
      const fates = this.fates(opIds);
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
   * The answer to a write under an idempotency key already recorded: the first write's receipt
   * when the graph holds its ops, a refusal when the key was given with another request, and
   * undefined when the first write never reached the log (then it is written now).
   */
  private replay(key: string, request: string): StoreResult<WriteReceipt> | undefined {
    const prior = this.idempotency?.lookup(key);
    if (prior === undefined) return undefined;
    if (prior.request !== request) {
      return reject(
        "idempotency-key-reused",
        `the idempotency key ${quoted(key)} was given before with another request; nothing was written (a new write needs a new key)`,
        { opIds: [...prior.opIds] },
      );
    }
    const ops = prior.opIds.map((id) => this.graph.op(id as OpId));
    if (ops.some((o) => o === undefined)) return undefined;
    const opIds = prior.opIds as readonly OpId[];
    const fates = this.fates(opIds);
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

  /**
   * The refusal of a write that touches a definition another agent has locked (§9.8.3): each op's
   * target, by the name it records, a rename's new name, every definition of a cascade.
   */
  private lockedBy(ops: readonly LogOp[]): Rejection | undefined {
    if (this.graph.locks().length === 0) return undefined;
    for (const op of ops) {
      if (isControlOp(op)) continue;
      const names = op.op === "rename" ? [op.name, op["new-name"]] : [op.name];
      for (const name of names) {
        const other = this.graph.locksOn(op.layer, name).find((l) => l.agent !== this.author);
        if (other === undefined) continue;
        const q = qualified(op.layer, name);
        return {
          code: "locked",
          message: `${q} is locked by ${other.agent} (${other.pattern}); ${this.author} may not ${op.op} it — ask ${other.agent} to unlock it (kumiki unlock ${other.agent} '${other.pattern}')`,
          details: { definition: q, agent: other.agent, pattern: other.pattern, lock: other.opId, op: op.op },
        };
      }
    }
    return undefined;
  }

  /** The receipt's `lost` and `conflicts`, each only when not empty. */
  private fates(opIds: readonly OpId[]): { lost?: OpFate[]; conflicts?: Conflict[] } {
    if (opIds.length === 0) return {};
    const { lost, conflicts } = fatesOf(this.graph, opIds);
    return { ...(lost.length > 0 ? { lost } : {}), ...(conflicts.length > 0 ? { conflicts } : {}) };
  }

  private gate(draft: Draft): ValidationProblem[] {
    const before = this.reader;
    const after = draft.reader;
    const touched = new Set<DefId>();
    const ops: Op[] = [];
    for (const op of draft.ops) {
      if (isControlOp(op)) continue;
      ops.push(op);
      touched.add(op.def);
      // A forced remove leaves its referrers dangling on purpose: they are not the write's to check.
      if (op.op === "remove" && op.force === true && !draft.cascaded.has(op.def)) continue;
      if (op.op === "rename" || op.op === "remove" || op.reverts !== undefined) {
        for (const r of before.graph.referrersOf(op.def)) touched.add(r);
        for (const r of after.graph.referrersOf(op.def)) touched.add(r);
      }
    }
    const write = { ops, before, after, touched: [...touched] };
    // With --force the dangling references are the point: only the built-in gate runs (`kumiki
    // check` lists them). A remove cannot add any other error.
    if (draft.keepErrors) {
      // A faithful import: the text's own errors are the user's to repair (the loop of §9.6.2),
      // not the write's; what would break the graph (a hidden name, a conflict) still refuses.
      // A name the bundle adds twice is the program's own duplicate (the draft refused any name
      // the graph held before): kept, the later definition showing, as upstream reads it.
      return builtinGate
        .validate(write)
        .filter(
          (p) =>
            p.code !== "undefined-reference" &&
            p.code !== "duplicate-name" &&
            p.code !== "parse-error" &&
            !(
              p.code === "would-conflict" &&
              (p.details?.conflict as Conflict | undefined)?.kind === "name-taken"
            ),
        );
    }
    const validators = draft.forced ? [builtinGate] : this.validators;
    for (const v of validators) {
      const problems = v.validate(write);
      if (problems.length > 0) return [...problems];
    }
    return [];
  }
}

/**
 * A write that was stored but did not (wholly) take effect: another writer's op won the merge. Not a
 * success: the rejection says which ops lost, to what, and how to retry; `details.receipt` is the
 * receipt (the ops are in the log, and `history` and `conflicts` show them).
 */
function lostWrite(receipt: WriteReceipt, lost: readonly OpFate[]): StoreResult<WriteReceipt> {
  const [first] = lost as [OpFate];
  return reject(
    "write-lost",
    `the write was stored but ${lost.length === 1 ? `its op ${first.opId} was` : `${lost.length} of its ${receipt.opIds.length} ops were`} ${first.status} in the merge with a concurrent write: ${first.reason}; to retry: ${first.retry}`,
    { stored: true, lost, conflicts: receipt.conflicts ?? [], opIds: receipt.opIds, receipt },
  );
}

/**
 * A definition's text as `view` shows it: from the comment lines directly above its keyword line
 * (its doc comment), without the blank lines and section banners an import kept above those (they
 * stay in the store and in `export`; anchors in what is shown still match).
 */
function withoutLeadingTrivia(text: string): string {
  const head = decomposeSource(text)?.head;
  return head === undefined ? text : text.slice(commentBlockStart(text, head.lastIndexOf("\n") + 1));
}

/**
 * The text a replace writes: `given`, with the lines that stood above the old text's keyword line
 * (its comments, and the blank lines an import kept there) unless `given` brings lines of its own
 * above its keyword. A replace changes a definition, not the comment that documents it.
 */
function keepLeadingComments(old: string, given: string): string {
  const oldHead = decomposeSource(old)?.head;
  if (oldHead === undefined) return given;
  const above = oldHead.slice(0, oldHead.lastIndexOf("\n") + 1);
  if (above === "") return given;
  const newHead = decomposeSource(given)?.head;
  if (newHead?.includes("\n") === true) return given;
  return above + given;
}

/** A task id as the wire format takes it, or why not. */
function checkTask(task: string | undefined): Rejection | undefined {
  if (task === undefined) return undefined;
  if (task.length < 1 || task.length > 128 || !/^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/.test(task)) {
    return {
      code: "invalid-input",
      message: `invalid task id ${quoted(task)}: letters, digits and . _ : @ / + - (no spaces), at most 128 characters`,
    };
  }
  return undefined;
}

/** Checks a lock or unlock request: the agent, and each pattern (comma-separated lists split). */
function lockInput(
  input: { agent: string; patterns?: readonly string[] | undefined; task?: string | undefined },
  needPatterns: boolean,
): StoreResult<{ agent: string; patterns: string[] | undefined }> {
  if (input === null || typeof input !== "object") return reject("invalid-input", "give {agent, patterns}");
  if (!isAuthorId(input.agent)) {
    return reject(
      "invalid-input",
      `invalid agent ${quoted(input.agent)}: an author id, letters, digits and . _ : @ / + - without spaces (e.g. agent:claude-1)`,
    );
  }
  const task = checkTask(input.task);
  if (task !== undefined) return { ok: false, error: task };
  if (input.patterns === undefined) {
    if (needPatterns) return reject("invalid-input", "a lock needs at least one pattern (e.g. slot.todos*)");
    return ok({ agent: input.agent, patterns: undefined });
  }
  if (!Array.isArray(input.patterns))
    return reject("invalid-input", "patterns is a list of layer.namepattern");
  const patterns: string[] = [];
  for (const raw of input.patterns) {
    for (const part of String(raw).split(",")) {
      const p = part.trim();
      if (p === "") continue;
      if (!isLockPattern(p)) {
        return reject(
          "invalid-input",
          `invalid lock pattern ${quoted(p)}: layer.namepattern, e.g. slot.todos* or reducer.todo-* (a layer or *, a dot, then letters, digits, _, - and *; * is the only wildcard)`,
          { pattern: p },
        );
      }
      if (!patterns.includes(p)) patterns.push(p);
    }
  }
  if (patterns.length === 0) return reject("invalid-input", "no lock pattern given (e.g. slot.todos*)");
  if (patterns.length > 256) return reject("invalid-input", "at most 256 patterns in one lock");
  return ok({ agent: input.agent, patterns });
}

/** One line of a preview's diff for a control op. */
function describeControl(op: ControlOp, graph: Graph): string {
  switch (op.op) {
    case "config":
      return `config conflict-policy: ${graph.policy()} -> ${op.value}\n`;
    case "lock":
      return `lock ${op.agent}: ${op.patterns.join(", ")}\n`;
    case "unlock":
      return `unlock ${op.agent}: ${op.patterns === undefined ? "every lock" : op.patterns.join(", ")}\n`;
  }
}

// ---------------------------------------------------------------------------------------------
// Authoring: turning requests into ops, against a fork of the graph
// ---------------------------------------------------------------------------------------------

/** Site resolution failure, for messages. */
interface Unresolved {
  readonly name: string;
  readonly layers: readonly Layer[];
  readonly line: number;
  readonly column: number;
}

/**
 * Writes the ops of one write (one op, or a bundle) against a fork of the graph, each op applied to
 * the fork before the next is written, so each sees the ones before it.
 */
class Draft {
  readonly fork: Graph;
  readonly reader: GraphReader;
  readonly ops: LogOp[] = [];
  /** `layer.name` of each definition the write removes. */
  readonly removed: string[] = [];
  /** What the write leaves that a person should know (references left dangling by force). */
  readonly warnings: string[] = [];
  /** True when a remove of the write was forced (`force`, not a cascade). */
  forced = false;
  /**
   * Set for a write that takes text as written (a faithful import): a reference to a name nothing
   * defines is stored unbound (an error `check` reports, with its did-you-mean) instead of
   * refusing, and the gate does not judge the errors the text brings.
   */
  keepErrors = false;
  /** The definitions this draft adds (a faithful import may add a name twice among them). */
  private readonly addedHere = new Set<DefId>();
  /** Per `layer:name`, the bundle's adds of it not yet placed. */
  private readonly toAdd = new Map<string, number>();
  /** The `layer:name` keys the bundle adds more than once (set by {@link reserve}). */
  private duplicated: ReadonlySet<string> = new Set();
  /** Definitions removed as part of a cascade or an undo (their referrers go too). */
  readonly cascaded = new Set<DefId>();
  /** The task of the bundle item being written (the links a bundle writes for it carry it too). */
  private itemTask: string | undefined;
  private floor: OpId | undefined;
  /** `layer:name` of the definitions a bundle's adds will create. */
  private readonly reserved = new Set<string>();
  /** References to a definition a later add of the bundle creates: bound by a link once it exists. */
  private deferred: { source: DefId; key: RefKey }[] = [];

  constructor(
    base: Graph,
    private readonly author: AuthorId,
    private readonly now: () => number,
    private readonly ids: OpIdGenerator,
  ) {
    this.fork = base.fork();
    this.reader = new GraphReader(this.fork);
    this.floor = base.maxOpId();
  }

  /** The next op-id: greater than every op held and every op of this write so far. */
  private nextId(): OpId {
    const id = this.ids.next(this.floor);
    this.floor = id;
    return id;
  }

  discard(): void {
    this.fork.discard();
  }

  /** The ops with `depends-on` filled in: each referenced definition's hash once the write is applied. */
  finish(): LogOp[] {
    const targets = new Set<DefId>();
    for (const op of this.ops) if ("refs" in op) for (const t of Object.values(op.refs)) targets.add(t);
    const hashes = this.reader.materializer.hashes(targets);
    return this.ops.map((op) => {
      if (!("refs" in op)) return op;
      const deps = Object.entries(op.refs)
        .flatMap(([k, t]) => {
          const h = hashes.get(t);
          return h === undefined ? [] : [`${k}@${h}`];
        })
        .sort();
      return deps.length === 0 ? op : { ...op, "depends-on": deps };
    });
  }

  /**
   * Notes the names a bundle's adds will take, so an item can reference a definition a later item
   * adds (mutual recursion). Such a reference is left unbound in the item's op and bound by a link
   * op right after the add: every op of the bundle then only binds what exists when it applies, and
   * no replica ever sees a reference to a definition that does not exist yet.
   */
  reserve(items: readonly BundleItem[]): void {
    for (const item of items) {
      if (item.op !== "add") continue;
      const parts =
        item.source !== undefined ? decomposeSource(item.source) : { layer: item.layer, name: item.name };
      if (parts?.layer === undefined || parts.name === undefined || !isLayer(parts.layer)) continue;
      const key = `${parts.layer}:${parts.name}`;
      this.reserved.add(key);
      this.toAdd.set(key, (this.toAdd.get(key) ?? 0) + 1);
    }
    this.duplicated = new Set([...this.toAdd].filter(([, n]) => n > 1).map(([k]) => k));
  }

  /**
   * True while a name the bundle adds more than once still has adds to come (a faithful import of
   * a program that defines it twice): references to it wait for the last, which is the one that
   * shows (as upstream reads such a program: the later definition replaces the earlier).
   */
  private awaitsLastOf(key: string): boolean {
    return this.keepErrors && (this.toAdd.get(key) ?? 0) > 0 && this.duplicated.has(key);
  }

  /** Refuses a bundle that still has a reference to a definition no item added. */
  settle(): Rejection | undefined {
    const left = this.deferred[0];
    if (left === undefined) return undefined;
    return {
      code: "undefined-reference",
      message: `${this.fork.label(left.source)} references ${left.key.replace(":", " ")}, which the bundle was to add but did not`,
      details: { definition: left.source, key: left.key },
    };
  }

  /** Binds the deferred references to a definition the bundle just added. */
  private bindDeferred(added: DefinitionState): Rejection | undefined {
    const key = `${added.layer}:${added.name}`;
    const now = this.deferred.filter((d) => d.key === key);
    if (now.length === 0) return undefined;
    this.deferred = this.deferred.filter((d) => d.key !== key);
    for (const d of now) {
      const s = this.fork.definition(d.source);
      if (s === undefined || !s.alive) continue;
      const why = this.place({
        ...this.meta("link", s.layer, s.name, s.id, this.itemTask, this.nextId()),
        op: "link",
        ref: d.key,
        target: added.id,
      });
      if (why !== undefined) return why;
    }
    return undefined;
  }

  item(item: BundleItem): Rejection | undefined {
    this.itemTask = item.task;
    const spec = this.specFieldsHold(item);
    if (spec !== undefined) return spec;
    switch (item.op) {
      case "add":
        return this.add(item);
      case "replace":
        return this.replace(item as z.output<typeof ReplaceInputSchema>);
      case "edit":
        return this.edit(item);
      case "rename":
        return this.rename(item);
      case "remove":
        return this.remove(item);
      case "link":
        return this.link(item);
      case "unlink":
        return this.unlink(item);
    }
  }

  /** An item's §9.3.2 fields: `author` is this store's, every `depends-on` entry still holds. */
  private specFieldsHold(item: BundleItem): Rejection | undefined {
    if (item.author !== undefined && item.author !== this.author)
      return {
        code: "invalid-input",
        message: `the item says author ${item.author}, but this store writes as ${this.author}: open the store as ${item.author}, or leave author out`,
        details: { author: item.author, storeAuthor: this.author },
      };
    for (const entry of item["depends-on"] ?? []) {
      const at = entry.indexOf("@");
      const [layer, name] = entry.slice(0, at).split(":") as [string, string];
      const want = entry.slice(at + 1);
      const id = isLayer(layer) ? this.fork.lookup(layer, name) : undefined;
      const now = id === undefined ? undefined : this.reader.hash(id);
      if (now === want) continue;
      return {
        code: "dependency-changed",
        message:
          now === undefined
            ? `the item depends on ${layer}.${name}, which the graph no longer shows: view the program and write again`
            : `the item depends on ${layer}.${name} at ${want.slice(0, 14)}…, which is now ${now.slice(0, 14)}…: it changed since the item was written; view it and write again`,
        details: { dependency: entry, ...(now === undefined ? {} : { now }) },
      };
    }
    return undefined;
  }

  private meta(
    kind: OpKind,
    layer: Layer,
    name: string,
    def: DefId | undefined,
    task: string | undefined,
    id: OpId = this.nextId(),
  ) {
    const prev = this.ops[this.ops.length - 1];
    return {
      op: kind,
      layer,
      name,
      author: this.author,
      ts: Math.max(0, Math.floor(this.now())),
      "op-id": id,
      "parent-ops": prev === undefined ? this.fork.heads() : [prev["op-id"]],
      "depends-on": [] as string[],
      def: def ?? defIdOf(id),
      ...(task === undefined ? {} : { task }),
    };
  }

  /** Writes a control op (config, lock, unlock). */
  control(
    fields:
      | Pick<ConfigOp, "op" | "key" | "value">
      | Pick<LockOp, "op" | "agent" | "patterns">
      | Pick<UnlockOp, "op" | "agent" | "patterns">,
    task: string | undefined,
  ): Rejection | undefined {
    const prev = this.ops[this.ops.length - 1];
    const op = {
      ...fields,
      author: this.author,
      ts: Math.max(0, Math.floor(this.now())),
      "op-id": this.nextId(),
      "parent-ops": prev === undefined ? this.fork.heads() : [prev["op-id"]],
      ...(task === undefined ? {} : { task }),
    } as ControlOp;
    return this.place(op);
  }

  private place(op: LogOp): Rejection | undefined {
    // Defence in depth: an op the store wrote must pass the wire schema like any other.
    const r = parseOp(op);
    if (!r.ok) return { code: r.error.code, message: r.error.message, details: { issues: r.error.issues } };
    this.fork.receive([op]);
    this.ops.push(op);
    if (op.op === "add") {
      const key = `${op.layer}:${op.name}`;
      const duplicate = this.awaitsLastOf(key);
      const left = this.toAdd.get(key);
      if (left !== undefined) this.toAdd.set(key, left - 1);
      if (duplicate && left !== undefined && left > 1) return undefined;
      const added = this.fork.definition(op.def);
      if (added !== undefined) return this.bindDeferred(added);
    }
    return undefined;
  }

  private target(qname: string, live = true): StoreResult<DefinitionState> {
    const q = qname.trim();
    if (isDefId(q)) {
      const s = this.fork.definition(q);
      if (s === undefined) return reject("not-found", `no definition ${q}`);
      if (live && !s.alive)
        return reject("not-found", `${this.fork.label(q)} is removed; revert its removal to bring it back`);
      return ok(s);
    }
    const dot = q.indexOf(".");
    const layer = q.slice(0, dot);
    const name = q.slice(dot + 1);
    if (dot <= 0 || !isLayer(layer))
      return reject(
        "invalid-selector",
        `${quoted(qname)} is not layer.name (e.g. slot.todos) or a definition id (def_…)`,
      );
    const id = this.fork.lookup(layer, name);
    if (id !== undefined) return ok(this.fork.definition(id)!);
    const near = suggest(
      name,
      [...this.fork.definitions()].filter((s) => s.layer === layer && s.alive).map((s) => s.name),
    );
    return reject(
      "not-found",
      `no ${layer} named ${clip(name)}${near.length > 0 ? `: did you mean ${near.map((n) => `${layer}.${n.name}`).join(", ")}?` : ""}`,
      { layer, name, suggestions: near },
    );
  }

  /**
   * Parses a definition text and binds every reference site to the definition it names now,
   * layer-aware (the first candidate layer that has one). `self` is the definition being written.
   */
  private bind(
    text: string,
    expected: { layer: Layer; name: string },
    self: DefId,
  ): StoreResult<{ refs: RefBindings; sites: readonly ReferenceSite[] }> {
    const p = parseText(text);
    const q = qualified(expected.layer, expected.name);
    if (!p.ok && this.keepErrors) {
      // Taken as written (a faithful import): the text is kept with no bindings, its layer and
      // name read off its first line; check reports E0008 until a replace or edit makes it parse.
      const parts = decomposeSource(text);
      if (parts?.layer === expected.layer && parts.name === expected.name)
        return ok({ refs: {} as RefBindings, sites: [] });
    }
    if (!p.ok) {
      const { span, message } = p.error;
      const line = text.split("\n")[span.line - 1] ?? "";
      return reject(
        "parse-error",
        `${q} does not parse: ${message}\n  ${line}\n  ${" ".repeat(Math.max(0, span.column - 1))}^`,
        {
          definition: q,
          line: span.line,
          column: span.column,
          offset: span.offset,
          text,
        },
      );
    }
    if (p.def.layer !== expected.layer || p.def.name.name !== expected.name) {
      return reject(
        "definition-mismatch",
        `the text defines ${qualified(p.def.layer, p.def.name.name)}, not ${q}${p.def.layer === expected.layer ? "; use rename to change a name" : ""}`,
        { expected: q, found: qualified(p.def.layer, p.def.name.name) },
      );
    }
    const refs: Record<string, DefId> = {};
    const missing: Unresolved[] = [];
    const later: RefKey[] = [];
    // "No new errors": a name the definition already left unbound (a faithful import kept it) may
    // stay unbound, so a fix of one of its errors is not refused for the others.
    const already = this.unboundNames(self);
    for (const site of p.sites) {
      let bound = false;
      for (const layer of site.layers) {
        if (this.awaitsLastOf(`${layer}:${site.name}`)) {
          later.push(`${layer}:${site.name}` as RefKey);
          bound = true;
          break;
        }
        const id =
          layer === expected.layer && site.name === expected.name ? self : this.fork.lookup(layer, site.name);
        if (id !== undefined) {
          refs[`${layer}:${site.name}`] = id;
          bound = true;
          break;
        }
        if (this.reserved.has(`${layer}:${site.name}`)) {
          later.push(`${layer}:${site.name}` as RefKey);
          bound = true;
          break;
        }
      }
      if (!bound && !isStandardReference(site) && !already.has(`${site.layers.join("|")}:${site.name}`)) {
        missing.push({
          name: site.name,
          layers: site.layers,
          line: site.span.line,
          column: site.span.column,
        });
      }
    }
    if (missing.length > 0 && !this.keepErrors) {
      const list = missing.map((m) => {
        const near = suggest(
          m.name,
          [...this.fork.definitions()]
            .filter((s) => s.alive && m.layers.includes(s.layer))
            .map((s) => s.name),
        );
        return { ...m, suggestions: near };
      });
      const describe = list
        .map(
          (m) =>
            `${m.name} at ${m.line}:${m.column} (no ${m.layers.join(" or ")} of that name${m.suggestions.length > 0 ? `; did you mean ${m.suggestions.map((s) => s.name).join(", ")}?` : ""})`,
        )
        .join("; ");
      return reject(
        "undefined-reference",
        `${q} references what is not defined: ${describe}; add those first (or in the same bundle)`,
        {
          definition: q,
          missing: list,
        },
      );
    }
    for (const key of new Set(later)) this.deferred.push({ source: self, key });
    return ok({ refs: refs as RefBindings, sites: p.sites });
  }

  /** The names (`layers:name`) definition `id`'s current text references and leaves unbound. */
  private unboundNames(id: DefId): Set<string> {
    const out = new Set<string>();
    const s = this.fork.definition(id);
    if (s === undefined || !s.alive) return out;
    const p = parseText(s.body.text);
    if (!p.ok) return out;
    for (const site of p.sites)
      if (siteTarget(site, s.body.refs) === null && !isStandardReference(site))
        out.add(`${site.layers.join("|")}:${site.name}`);
    return out;
  }

  add(input: {
    layer?: string | undefined;
    name?: string | undefined;
    body?: string | undefined;
    source?: string | undefined;
    task?: string | undefined;
  }): Rejection | undefined {
    let layer: string;
    let name: string;
    let text: string;
    if (input.source !== undefined) {
      const parts = decomposeSource(input.source);
      if (parts === undefined) {
        return {
          code: "parse-error",
          message: "the source does not start with a layer keyword and a name (e.g. slot todos : …)",
          details: { text: input.source },
        };
      }
      if (
        (input.layer !== undefined && input.layer !== parts.layer) ||
        (input.name !== undefined && input.name !== parts.name)
      ) {
        return {
          code: "definition-mismatch",
          message: `the source defines ${qualified(parts.layer, parts.name)}, not ${input.layer}.${input.name}`,
        };
      }
      layer = parts.layer;
      name = parts.name;
      text = input.source;
    } else {
      layer = input.layer!;
      name = input.name!;
      if (!isLayer(layer)) {
        return {
          code: "invalid-layer",
          message: `unknown layer ${quoted(layer)}: one of type, slot, effect, reducer, tile, fn, app, test, theme, motion`,
        };
      }
      if (!isDefinitionName(name)) return this.badName(name);
      text = composeSource({ layer, name, body: input.body! });
    }
    if (!isLayer(layer)) return { code: "invalid-layer", message: `unknown layer ${quoted(layer)}` };
    if (!isDefinitionName(name)) return this.badName(name);
    const holder = this.fork.lookup(layer, name);
    // A faithful import keeps a program's second definition of a name (upstream: the later one
    // shows; both are kept, E0007 reports them); a name the graph held before is still refused.
    if (holder !== undefined && !(this.keepErrors && this.addedHere.has(holder))) {
      return {
        code: "duplicate-name",
        message: `${qualified(layer, name)} already exists (${holder}); replace or edit it, or rename it first`,
        details: { definition: qualified(layer, name), holder },
      };
    }
    const id = this.nextId();
    const bound = this.bind(text, { layer, name }, defIdOf(id));
    if (!bound.ok) return bound.error;
    this.addedHere.add(defIdOf(id));
    const parts = decomposeSource(text)!;
    return this.place({
      ...this.meta("add", layer, name, undefined, input.task, id),
      op: "add",
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: bound.value.refs,
    });
  }

  private badName(name: string): Rejection {
    return {
      code: "invalid-name",
      message: RESERVED_WORDS.has(name)
        ? `${quoted(name)} is a reserved word and cannot name a definition`
        : `${quoted(name)} is not a name: a letter, then letters, digits, _ or -, at most 32 characters`,
      details: { name },
    };
  }

  replace(input: {
    qname: string;
    body?: string | undefined;
    source?: string | undefined;
    task?: string | undefined;
  }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const given = input.source ?? composeSource({ layer: s.layer, name: s.name, body: input.body! });
    const text = keepLeadingComments(s.body.text, given);
    // The same text with the same bindings changes nothing: no op (a repeated replace is
    // idempotent). The same text that would bind differently (a name defined since) is a write.
    if (this.reserved.size === 0 && text === this.reader.materializer.render(s)) {
      const bound = this.bind(text, { layer: s.layer, name: s.name }, s.id);
      if (bound.ok && sameRefs(bound.value.refs, s.body.refs))
        return {
          code: "no-change",
          message: `${qualified(s.layer, s.name)} already has that text; nothing was written`,
          details: { definition: qualified(s.layer, s.name) },
        };
    }
    return this.writeText("replace", s, text, input.task);
  }

  private writeText(
    kind: "replace",
    s: DefinitionState,
    text: string,
    task: string | undefined,
    reverts?: OpId,
  ): Rejection | undefined {
    const bound = this.bind(text, { layer: s.layer, name: s.name }, s.id);
    if (!bound.ok) return bound.error;
    const parts = decomposeSource(text)!;
    return this.place({
      ...this.meta(kind, s.layer, s.name, s.id, task),
      op: kind,
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: bound.value.refs,
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  edit(input: {
    qname: string;
    patch: readonly Anchor[] | LinePatch;
    task?: string | undefined;
  }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const shown = this.reader.materializer.render(s);
    const q = qualified(s.layer, s.name);
    const anchors = patchAnchors(shown, q, input.patch);
    if (!anchors.ok) return { ...anchors.failure, details: { definition: q, ...anchors.failure.details } };
    const patch = anchors.anchors;
    const r = applyPatch(shown, patch);
    if (!r.ok) {
      return {
        code: r.failure.code,
        message: `cannot edit ${q}: ${describePatchFailure(r.failure)}; nothing was changed (view ${q} for its current text)`,
        details: { definition: q, ...r.failure },
      };
    }
    const bound = this.bind(r.text, { layer: s.layer, name: s.name }, s.id);
    if (!bound.ok) return { ...bound.error, message: `after the edit, ${bound.error.message}` };
    // An edit whose anchors replace each text with itself changes nothing: no op, as for replace.
    if (this.reserved.size === 0 && r.text === shown && sameRefs(bound.value.refs, s.body.refs)) {
      return {
        code: "no-change",
        message: `the edit leaves ${q} as it is (every replace equals its find); nothing was written`,
        details: { definition: q },
      };
    }
    const parts = decomposeSource(r.text)!;
    return this.place({
      ...this.meta("edit", s.layer, s.name, s.id, input.task),
      op: "edit",
      patch: patch.map((a) => ({ find: a.find, replace: a.replace })),
      base: s.body.version,
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: bound.value.refs,
    });
  }

  rename(
    input: { qname: string; newName: string; task?: string | undefined },
    reverts?: OpId,
  ): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    if (!isDefinitionName(input.newName)) return this.badName(input.newName);
    if (input.newName === s.name)
      return { code: "no-change", message: `${qualified(s.layer, s.name)} already has that name` };
    const holder = this.fork.lookup(s.layer, input.newName);
    if (holder !== undefined) {
      return {
        code: "duplicate-name",
        message: `${qualified(s.layer, input.newName)} already exists (${holder}); rename or remove it first`,
        details: { definition: qualified(s.layer, input.newName), holder },
      };
    }
    return this.place({
      ...this.meta("rename", s.layer, s.name, s.id, input.task),
      op: "rename",
      "new-name": input.newName,
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  remove(
    input: {
      qname: string;
      task?: string | undefined;
      cascade?: boolean | undefined;
      force?: boolean | undefined;
    },
    reverts?: OpId,
  ): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const q = this.fork.label(s.id);
    if (input.cascade === true) return this.removeAll(this.referrerClosure([s.id]), input.task, []);
    // Pre-check at issue time (ai-edit.md §9.4.1).
    const referrers = this.reader.referrers(s.id);
    if (referrers.length > 0 && input.force === true) {
      for (const r of referrers)
        for (const line of r.lines)
          this.warnings.push(
            `${r.view.visible ? r.view.qname : r.view.id}:${line} references ${q}, which is removed: the reference is left dangling (--force)`,
          );
      this.forced = true;
      this.removed.push(q);
      return this.place({
        ...this.meta("remove", s.layer, s.name, s.id, input.task),
        op: "remove",
        force: true,
        ...(reverts === undefined ? {} : { reverts }),
      });
    }
    if (referrers.length > 0) {
      const byLayer = new Map<Layer, number>();
      for (const r of referrers) byLayer.set(r.view.layer, (byLayer.get(r.view.layer) ?? 0) + 1);
      const counts = [...byLayer].map(([l, n]) => `${n} ${n === 1 ? l : LAYER_PLURALS[l]}`).join(", ");
      const lines = referrers.flatMap((r) =>
        r.lines.map((line) => `${r.view.visible ? r.view.qname : r.view.id}:${line}`),
      );
      // The remedy is the message's last line, also in details, so that an edge can say it in its
      // own terms (the CLI's --cascade / --force, MCP's cascade argument).
      const remedy =
        "remove it with cascade to remove all dependents too, or with force to leave their references dangling";
      return {
        code: "referenced",
        message: `cannot remove ${q} (referenced by ${counts})\n${lines.map((l) => `  ${l}`).join("\n")}\n${remedy}`,
        details: {
          remedy,
          definition: q,
          referrers: referrers.map((r) => ({ qname: r.view.qname, def: r.view.id, lines: r.lines })),
          byLayer: Object.fromEntries(byLayer),
        },
      };
    }
    this.removed.push(q);
    return this.place({
      ...this.meta("remove", s.layer, s.name, s.id, input.task),
      op: "remove",
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  /** `ids` and every live definition that references one of them, transitively. */
  private referrerClosure(ids: readonly DefId[]): Set<DefId> {
    const out = new Set<DefId>(ids);
    const stack = [...ids];
    while (stack.length > 0) {
      for (const r of this.fork.referrersOf(stack.pop()!)) {
        if (out.has(r)) continue;
        out.add(r);
        stack.push(r);
      }
    }
    return out;
  }

  /**
   * Removes a set of definitions in one write: referrers before what they reference, so no op
   * leaves a reference dangling; inside a cycle (a tile and the reducer it triggers) the first
   * remove is forced — its referrers are removed right after it. Refused (`referenced`) when a
   * definition outside the set references one inside, unless `allowOutside` lists it.
   */
  private removeAll(
    ids: Set<DefId>,
    task: string | undefined,
    allowOutside: readonly DefId[],
  ): Rejection | undefined {
    for (const id of ids) {
      for (const r of this.fork.referrersOf(id)) {
        if (ids.has(r) || allowOutside.includes(r)) continue;
        return {
          code: "referenced",
          message: `cannot remove ${this.fork.label(id)}: ${this.fork.label(r)} references it and is not part of this write; change or remove it first`,
          details: { definition: this.fork.label(id), referrer: this.fork.label(r) },
        };
      }
    }
    const left = new Set(ids);
    while (left.size > 0) {
      const states = [...left].map((id) => this.fork.definition(id)!).sort(compareDefinitions);
      const free = states.filter((x) => this.fork.referrersOf(x.id).every((r) => !left.has(r)));
      const batch = free.length > 0 ? free : [states[0]!];
      for (const x of batch) {
        left.delete(x.id);
        this.cascaded.add(x.id);
        this.removed.push(this.fork.label(x.id));
        const why = this.place({
          ...this.meta("remove", x.layer, x.name, x.id, task),
          op: "remove",
          ...(free.length === 0 ? { force: true as const } : {}),
        });
        if (why !== undefined) return why;
        // An earlier remove of this batch may have freed the rest: look again.
        if (free.length === 0) break;
      }
    }
    return undefined;
  }

  /** The stored keys of the sites of `s` shown as `ref` (`layer:name` with current names). */
  private keysShownAs(s: DefinitionState, ref: string): StoreResult<{ key: RefKey; bound: boolean }[]> {
    if (!isRefKey(ref))
      return reject("invalid-ref", `${quoted(ref)} is not a reference key: layer:name, e.g. slot:draft`);
    const { layer, name } = splitRefKey(ref);
    const sites = this.reader.materializer.sites(s);
    if (sites === undefined)
      return reject("parse-error", `${qualified(s.layer, s.name)} does not parse; fix its text first`);
    const keys = new Map<RefKey, boolean>();
    for (const x of sites) {
      if (x.shown !== name || !x.site.layers.includes(layer)) continue;
      const key = x.target !== null ? x.key : (`${layer}:${x.site.name}` as RefKey);
      if (splitRefKey(key).layer !== layer) continue;
      keys.set(key, x.target !== null);
    }
    if (keys.size === 0) {
      return reject(
        "ref-not-in-text",
        `${qualified(s.layer, s.name)} has no reference to a ${layer} named ${name}`,
        { definition: qualified(s.layer, s.name), ref },
      );
    }
    return ok([...keys].map(([key, bound]) => ({ key, bound })));
  }

  link(input: { qname: string; ref: string; to: string; task?: string | undefined }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const keys = this.keysShownAs(s, input.ref);
    if (!keys.ok) return keys.error;
    if (keys.value.length > 1) {
      return {
        code: "invalid-ref",
        message: `${input.ref} stands for several references in ${qualified(s.layer, s.name)}; edit the text instead`,
      };
    }
    const { key } = keys.value[0]!;
    const to = this.target(input.to);
    if (!to.ok) return to.error;
    if (to.value.layer !== splitRefKey(key).layer) {
      return {
        code: "invalid-ref",
        message: `${input.ref} references a ${splitRefKey(key).layer}; ${this.fork.label(to.value.id)} is a ${to.value.layer}`,
      };
    }
    if (s.body.refs[key] === to.value.id)
      return { code: "no-change", message: `${input.ref} already refers to ${this.fork.label(to.value.id)}` };
    return this.place({
      ...this.meta("link", s.layer, s.name, s.id, input.task),
      op: "link",
      ref: key,
      target: to.value.id,
    });
  }

  unlink(input: { qname: string; ref: string; task?: string | undefined }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const keys = this.keysShownAs(s, input.ref);
    if (!keys.ok) return keys.error;
    const bound = keys.value.filter((k) => k.bound);
    if (bound.length === 0)
      return {
        code: "no-change",
        message: `${input.ref} in ${qualified(s.layer, s.name)} is not bound to a definition`,
      };
    if (bound.length > 1) {
      return {
        code: "invalid-ref",
        message: `${input.ref} stands for several references in ${qualified(s.layer, s.name)}; edit the text instead`,
      };
    }
    return this.place({
      ...this.meta("unlink", s.layer, s.name, s.id, input.task),
      op: "unlink",
      ref: bound[0]!.key,
    });
  }

  revert(opId: OpId, task: string | undefined): Rejection | undefined {
    const g = this.fork;
    const held = g.op(opId);
    if (held === undefined) return { code: "unknown-op", message: `no op ${opId} in this graph` };
    if (isControlOp(held)) {
      return {
        code: "not-revertable",
        message: `${opId} is a ${held.op} op; change the policy or the locks directly (setConflictPolicy, lock, unlock)`,
      };
    }
    const op = held;
    if (g.isRolledBack(opId) || g.orphanReason(opId) !== undefined) {
      return {
        code: "not-revertable",
        message: `${opId} was rolled back by a conflict; it has no effect to revert (see conflicts)`,
      };
    }
    const s = g.definition(op.def);
    if (s === undefined)
      return { code: "not-revertable", message: `${opId} targets ${op.def}, which does not exist` };
    const q = g.label(s.id);
    const diverged = (what: string): Rejection => ({
      code: "revert-diverged",
      message: `cannot revert ${op.op} ${opId} of ${q}: ${what}; revert the later changes first, or write the text you want`,
      details: { op: opId, definition: q },
    });
    // Reverting a revert that brought a definition back removes it again.
    const undoesRemove = op.reverts !== undefined && g.op(op.reverts)?.op === "remove" && op.op === "replace";
    if (op.op === "add" || undoesRemove) {
      if (!s.alive) return { code: "not-revertable", message: `${q} is already removed` };
      if (undoesRemove && s.body.version !== opId) return diverged("its text changed since");
      return this.remove({ qname: s.id, ...(task === undefined ? {} : { task }) }, opId);
    }
    switch (op.op) {
      case "remove": {
        if (s.alive)
          return { code: "not-revertable", message: `${q} is live: the remove ${opId} is not in effect` };
        if (s.ops[s.ops.length - 1] !== op) return diverged("it changed since");
        const parts = decomposeSource(s.body.text);
        if (parts === undefined) return diverged("its text cannot be restored");
        const holder = g.lookup(s.layer, s.name);
        if (holder !== undefined) {
          return {
            code: "duplicate-name",
            message: `cannot bring back ${qualified(s.layer, s.name)}: the name is now taken by ${holder}; rename that one first`,
            details: { holder },
          };
        }
        return this.restore(s, s.body.text, s.body.refs, opId, task);
      }
      case "rename": {
        if (s.nameWinner !== op)
          return s.nameMax.includes(op)
            ? { code: "not-revertable", message: `${opId} lost to a concurrent rename` }
            : diverged(`it was renamed again since (now ${s.name})`);
        return this.rename({ qname: s.id, newName: op.name, ...(task === undefined ? {} : { task }) }, opId);
      }
      default: {
        if (!s.alive) return { code: "not-revertable", message: `${q} is removed; revert its removal first` };
        if (s.failures.has(opId))
          return {
            code: "not-revertable",
            message: `${opId} did not apply (see conflicts); there is nothing to revert`,
          };
        if (op.op === "replace" && s.textWinner !== op && s.textMax.includes(op)) {
          return {
            code: "not-revertable",
            message: `${opId} lost to a concurrent replace; there is nothing to revert`,
          };
        }
        if (s.body.version !== opId) return diverged("its text changed since");
        const prior = g.bodyBefore(s.id, opId);
        if (prior === undefined)
          return { code: "not-revertable", message: `${opId} left no earlier text to restore` };
        return this.restore(s, prior.text, prior.refs, opId, task);
      }
    }
  }

  /**
   * Writes the ops of a task undo: first the definitions the task removed come back, then texts and
   * names return to what they were, then what the task added goes (referrers first). A binding to
   * a definition that is not live yet is written unbound and linked once everything is back, so no
   * op of the write ever binds to a definition that is gone.
   */
  undo(plan: TaskUndoPlan, task: string): Rejection | undefined {
    const later: { def: DefId; key: RefKey; target: DefId }[] = [];
    const restoreText = (s: DefinitionState, text: string, refs: RefBindings): Rejection | undefined => {
      const now: Record<string, DefId> = {};
      for (const [k, t] of Object.entries(refs) as [RefKey, DefId][]) {
        if (this.fork.definition(t)?.alive === true || t === s.id) now[k] = t;
        else later.push({ def: s.id, key: k, target: t });
      }
      return this.restore(s, text, now as RefBindings, undefined, task);
    };
    const ordered = [...plan.definitions].sort((a, b) => (a.revive === b.revive ? 0 : a.revive ? -1 : 1));
    for (const d of ordered) {
      if (d.before === undefined || !d.before.alive) continue;
      const s = this.fork.definition(d.def)!;
      const sameText = s.alive && s.body.text === d.before.text && sameRefs(s.body.refs, d.before.refs);
      if (!sameText) {
        const why = restoreText(s, d.before.text, d.before.refs);
        if (why !== undefined) return why;
      }
      const now = this.fork.definition(d.def)!;
      if (now.name !== d.before.name) {
        const why = this.rename({ qname: now.id, newName: d.before.name, task });
        if (why !== undefined) return why;
      }
    }
    for (const l of later) {
      const s = this.fork.definition(l.def)!;
      if (this.fork.definition(l.target)?.alive !== true) {
        return {
          code: "undefined-reference",
          message: `cannot restore ${this.fork.label(l.def)}: it referenced ${this.fork.label(l.target)} (${l.key}), which is gone and not part of the task; restore it first`,
          details: { definition: this.fork.label(l.def), key: l.key, target: l.target },
        };
      }
      const why = this.place({
        ...this.meta("link", s.layer, s.name, s.id, task),
        op: "link",
        ref: l.key,
        target: l.target,
      });
      if (why !== undefined) return why;
    }
    const gone = new Set(
      plan.definitions
        .filter(
          (d) => (d.before === undefined || !d.before.alive) && this.fork.definition(d.def)?.alive === true,
        )
        .map((d) => d.def),
    );
    if (gone.size > 0) {
      const why = this.removeAll(gone, task, []);
      if (why !== undefined) return why;
    }
    return undefined;
  }

  /** A replace that sets a stored text and its bindings as they were (a revert's op). */
  private restore(
    s: DefinitionState,
    text: string,
    refs: RefBindings,
    reverts: OpId | undefined,
    task: string | undefined,
  ): Rejection | undefined {
    const parts = decomposeSource(text);
    if (parts === undefined)
      return {
        code: "not-revertable",
        message: `the earlier text of ${qualified(s.layer, s.name)} cannot be restored`,
      };
    return this.place({
      ...this.meta("replace", s.layer, s.name, s.id, task),
      op: "replace",
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs,
      ...(reverts === undefined ? {} : { reverts }),
    });
  }
}

function sameRefs(a: RefBindings, b: RefBindings): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k as RefKey] === b[k as RefKey]);
}

// ---------------------------------------------------------------------------------------------
// Ops from elsewhere
// ---------------------------------------------------------------------------------------------

/** The top-level fields in which two ops differ, by name. */
function differingFields(a: LogOp, b: LogOp): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const get = (o: LogOp, k: string) => (o as unknown as Record<string, unknown>)[k];
  return [...keys]
    .filter((k) => opContentHash(get(a, k) ?? null) !== opContentHash(get(b, k) ?? null))
    .sort();
}

/**
 * Checks wire ops from elsewhere against the graph; the new ones, or the first reason to refuse.
 * A replica's op (not in `spec`, the op-ids of ops given in the §9.3.2 form) is taken as a faithful
 * import stored it: a text that does not parse and binds nothing, or a reference site bound to
 * nothing, is held as written (check reports it), as sync would hold it, so that `patch export`
 * of any workspace applies to an empty one and the two paths never disagree.
 */
function checkIncoming(
  graph: Graph,
  inputs: readonly unknown[],
  spec: ReadonlySet<string>,
): StoreResult<LogOp[]> {
  const fresh: LogOp[] = [];
  const batch = new Map<OpId, LogOp>();
  for (const [i, input] of inputs.entries()) {
    const r = parseOp(input);
    if (!r.ok)
      return reject(r.error.code, `op ${i + 1}: ${r.error.message}`, { index: i, issues: r.error.issues });
    const op = r.op;
    const id = op["op-id"];
    const held = graph.op(id) ?? batch.get(id);
    // Held, but quarantined (it failed the schema when it came): skipped as before.
    if (held === undefined && graph.holds(id)) continue;
    if (held !== undefined) {
      // An op-id names one op: the same op again is a no-op, another op under it is refused.
      if (opContentHash(held) !== opContentHash(op)) {
        const fields = differingFields(held, op);
        return reject(
          "op-id-reused",
          `op ${i + 1}: ${id} is already held with other content (${fields.join(", ")} differ): an op-id names exactly one op, so this one is forged or corrupted; nothing was stored (a new op needs a new op-id)`,
          { index: i, op: id, fields },
        );
      }
      continue;
    }
    batch.set(id, op);
    fresh.push(op);
  }
  const added = new Map<DefId, Op>();
  for (const o of fresh) if (o.op === "add" && !added.has(o.def)) added.set(o.def, o);
  const exists = (d: DefId): DefinitionState | Op | undefined => graph.definition(d) ?? added.get(d);
  // "<def> <ref key>" of every link in the batch (its target is checked below like any other).
  const linked = new Set<string>();
  for (const op of fresh) if (op.op === "link") linked.add(`${op.def} ${op.ref}`);
  for (const op of fresh) {
    const where = `${op.op} ${op["op-id"]}`;
    for (const p of op["parent-ops"]) {
      if (!graph.holds(p) && !batch.has(p)) {
        return reject(
          "unknown-parent",
          `${where}: parent op ${p} is not held; send the ops it was written after first`,
          { op: op["op-id"], parent: p },
        );
      }
    }
    if (isControlOp(op)) continue;
    if (op.op !== "add") {
      const target = exists(op.def);
      if (target === undefined)
        return reject("unknown-definition", `${where}: no definition ${op.def}`, {
          op: op["op-id"],
          def: op.def,
        });
      if (target.layer !== op.layer) {
        return reject(
          "definition-mismatch",
          `${where}: ${op.def} is a ${target.layer}, the op says ${op.layer}`,
          { op: op["op-id"] },
        );
      }
    }
    if (op.op === "link" && exists(op.target) === undefined) {
      return reject("undefined-reference", `${where}: links to ${op.target}, which the graph does not hold`, {
        op: op["op-id"],
        target: op.target,
      });
    }
    if (op.op === "add" || op.op === "replace" || op.op === "edit") {
      const text = composeSource({
        layer: op.layer,
        name: op.name,
        body: op.body,
        head: op.head ?? `${op.layer} `,
      });
      const p = parseText(text);
      if (!p.ok) {
        // A replica's text that does not parse is kept as written, binding nothing (E0008).
        if (!spec.has(op["op-id"]) && Object.keys(op.refs).length === 0) continue;
        return reject(
          "parse-error",
          `${where}: its text does not parse${spec.has(op["op-id"]) ? "" : ", yet it binds references"}: ${p.error.message}`,
          { op: op["op-id"], text, span: p.error.span },
        );
      }
      if (p.def.layer !== op.layer || p.def.name.name !== op.name) {
        return reject(
          "definition-mismatch",
          `${where}: its text defines ${qualified(p.def.layer, p.def.name.name)}, the op says ${qualified(op.layer, op.name)}`,
          {
            op: op["op-id"],
          },
        );
      }
      for (const [key, t] of Object.entries(op.refs)) {
        if (exists(t) === undefined) {
          return reject(
            "undefined-reference",
            `${where}: ${key} is bound to ${t}, which the graph does not hold`,
            { op: op["op-id"], key, target: t },
          );
        }
      }
      for (const site of p.sites) {
        if (isStandardReference(site) || siteTarget(site, op.refs) !== null) continue;
        // Validated as a set: a forward reference (import adds the definitions, then links the
        // references to those added after them) or a cycle is bound by a link of the same batch.
        if (site.layers.some((l) => linked.has(`${op.def} ${l}:${site.name}`))) continue;
        // A replica's reference that binds nothing is held unbound, as a faithful import holds it.
        if (!spec.has(op["op-id"])) continue;
        return reject(
          "undefined-reference",
          `${where}: ${site.name} at ${site.span.line}:${site.span.column} is bound to no definition (looked for a ${site.layers.join(" or ")})`,
          { op: op["op-id"], name: site.name, layers: site.layers },
        );
      }
    }
  }
  return ok(fresh);
}
