import { z } from "zod";
import type { ContentHash } from "../lang/hash.js";
import { isLayer, type Layer } from "../lang/layers.js";
import type { ReferenceSite } from "../lang/references.js";
import { type Conflict, type DefinitionState, Graph, type GraphStatus } from "../ops/graph.js";
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
  isDefinitionName,
  isRefKey,
  type Op,
  type OpKind,
  parseOp,
  RESERVED_WORDS,
  type RefBindings,
  type RefKey,
  splitRefKey,
} from "../ops/op.js";
import { applyPatch, describePatchFailure } from "../ops/patch.js";
import { composeSource, decomposeSource } from "../ops/source.js";
import { compareDefinitions, parseText, qualified, siteTarget } from "./materialize.js";
import type { OpLog } from "./op-log.js";
import { ok, type Rejection, reject, type StoreResult } from "./result.js";
import { matchesPattern, parseSelector } from "./selector.js";
import { suggest } from "./suggest.js";
import { builtinGate, type ValidationProblem, type WriteValidator } from "./validate.js";
import { type DefinitionView, GraphReader } from "./view.js";

/** How a store is opened. */
export interface StoreOptions {
  /** Where the ops live (memory, or a workspace's Automerge document). */
  readonly log: OpLog;
  /** Who writes through this store: `agent:claude-1`, `user:alice`. */
  readonly author: string;
  /** Validators run after the built-in gate on every write (the checker plugs in here). */
  readonly validators?: readonly WriteValidator[];
  /** Milliseconds since the epoch, for op timestamps and ids; defaults to `Date.now`. */
  readonly now?: () => number;
  /** Random bytes for op-ids; defaults to `crypto.getRandomValues`. */
  readonly random?: (bytes: Uint8Array) => void;
}

/** What a successful write did. */
export interface WriteReceipt {
  readonly opIds: readonly OpId[];
  /** The ops as stored (wire format). */
  readonly ops: readonly Op[];
}

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

/** What became of an op in the merged graph. */
export type OpStatus = "applied" | "lost" | "failed" | "rolled-back" | "orphaned";

/** One op in a definition's history. */
export interface HistoryEntry {
  readonly opId: OpId;
  readonly op: OpKind;
  readonly author: string;
  readonly ts: number;
  /** The definition's name when the op was written. */
  readonly name: string;
  readonly newName?: string;
  readonly task?: string;
  readonly reverts?: OpId;
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
}

/** A change to the graph, local or from elsewhere. */
export interface ChangeEvent {
  readonly source: "local" | "remote";
  readonly ops: readonly Op[];
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
/** `edit`: the target and its anchors (each `find` must match exactly once). */
export const EditInputSchema = z.strictObject({
  qname: z.string(),
  patch: z
    .array(z.strictObject({ find: z.string(), replace: z.string() }))
    .min(1)
    .max(256),
  task: Task,
});
/** `rename`: the target and its new name. */
export const RenameInputSchema = z.strictObject({ qname: z.string(), newName: z.string(), task: Task });
/** `remove`: the target. */
export const RemoveInputSchema = z.strictObject({ qname: z.string(), task: Task });
/** `link`: bind the reference `ref` (`layer:name` as shown) in the target's text to the definition `to`. */
export const LinkInputSchema = z.strictObject({
  qname: z.string(),
  ref: z.string(),
  to: z.string(),
  task: Task,
});
/** `unlink`: drop the binding of the reference `ref` (`layer:name` as shown) in the target's text. */
export const UnlinkInputSchema = z.strictObject({ qname: z.string(), ref: z.string(), task: Task });

/** One item of a bundle: an input of one write kind, tagged with `op`. */
export const BundleItemSchema = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("add"),
    layer: z.string().optional(),
    name: z.string().optional(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
  }),
  z.strictObject({
    op: z.literal("replace"),
    qname: z.string(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
  }),
  z.strictObject({
    op: z.literal("edit"),
    qname: z.string(),
    patch: EditInputSchema.shape.patch,
    task: Task,
  }),
  z.strictObject({ op: z.literal("rename"), qname: z.string(), newName: z.string(), task: Task }),
  z.strictObject({ op: z.literal("remove"), qname: z.string(), task: Task }),
  z.strictObject({ op: z.literal("link"), qname: z.string(), ref: z.string(), to: z.string(), task: Task }),
  z.strictObject({ op: z.literal("unlink"), qname: z.string(), ref: z.string(), task: Task }),
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

function invalidInput(what: string, error: z.ZodError): Rejection {
  const issues = error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
  const first = issues[0];
  return {
    code: "invalid-input",
    message: `invalid ${what}: ${first === undefined ? "" : `${first.path.join(".") || "(input)"}: ${first.message}`}`,
    details: { issues },
  };
}

const PLURAL: Record<Layer, string> = {
  type: "types",
  slot: "slots",
  effect: "effects",
  reducer: "reducers",
  tile: "tiles",
  fn: "fns",
  app: "apps",
  test: "tests",
  theme: "themes",
  motion: "motions",
};

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

/**
 * A new store over an empty log. Refused (`store-not-empty`) when the log already holds ops: use
 * {@link openStore} for an existing graph.
 */
export function createStore(options: StoreOptions): StoreResult<Store> {
  if (options.log.all().length > 0) {
    return reject(
      "store-not-empty",
      "the log already holds ops; open it with openStore instead of creating a store",
    );
  }
  return openStore(options);
}

/** Opens a store over a log: folds every op it holds (ops that fail the wire schema are quarantined, see `status`). */
export function openStore(options: StoreOptions): StoreResult<Store> {
  if (!isAuthorId(options.author)) {
    return reject(
      "invalid-author",
      `invalid author ${JSON.stringify(options.author)}: letters, digits and . _ : @ / + - without spaces, at most 128 characters (e.g. agent:claude-1)`,
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
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  private readonly unsubscribe: () => void;

  /** @internal Use {@link openStore} or {@link createStore}. */
  constructor(options: StoreOptions) {
    this.log = options.log;
    this.author = options.author as AuthorId;
    this.validators = [builtinGate, ...(options.validators ?? [])];
    this.now = options.now ?? Date.now;
    this.ids = createOpIdGenerator({
      now: this.now,
      ...(options.random === undefined ? {} : { random: options.random }),
    });
    this.graph = Graph.fold(this.log.all());
    this.reader = new GraphReader(this.graph);
    this.unsubscribe = this.log.onRemote((ops) => {
      void this.serially(async () => {
        if (this.closed) return;
        const { added, refolded } = this.graph.receive(ops);
        if (refolded) this.reader = new GraphReader(this.graph);
        if (added.length > 0) this.emit({ source: "remote", ops: added });
      });
    });
  }

  // -------------------------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------------------------

  /** A reader over the current graph (for validators, projections, tests). */
  read(): GraphReader {
    return this.reader;
  }

  /**
   * Definitions as text (`kumiki view`): one (`slot.todos`, or `def_…` for a definition hidden by a
   * name conflict or removed), or a pattern (`slot.*`, `tile.Todo*`); with `withDeps`, everything
   * they reference, transitively, after them.
   */
  view(selector: string, options: { withDeps?: boolean } = {}): StoreResult<ViewResult> {
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
    const text = definitions.map((d) => (d.text.endsWith("\n") ? d.text : `${d.text}\n`)).join("");
    return ok({ definitions, text });
  }

  /** The definitions that show under their names (`kumiki list`), in one layer or all. */
  list(layer?: string): StoreResult<ListEntry[]> {
    if (layer !== undefined && !isLayer(layer)) {
      return reject(
        "invalid-layer",
        `unknown layer ${JSON.stringify(layer)}: one of type, slot, effect, reducer, tile, fn, app, test, theme, motion`,
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
    const sel = parseSelector(qname);
    if ("error" in sel) return reject("invalid-selector", sel.error);
    let ids: DefId[];
    if (sel.kind === "id") ids = this.graph.definition(sel.id) === undefined ? [] : [sel.id];
    else {
      if (sel.wildcard || sel.layer === undefined)
        return reject(
          "invalid-selector",
          `history takes one layer.name or a definition id, not ${JSON.stringify(qname)}`,
        );
      const now = this.graph.lookup(sel.layer, sel.pattern);
      ids = [
        ...new Set([...(now === undefined ? [] : [now]), ...this.graph.everNamed(sel.layer, sel.pattern)]),
      ].filter((id) => this.graph.definition(id) !== undefined || this.graph.opsOf(id).length > 0);
    }
    if (ids.length === 0) return reject("not-found", `no definition has ever been named ${qname}`);
    return ok(ids.flatMap((id) => this.historyOf(id)));
  }

  private historyOf(id: DefId): DefinitionHistory[] {
    const g = this.graph;
    const s = g.definition(id);
    const opIds = g.opsOf(id);
    const first = g.op(opIds[0]!);
    if (first === undefined) return [];
    const byOp = new Map<string, Conflict>();
    for (const c of g.conflicts(new Set([id]))) byOp.set(c.ops[0]!, c);
    const names: string[] = [];
    const entries = opIds.map((o): HistoryEntry => {
      const op = g.op(o)!;
      const conflict = byOp.get(o);
      let status: OpStatus = "applied";
      if (g.isRolledBack(o)) status = "rolled-back";
      else if (g.orphanReason(o) !== undefined) status = "orphaned";
      else if (conflict?.kind === "edit-rebase-failed" || conflict?.kind === "link-site-missing")
        status = "failed";
      else if (conflict?.kind === "replace-lost" || conflict?.kind === "rename-lost") status = "lost";
      if (status === "applied" || status === "lost") {
        const n = op.op === "add" ? op.name : op.op === "rename" ? op["new-name"] : undefined;
        if (n !== undefined && names[names.length - 1] !== n) names.push(n);
      }
      const rolled = g.isRolledBack(o)
        ? `rolled-back:${o}`
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
    return this.graph.conflicts();
  }

  /** Where the store stands: op counts, quarantined ops, heads, conflicts. */
  status(): StoreStatus {
    return { ...this.graph.status(), author: this.author };
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
        `${JSON.stringify(qname)} is not layer.name (e.g. slot.todos) or a definition id (def_…)`,
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
      `no ${layer} named ${name}${hints.length > 0 ? `: ${hints.join("; ")}` : ""}`,
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

  /** Removes a definition; refused while live definitions reference it (listing them). */
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
   * any item (mutually recursive definitions go in one bundle).
   */
  apply(bundle: unknown): Promise<StoreResult<WriteReceipt>> {
    const r = BundleSchema.safeParse(bundle);
    if (!r.success) return Promise.resolve({ ok: false, error: invalidInput("bundle", r.error) });
    const items = Array.isArray(r.data) ? r.data : r.data.ops;
    if (items.length === 0) return Promise.resolve(reject("bundle-empty", "the bundle holds no ops"));
    return this.write((d) => {
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
      }
      return d.settle();
    });
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
        reject("invalid-op-id", `${JSON.stringify(opId)} is not an op-id (op_ and a 26-character ULID)`),
      );
    return this.write((d) => d.revert(opId, options.task));
  }

  /**
   * Takes ops written elsewhere, in the wire format (an exported op file, a peer's ops), all or
   * nothing: each must pass the wire schema, have its parents held or in the batch, target a
   * definition that exists, and carry a text that parses and references definitions the graph holds.
   */
  ingest(input: unknown): Promise<StoreResult<WriteReceipt>> {
    return this.serially(async () => {
      if (this.closed) return reject<WriteReceipt>("store-closed", "the store is closed");
      const checked = checkIncoming(this.graph, Array.isArray(input) ? input : [input]);
      if (!checked.ok) return checked;
      const fresh = checked.value;
      if (fresh.length > 0) {
        try {
          await this.log.append(fresh);
        } catch (e) {
          return reject<WriteReceipt>(
            "storage-failed",
            `the ops could not be stored: ${e instanceof Error ? e.message : String(e)}`,
          );
        }
        const { refolded } = this.graph.receive(fresh);
        if (refolded) this.reader = new GraphReader(this.graph);
        this.emit({ source: "local", ops: fresh });
      }
      return ok({ opIds: fresh.map((o) => o["op-id"]), ops: fresh });
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
   * One write: author its ops against a fork of the graph, run the gate on the fork, store the ops
   * durably, then apply them. Any refusal drops the fork: nothing changed, the log untouched.
   */
  private write(build: (d: Draft) => Rejection | undefined): Promise<StoreResult<WriteReceipt>> {
    return this.serially(async () => {
      if (this.closed) return reject<WriteReceipt>("store-closed", "the store is closed");
      const draft = new Draft(this.graph, this.author, this.now, this.ids);
      let ops: Op[];
      try {
        const refused = build(draft);
        if (refused !== undefined) return { ok: false, error: refused } as const;
        const problems = this.gate(draft);
        if (problems.length > 0) {
          const [first] = problems as [ValidationProblem];
          return reject<WriteReceipt>(first.code, first.message, { ...first.details, problems });
        }
        ops = draft.finish();
      } finally {
        draft.discard();
      }
      try {
        await this.log.append(ops);
      } catch (e) {
        return reject<WriteReceipt>(
          "storage-failed",
          `the write could not be stored, nothing changed: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
      const { refolded } = this.graph.receive(ops);
      if (refolded) this.reader = new GraphReader(this.graph);
      this.emit({ source: "local", ops });
      return ok({ opIds: ops.map((o) => o["op-id"]), ops });
    });
  }

  private gate(draft: Draft): ValidationProblem[] {
    const before = this.reader;
    const after = draft.reader;
    const touched = new Set<DefId>();
    for (const op of draft.ops) {
      touched.add(op.def);
      if (op.op === "rename" || op.op === "remove" || op.reverts !== undefined) {
        for (const r of before.graph.referrersOf(op.def)) touched.add(r);
        for (const r of after.graph.referrersOf(op.def)) touched.add(r);
      }
    }
    const write = { ops: draft.ops, before, after, touched: [...touched] };
    for (const v of this.validators) {
      const problems = v.validate(write);
      if (problems.length > 0) return [...problems];
    }
    return [];
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
  readonly ops: Op[] = [];
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
  finish(): Op[] {
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
      this.reserved.add(`${parts.layer}:${parts.name}`);
    }
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
        ...this.meta("link", s.layer, s.name, s.id, undefined, this.nextId()),
        op: "link",
        ref: d.key,
        target: added.id,
      });
      if (why !== undefined) return why;
    }
    return undefined;
  }

  item(item: BundleItem): Rejection | undefined {
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

  private place(op: Op): Rejection | undefined {
    // Defence in depth: an op the store wrote must pass the wire schema like any other.
    const r = parseOp(op);
    if (!r.ok) return { code: r.error.code, message: r.error.message, details: { issues: r.error.issues } };
    this.fork.receive([op]);
    this.ops.push(op);
    if (op.op === "add") {
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
        `${JSON.stringify(qname)} is not layer.name (e.g. slot.todos) or a definition id (def_…)`,
      );
    const id = this.fork.lookup(layer, name);
    if (id !== undefined) return ok(this.fork.definition(id)!);
    const near = suggest(
      name,
      [...this.fork.definitions()].filter((s) => s.layer === layer && s.alive).map((s) => s.name),
    );
    return reject(
      "not-found",
      `no ${layer} named ${name}${near.length > 0 ? `: did you mean ${near.map((n) => `${layer}.${n.name}`).join(", ")}?` : ""}`,
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
    for (const site of p.sites) {
      let bound = false;
      for (const layer of site.layers) {
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
      if (!bound && site.role !== "variant") {
        missing.push({
          name: site.name,
          layers: site.layers,
          line: site.span.line,
          column: site.span.column,
        });
      }
    }
    if (missing.length > 0) {
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
          message: `unknown layer ${JSON.stringify(layer)}: one of type, slot, effect, reducer, tile, fn, app, test, theme, motion`,
        };
      }
      if (!isDefinitionName(name)) return this.badName(name);
      text = composeSource({ layer, name, body: input.body! });
    }
    if (!isLayer(layer)) return { code: "invalid-layer", message: `unknown layer ${JSON.stringify(layer)}` };
    if (!isDefinitionName(name)) return this.badName(name);
    const holder = this.fork.lookup(layer, name);
    if (holder !== undefined) {
      return {
        code: "duplicate-name",
        message: `${qualified(layer, name)} already exists (${holder}); replace or edit it, or rename it first`,
        details: { definition: qualified(layer, name), holder },
      };
    }
    const id = this.nextId();
    const bound = this.bind(text, { layer, name }, defIdOf(id));
    if (!bound.ok) return bound.error;
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
        ? `${JSON.stringify(name)} is a reserved word and cannot name a definition`
        : `${JSON.stringify(name)} is not a name: a letter, then letters, digits, _ or -, at most 32 characters`,
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
    const text = input.source ?? composeSource({ layer: s.layer, name: s.name, body: input.body! });
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

  edit(input: { qname: string; patch: readonly Anchor[]; task?: string | undefined }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const shown = this.reader.materializer.render(s);
    const r = applyPatch(shown, input.patch);
    const q = qualified(s.layer, s.name);
    if (!r.ok) {
      return {
        code: r.failure.code,
        message: `cannot edit ${q}: ${describePatchFailure(r.failure)}; nothing was changed (view ${q} for its current text)`,
        details: { definition: q, ...r.failure },
      };
    }
    const bound = this.bind(r.text, { layer: s.layer, name: s.name }, s.id);
    if (!bound.ok) return { ...bound.error, message: `after the edit, ${bound.error.message}` };
    const parts = decomposeSource(r.text)!;
    return this.place({
      ...this.meta("edit", s.layer, s.name, s.id, input.task),
      op: "edit",
      patch: input.patch.map((a) => ({ find: a.find, replace: a.replace })),
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

  remove(input: { qname: string; task?: string | undefined }, reverts?: OpId): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const q = this.fork.label(s.id);
    // Pre-check at issue time (ai-edit.md §9.4.1). Issue 4 adds --cascade / --force here.
    const referrers = this.reader.referrers(s.id);
    if (referrers.length > 0) {
      const byLayer = new Map<Layer, number>();
      for (const r of referrers) byLayer.set(r.view.layer, (byLayer.get(r.view.layer) ?? 0) + 1);
      const counts = [...byLayer].map(([l, n]) => `${n} ${n === 1 ? l : PLURAL[l]}`).join(", ");
      const lines = referrers.flatMap((r) =>
        r.lines.map((line) => `${r.view.visible ? r.view.qname : r.view.id}:${line}`),
      );
      return {
        code: "referenced",
        message: `cannot remove ${q} (referenced by ${counts})\n${lines.map((l) => `  ${l}`).join("\n")}\nremove or change those references first`,
        details: {
          definition: q,
          referrers: referrers.map((r) => ({ qname: r.view.qname, def: r.view.id, lines: r.lines })),
          byLayer: Object.fromEntries(byLayer),
        },
      };
    }
    return this.place({
      ...this.meta("remove", s.layer, s.name, s.id, input.task),
      op: "remove",
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  /** The stored keys of the sites of `s` shown as `ref` (`layer:name` with current names). */
  private keysShownAs(s: DefinitionState, ref: string): StoreResult<{ key: RefKey; bound: boolean }[]> {
    if (!isRefKey(ref))
      return reject(
        "invalid-ref",
        `${JSON.stringify(ref)} is not a reference key: layer:name, e.g. slot:draft`,
      );
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
    const op = g.op(opId);
    if (op === undefined) return { code: "unknown-op", message: `no op ${opId} in this graph` };
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

  /** A replace that sets a stored text and its bindings as they were (a revert's op). */
  private restore(
    s: DefinitionState,
    text: string,
    refs: RefBindings,
    reverts: OpId,
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
      reverts,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Ops from elsewhere
// ---------------------------------------------------------------------------------------------

/** Checks wire ops from elsewhere against the graph; the new ones, or the first reason to refuse. */
function checkIncoming(graph: Graph, inputs: readonly unknown[]): StoreResult<Op[]> {
  const fresh: Op[] = [];
  const batch = new Map<OpId, Op>();
  for (const [i, input] of inputs.entries()) {
    const r = parseOp(input);
    if (!r.ok)
      return reject(r.error.code, `op ${i + 1}: ${r.error.message}`, { index: i, issues: r.error.issues });
    const op = r.op;
    if (graph.holds(op["op-id"]) || batch.has(op["op-id"])) continue;
    batch.set(op["op-id"], op);
    fresh.push(op);
  }
  const exists = (d: DefId): DefinitionState | Op | undefined =>
    graph.definition(d) ?? fresh.find((o) => o.op === "add" && o.def === d);
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
      if (!p.ok)
        return reject("parse-error", `${where}: its text does not parse: ${p.error.message}`, {
          op: op["op-id"],
          text,
          span: p.error.span,
        });
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
        if (site.role === "variant" || siteTarget(site, op.refs) !== null) continue;
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
