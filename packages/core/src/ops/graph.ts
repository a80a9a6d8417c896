import type { ContentHash } from "../lang/hash.js";
import type { Layer } from "../lang/layers.js";
import { Causality, causalOrder, compareIds, MinHeap } from "./causality.js";
import { CowMap } from "./cow-map.js";
import type { DefId, OpId } from "./ids.js";
import {
  type ApplyFailure,
  applyToDefinition,
  type Body,
  CHANGED_NAME,
  type ConflictPolicy,
  cloneDefinition,
  createDefinition,
  type DanglingEdge,
  type DefinitionState,
  type MergeContext,
  nameOf,
  replayDefinition,
  resolveDangling,
} from "./merge.js";
import { isWireOp, type Op, parseOp, type RefKey } from "./op.js";
import { describePatchFailure } from "./patch.js";

export type { Body, DefinitionState } from "./merge.js";

/** The kinds of conflict record; see docs/semantics.md. */
export type ConflictKind =
  | "name-taken"
  | "replace-lost"
  | "rename-lost"
  | "edit-rebase-failed"
  | "link-site-missing"
  | "remove-overridden"
  | "rolled-back"
  | "orphaned";

/**
 * A merge decision in which some op's intent did not (fully) take effect: which ops, why, what was
 * decided, and how to retry. The list is a pure function of the op set, identical on every replica.
 */
export interface Conflict {
  /** Stable: `<kind>:<the op whose intent was lost>`. */
  readonly id: string;
  readonly kind: ConflictKind;
  /** The ops involved, the one whose intent was lost first. */
  readonly ops: readonly OpId[];
  /** The definitions involved, by identity. */
  readonly definitions: readonly DefId[];
  readonly reason: string;
  readonly decision: string;
  readonly retry: string;
}

/** Why a held op is not part of the graph. */
interface Rollback {
  readonly edge: DanglingEdge;
  readonly concurrent: boolean;
  /** The other ops rolled back for the same edge. */
  readonly with: readonly OpId[];
}

/** A held op the fold could not apply: its target does not exist (or is of another layer). */
interface Orphan {
  readonly reason: "missing-target" | "rolled-back-target" | "layer-mismatch";
}

/** An op the log holds that fails the wire schema: kept out of the fold, reported in status. */
export interface Quarantined {
  readonly opId: string;
  readonly code: string;
  readonly message: string;
}

/** Where the graph stands. */
export interface GraphStatus {
  /** Valid ops held. */
  readonly ops: number;
  /** Held ops waiting for a parent op that has not arrived. */
  readonly pending: number;
  readonly quarantined: readonly Quarantined[];
  /** Live definitions. */
  readonly definitions: number;
  readonly heads: readonly OpId[];
  readonly conflicts: number;
}

const POLICY: ConflictPolicy = "strict";

/**
 * The materialized graph: a fold of a set of ops in their deterministic causal order
 * ({@link causalOrder}) through the merge rules of merge.ts. It never parses: reference sites were
 * resolved to identities when each op was written.
 *
 * An op that can be placed after everything held (the common case: a local op on the current heads,
 * or a remote op with a greater op-id) is applied in O(size of the op); any other arrival re-folds.
 * A graph can be forked in O(1) to try ops (the store's write gate) and the fork committed or
 * dropped.
 */
export class Graph {
  /** The placed ops, in causal order (shared with forks, which roll their part back on discard). */
  private causality: Causality<Op>;
  /** Held ops that wait for a parent op that has not arrived. */
  private pending: CowMap<OpId, Op>;
  private quarantine: CowMap<string, Quarantined>;
  private defs: CowMap<DefId, DefinitionState>;
  /** `layer:name` → live definitions whose name it is. */
  private names: CowMap<string, readonly DefId[]>;
  /** `layer:name` → every definition that ever claimed the name (history across renames). */
  private nameHistory: CowMap<string, readonly DefId[]>;
  /** target → definitions whose text binds a reference to it. */
  private referrers: CowMap<DefId, readonly DefId[]>;
  /** The {@link DefinitionState.history} of definitions whose add was rolled back. */
  private graveyard: CowMap<DefId, OpId[]>;
  private rolledBack: CowMap<OpId, Rollback>;
  private orphans: CowMap<OpId, Orphan>;
  private hashes: CowMap<DefId, ContentHash>;
  private readonly parent: Graph | undefined;
  private causalMark: ReturnType<Causality["mark"]> | undefined;
  private readonly ctx: MergeContext;

  private constructor(parent?: Graph) {
    this.parent = parent;
    if (parent === undefined) {
      this.causality = new Causality();
      this.pending = new CowMap();
      this.quarantine = new CowMap();
      this.defs = new CowMap();
      this.names = new CowMap();
      this.nameHistory = new CowMap();
      this.referrers = new CowMap();
      this.graveyard = new CowMap();
      this.rolledBack = new CowMap();
      this.orphans = new CowMap();
      this.hashes = new CowMap();
    } else {
      this.causality = parent.causality;
      this.causalMark = parent.causality.mark();
      this.pending = parent.pending.fork();
      this.quarantine = parent.quarantine.fork();
      this.defs = parent.defs.fork();
      this.names = parent.names.fork();
      this.nameHistory = parent.nameHistory.fork();
      this.referrers = parent.referrers.fork();
      this.graveyard = parent.graveyard.fork();
      this.rolledBack = parent.rolledBack.fork();
      this.orphans = parent.orphans.fork();
      this.hashes = parent.hashes.fork();
    }
    this.ctx = {
      happenedBefore: (a, b) => this.causality.opHappenedBefore(a, b),
      idHappenedBefore: (a, b) => this.causality.happenedBefore(a, b),
      position: (op) => this.causality.positionOfOp(op) ?? -1,
      coveredBy: (op) => this.causality.coveredByOp(op),
    };
  }

  /** An empty graph. */
  static empty(): Graph {
    return new Graph();
  }

  /**
   * The graph of a set of ops (any order, duplicates ignored). Inputs that fail the wire schema are
   * quarantined, never folded.
   */
  static fold(ops: Iterable<unknown>): Graph {
    const g = new Graph();
    g.refold(ops);
    return g;
  }

  // -------------------------------------------------------------------------------------------
  // Receiving ops
  // -------------------------------------------------------------------------------------------

  /**
   * Takes ops into the graph (any order; ops already held are ignored). Each op is validated; one
   * whose parents have not all arrived waits (pending) until they do. Returns the ops newly held.
   */
  receive(inputs: Iterable<unknown>): { added: Op[]; refolded: boolean } {
    const fresh: Op[] = [];
    const freshIds = new Set<OpId>();
    for (const input of inputs) {
      const r = parseOp(input);
      if (!r.ok) {
        const id = String((input as { "op-id"?: unknown } | null)?.["op-id"] ?? "(no op-id)");
        if (!this.quarantine.has(id))
          this.quarantine.set(id, { opId: id, code: r.error.code, message: r.error.message });
        continue;
      }
      const id = r.op["op-id"];
      if (this.holdsOp(id) || freshIds.has(id)) continue;
      freshIds.add(id);
      fresh.push(r.op);
    }
    if (fresh.length === 0) return { added: [], refolded: false };
    // Place what can be placed, in the deterministic order of the new ops among themselves.
    const candidates = [...this.pendingOps(), ...fresh];
    const { order } = causalOrderAfter(candidates, (id) => this.causality.has(id));
    for (const op of order) {
      if (!this.causality.canAppend(op)) {
        if (this.parent !== undefined)
          throw new Error("graph: a fork only takes ops that go after everything");
        this.refold([...this.ops(), ...fresh]);
        return { added: fresh, refolded: true };
      }
      this.causality.append(op);
      this.pending.delete(op["op-id"]);
      this.place(op);
    }
    for (const op of candidates) if (!this.causality.has(op["op-id"])) this.pending.set(op["op-id"], op);
    return { added: fresh, refolded: false };
  }

  private *pendingOps(): IterableIterator<Op> {
    yield* this.pending.values();
  }

  /** Re-folds everything from scratch (only a root graph does this). */
  private refold(inputs: Iterable<unknown>): void {
    let valid: Op[] = [];
    for (const input of inputs) {
      if (isWireOp(input)) {
        valid.push(input);
        continue;
      }
      const r = parseOp(input);
      if (r.ok) {
        valid.push(r.op);
        continue;
      }
      const id = String((input as { "op-id"?: unknown } | null)?.["op-id"] ?? "(no op-id)");
      if (!this.quarantine.has(id))
        this.quarantine.set(id, { opId: id, code: r.error.code, message: r.error.message });
    }
    this.reset();
    let sorted = true;
    for (let i = 1; i < valid.length && sorted; i++) sorted = valid[i - 1]!["op-id"] < valid[i]!["op-id"];
    if (!sorted) {
      valid.sort((a, b) => compareIds(a["op-id"], b["op-id"]));
      // Drop duplicates (now adjacent); the first held copy of an op-id is the one kept.
      valid = valid.filter((op, i) => i === 0 || op["op-id"] !== valid[i - 1]!["op-id"]);
    }
    // Ops written by this library have ids greater than their parents', so the id order is usually
    // topological, and then it is the causal order (the smallest topological order): place in one
    // pass, and fall back to Kahn's algorithm at the first op whose parents are not all placed.
    let fast = true;
    for (const op of valid) {
      // In id order every op's id is the greatest yet, so "its parents are placed" is all it takes.
      if (this.causality.append(op, true) < 0) {
        fast = false;
        break;
      }
      this.place(op);
    }
    if (fast) return;
    this.reset();
    const { order, pending } = causalOrder(valid);
    for (const op of order) {
      this.causality.append(op);
      this.place(op);
    }
    for (const op of pending) this.pending.set(op["op-id"], op);
  }

  private reset(): void {
    this.causality = new Causality();
    this.pending = new CowMap();
    this.defs = new CowMap();
    this.names = new CowMap();
    this.nameHistory = new CowMap();
    this.referrers = new CowMap();
    this.graveyard = new CowMap();
    this.rolledBack = new CowMap();
    this.orphans = new CowMap();
    this.hashes = new CowMap();
  }

  /** Applies a placed op to the definitions and settles what it left dangling. */
  private place(op: Op): void {
    const id = op["op-id"];
    if (op.op === "add" || op.op === "rename") {
      const key = `${op.layer}:${op.op === "add" ? op.name : op["new-name"]}`;
      const known = this.nameHistory.get(key) ?? [];
      if (!known.includes(op.def)) this.nameHistory.set(key, [...known, op.def]);
    }
    if (op.op === "add") {
      this.replaceState(op.def, createDefinition(op));
    } else {
      const s = this.defs.mutable(op.def, cloneDefinition);
      if (s === undefined) {
        this.graveyard.mutable(op.def, (l) => [...l])?.push(id);
        this.orphans.set(id, {
          reason: this.addRolledBack(op.def) ? "rolled-back-target" : "missing-target",
        });
        return;
      }
      s.history.push(id);
      if (s.layer !== op.layer) {
        this.orphans.set(id, { reason: "layer-mismatch" });
        return;
      }
      const name = s.name;
      const alive = s.alive;
      const refs = s.body.refs;
      const change = applyToDefinition(s, op, this.ctx);
      if (change !== 0)
        this.afterChange(s.id, { layer: s.layer, name, alive, refs }, s, (change & ~CHANGED_NAME) !== 0);
    }
    this.settle();
  }

  private addRolledBack(def: DefId): boolean {
    return this.rolledBack.has(`op_${def.slice(4)}` as OpId);
  }

  /** Puts a definition's new state in place (undefined: it no longer exists) and updates the indexes. */
  private replaceState(id: DefId, next: DefinitionState | undefined): void {
    const prev = this.defs.get(id);
    const before =
      prev === undefined
        ? undefined
        : { layer: prev.layer, name: prev.name, alive: prev.alive, refs: prev.body.refs };
    if (next === undefined) this.defs.delete(id);
    else this.defs.set(id, next);
    this.afterChange(id, before, next, true);
  }

  private readonly suspects: DefId[] = [];

  private afterChange(
    id: DefId,
    before: Snapshot | undefined,
    after: DefinitionState | undefined,
    contentChanged: boolean,
  ): void {
    const wasAlive = before?.alive === true;
    const isAlive = after?.alive === true;
    // Name index: live definitions only.
    if (wasAlive !== isAlive || (isAlive && before!.name !== after!.name)) {
      const oldKey = wasAlive ? `${before!.layer}:${before!.name}` : undefined;
      const newKey = isAlive ? `${after!.layer}:${after!.name}` : undefined;
      if (oldKey !== undefined) {
        const rest = (this.names.get(oldKey) ?? []).filter((d) => d !== id);
        if (rest.length === 0) this.names.delete(oldKey);
        else this.names.set(oldKey, rest);
      }
      if (newKey !== undefined) this.names.set(newKey, [...(this.names.get(newKey) ?? []), id]);
    }
    // Referrer index.
    const refsChanged = before?.refs !== after?.body.refs;
    if (refsChanged) {
      const oldTargets = before === undefined ? EMPTY : targetsOf(before.refs);
      const newTargets = after === undefined ? EMPTY : targetsOf(after.body.refs);
      for (const t of oldTargets) {
        if (newTargets.has(t)) continue;
        const rest = (this.referrers.get(t) ?? []).filter((d) => d !== id);
        if (rest.length === 0) this.referrers.delete(t);
        else this.referrers.set(t, rest);
      }
      for (const t of newTargets) {
        if (oldTargets.has(t)) continue;
        this.referrers.set(t, [...(this.referrers.get(t) ?? []), id]);
      }
    }
    if (contentChanged) this.invalidate(id);
    // What may now dangle: this definition's references (when it lives and they or its life
    // changed), and references to it (when it stopped living).
    if ((isAlive && (!wasAlive || refsChanged)) || (wasAlive && !isAlive)) this.suspects.push(id);
  }

  /** Resolves every dangling reference by the conflict policy, until none is left. */
  private settle(): void {
    if (this.suspects.length === 0) return;
    while (this.suspects.length > 0) {
      const ids = [...new Set(this.suspects.splice(0))];
      const edges: DanglingEdge[] = [];
      for (const id of ids) edges.push(...this.danglingAround(id));
      if (edges.length === 0) continue;
      edges.sort((a, b) => compareIds(a.source, b.source) || compareIds(a.key, b.key));
      const affected = new Set<DefId>();
      let progress = false;
      for (const edge of edges) {
        const decision = resolveDangling(POLICY, edge, this.ctx);
        const fresh = decision.rollBack.filter((o) => !this.rolledBack.has(o));
        progress ||= fresh.length > 0;
        for (const o of fresh) {
          this.rolledBack.set(o, {
            edge,
            concurrent: decision.concurrent,
            with: decision.rollBack.filter((x) => x !== o),
          });
          const def = this.op(o)?.def;
          if (def !== undefined) affected.add(def);
        }
      }
      // Every decision rolls back an op that is still applied; none left would mean a bug in the
      // policy, and stopping keeps the fold from spinning on it.
      if (!progress) break;
      for (const def of [...affected].sort(compareIds)) this.rebuild(def);
    }
    this.suspects.length = 0;
  }

  /** Dangling edges out of `id` (when it lives) and into it (when it does not). */
  private danglingAround(id: DefId): DanglingEdge[] {
    const out: DanglingEdge[] = [];
    const s = this.defs.get(id);
    if (s?.alive === true) {
      for (const [key, target] of Object.entries(s.body.refs) as [RefKey, DefId][]) {
        const t = this.defs.get(target);
        if (t?.alive === true) continue;
        out.push({
          source: id,
          key,
          target,
          introducer: s.introducers.get(key) ?? s.body.version,
          removes: t?.removes ?? [],
        });
      }
    } else {
      for (const r of this.referrers.get(id) ?? []) {
        const rs = this.defs.get(r);
        if (rs?.alive !== true) continue;
        for (const [key, target] of Object.entries(rs.body.refs) as [RefKey, DefId][]) {
          if (target !== id) continue;
          out.push({
            source: r,
            key,
            target,
            introducer: rs.introducers.get(key) ?? rs.body.version,
            removes: s?.removes ?? [],
          });
        }
      }
    }
    return out;
  }

  /** Replays a definition from its ops that are not rolled back. */
  private rebuild(id: DefId): void {
    const history = this.opsOf(id);
    const ops = history
      .filter((o) => !this.rolledBack.has(o) && !this.orphans.has(o))
      .map((o) => this.op(o)!);
    const next = replayDefinition(ops, this.ctx);
    if (next === undefined) {
      for (const o of ops)
        if (!this.rolledBack.has(o["op-id"])) this.orphans.set(o["op-id"], { reason: "rolled-back-target" });
      this.graveyard.set(id, [...history]);
    } else {
      next.history = [...history];
    }
    this.replaceState(id, next);
  }

  // -------------------------------------------------------------------------------------------
  // Forks
  // -------------------------------------------------------------------------------------------

  /** A fork to try ops on; {@link commit} makes its changes this graph's, {@link discard} drops them. */
  fork(): Graph {
    if (this.parent !== undefined) throw new Error("graph: forks do not fork");
    return new Graph(this);
  }

  /** Makes a fork's changes its parent's. The parent must not have changed since the fork. */
  commit(): void {
    if (this.parent === undefined) throw new Error("graph: only a fork commits");
    for (const m of [
      this.pending,
      this.quarantine,
      this.defs,
      this.names,
      this.nameHistory,
      this.referrers,
      this.graveyard,
      this.rolledBack,
      this.orphans,
      this.hashes,
    ] as CowMap<unknown, unknown>[]) {
      m.commit();
    }
    this.causalMark = undefined;
  }

  /** Drops a fork's changes (its ops leave the shared causal order). */
  discard(): void {
    if (this.parent === undefined) throw new Error("graph: only a fork is discarded");
    if (this.causalMark !== undefined) this.causality.rollback(this.causalMark);
    this.causalMark = undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Reading
  // -------------------------------------------------------------------------------------------

  /** A definition's state by identity (live, removed or shadowed); never mutate it. */
  definition(id: DefId): DefinitionState | undefined {
    return this.defs.get(id);
  }

  /** Every definition that exists (live or removed). */
  *definitions(): IterableIterator<DefinitionState> {
    yield* this.defs.values();
  }

  /** The live definition that shows under `layer.name` (the name contest's winner). */
  lookup(layer: Layer, name: string): DefId | undefined {
    const claimants = this.names.get(`${layer}:${name}`);
    if (claimants === undefined || claimants.length === 0) return undefined;
    if (claimants.length === 1) return claimants[0];
    let best: DefinitionState | undefined;
    for (const d of claimants) {
      const s = this.defs.get(d)!;
      if (best === undefined || s.nameWinner["op-id"] > best.nameWinner["op-id"]) best = s;
    }
    return best?.id;
  }

  /** The live definitions named `layer.name` (more than one: a name conflict). */
  claimants(layer: Layer, name: string): readonly DefId[] {
    return this.names.get(`${layer}:${name}`) ?? [];
  }

  /** True when `id` is live and shows under its name. */
  isVisible(id: DefId): boolean {
    const s = this.defs.get(id);
    return s?.alive === true && this.lookup(s.layer, s.name) === id;
  }

  /** Every definition that ever claimed `layer.name` (by add or rename), live or not. */
  everNamed(layer: Layer, name: string): readonly DefId[] {
    return this.nameHistory.get(`${layer}:${name}`) ?? [];
  }

  /** The live definitions whose text references `id`. */
  referrersOf(id: DefId): DefId[] {
    return (this.referrers.get(id) ?? []).filter((d) => this.defs.get(d)?.alive === true);
  }

  /** A held op by id. */
  op(id: OpId): Op | undefined {
    return this.causality.op(id) ?? this.pending.get(id);
  }

  private holdsOp(id: OpId): boolean {
    return this.causality.has(id) || this.pending.has(id);
  }

  /** True when the op is held (valid, or quarantined). */
  holds(id: string): boolean {
    return this.holdsOp(id as OpId) || this.quarantine.has(id);
  }

  /** Every valid held op: the placed ones in causal order, then the pending ones. */
  *ops(): IterableIterator<Op> {
    yield* this.causality.ops;
    yield* this.pending.values();
  }

  /** The placed ops that target `id`, in causal order (applied, lost, rolled back or orphaned). */
  opsOf(id: DefId): readonly OpId[] {
    return this.defs.get(id)?.history ?? this.graveyard.get(id) ?? [];
  }

  /** The op-ids no placed op has as a parent: what a new op's parent-ops are. */
  heads(): OpId[] {
    return this.causality.headIds();
  }

  /** The greatest placed op-id. */
  maxOpId(): OpId | undefined {
    return this.causality.maxId();
  }

  /** True when `a` is an ancestor of `b`. */
  happenedBefore(a: OpId, b: OpId): boolean {
    return this.causality.happenedBefore(a, b);
  }

  /** Position of a placed op in the causal order. */
  positionOf(id: OpId): number | undefined {
    return this.causality.positionOf(id);
  }

  /**
   * The body a definition had just before `op` was applied to it: a replay of the ops applied to it
   * before that one (what `revert` restores). Undefined when `op` is not applied to it.
   */
  bodyBefore(def: DefId, op: OpId): Body | undefined {
    const s = this.defs.get(def);
    if (s === undefined) return undefined;
    const at = s.ops.findIndex((o) => o["op-id"] === op);
    if (at <= 0) return undefined;
    return replayDefinition(s.ops.slice(0, at), this.ctx)?.body;
  }

  /** True when the op was rolled back by the conflict policy. */
  isRolledBack(id: OpId): boolean {
    return this.rolledBack.has(id);
  }

  /** Why a placed op has no effect because its target does not exist, if so. */
  orphanReason(id: OpId): Orphan["reason"] | undefined {
    return this.orphans.get(id)?.reason;
  }

  /** A cached content hash (undefined: not computed since the definition or a dependency changed). */
  cachedHash(id: DefId): ContentHash | undefined {
    return this.hashes.get(id);
  }

  /** Stores computed content hashes. */
  storeHashes(hashes: ReadonlyMap<string, ContentHash>): void {
    for (const [id, h] of hashes) this.hashes.set(id as DefId, h);
  }

  /**
   * Forgets the hash of `id` and of everything that references it, transitively. Stops at a live
   * definition without a hash: its dependents have none either (a hash is only ever computed
   * together with its dependencies'). A removed definition never has a hash while its dependents
   * may (they hash it as unresolved), so the walk goes on through it.
   */
  private invalidate(id: DefId): void {
    if (this.hashes.isEmpty()) return;
    const stack = [id];
    const seen = new Set<DefId>();
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (seen.has(d)) continue;
      seen.add(d);
      if (d !== id && !this.hashes.has(d) && this.defs.get(d)?.alive === true) continue;
      this.hashes.delete(d);
      for (const r of this.referrers.get(d) ?? []) stack.push(r);
    }
  }

  /** Where the graph stands. */
  status(): GraphStatus {
    let live = 0;
    for (const s of this.defs.values()) if (s.alive) live++;
    return {
      ops: this.causality.size + this.pending.size,
      pending: this.pending.size,
      quarantined: [...this.quarantine.values()].sort((a, b) => compareIds(a.opId, b.opId)),
      definitions: live,
      heads: this.heads(),
      conflicts: this.conflicts().length,
    };
  }

  /** A person-readable name for a definition: `slot.todos`, with its identity when it is not shown under it. */
  label(id: DefId): string {
    const s = this.defs.get(id);
    if (s === undefined) return id;
    const q = `${s.layer}.${s.name}`;
    if (!s.alive) return `${q} (removed, ${id})`;
    return this.lookup(s.layer, s.name) === id ? q : `${q} (${id})`;
  }

  /**
   * Every conflict record, sorted by id. With `only`, the records about those definitions (name
   * contests they are in, their registers) and every rollback and orphan, which is what the write
   * gate compares before and after a write without walking the whole graph.
   */
  conflicts(only?: ReadonlySet<DefId>): Conflict[] {
    const out: Conflict[] = [];
    const label = (id: DefId) => this.label(id);
    // Name contests.
    const contests =
      only === undefined
        ? this.names.entries()
        : [...only].flatMap((d) => {
            const s = this.defs.get(d);
            if (s === undefined || !s.alive) return [];
            const key = `${s.layer}:${s.name}`;
            return [[key, this.names.get(key) ?? []] as [string, readonly DefId[]]];
          });
    const doneKeys = new Set<string>();
    for (const [key, claimants] of contests) {
      if (claimants.length < 2 || doneKeys.has(key)) continue;
      doneKeys.add(key);
      const [layer, name] = key.split(":") as [Layer, string];
      const holder = this.lookup(layer, name)!;
      const hs = this.defs.get(holder)!;
      for (const d of claimants) {
        if (d === holder) continue;
        const s = this.defs.get(d)!;
        out.push({
          id: `name-taken:${s.nameWinner["op-id"]}`,
          kind: "name-taken",
          ops: [s.nameWinner["op-id"], hs.nameWinner["op-id"]],
          definitions: [d, holder],
          reason: `${d} and ${holder} both want the name ${layer}.${name} (concurrent ${s.nameWinner.op} and ${hs.nameWinner.op})`,
          decision: `${layer}.${name} shows ${holder} (its name claim ${hs.nameWinner["op-id"]} has the greater op-id); ${d} is kept, reachable by its identity`,
          retry: `rename ${d} to a free name (kumiki rename ${d} <new-name>), or remove it`,
        });
      }
    }
    const states = only === undefined ? this.defs.values() : [...only].flatMap((d) => this.defs.get(d) ?? []);
    for (const s of states) {
      const here = label(s.id);
      // Concurrent replaces: all but the winner lost.
      if (s.textMax.length > 1) {
        for (const w of s.textMax) {
          if (w === s.textWinner) continue;
          out.push({
            id: `replace-lost:${w["op-id"]}`,
            kind: "replace-lost",
            ops: [w["op-id"], s.textWinner["op-id"]],
            definitions: [s.id],
            reason: `${w.op} ${w["op-id"]} and ${s.textWinner.op} ${s.textWinner["op-id"]} set the text of ${here} concurrently`,
            decision: `kept the text of ${s.textWinner["op-id"]} (newer ts, then greater op-id); the other text is in the history`,
            retry: `view ${here}, then replace it with the text you want`,
          });
        }
      }
      if (s.nameMax.length > 1) {
        for (const w of s.nameMax) {
          if (w === s.nameWinner) continue;
          out.push({
            id: `rename-lost:${w["op-id"]}`,
            kind: "rename-lost",
            ops: [w["op-id"], s.nameWinner["op-id"]],
            definitions: [s.id],
            reason: `${w["op-id"]} (→ ${nameOf(w)}) and ${s.nameWinner["op-id"]} (→ ${nameOf(s.nameWinner)}) renamed ${s.id} concurrently`,
            decision: `the name is ${s.name} (newer ts, then greater op-id)`,
            retry: `rename ${here} again if ${nameOf(w)} is the name you want`,
          });
        }
      }
      for (const [opId, f] of s.failures) out.push(failureConflict(s, here, opId, f));
      if (s.alive && s.removes.length > 0) {
        for (const r of s.removes) {
          const against = s.tags.filter((t) => this.causality.concurrent(t["op-id"], r["op-id"]));
          if (against.length === 0) continue;
          out.push({
            id: `remove-overridden:${r["op-id"]}`,
            kind: "remove-overridden",
            ops: [r["op-id"], ...against.map((t) => t["op-id"])],
            definitions: [s.id],
            reason: `remove ${r["op-id"]} of ${here} was concurrent with ${against.map((t) => `${t.op} ${t["op-id"]}`).join(", ")}, which it had not seen`,
            decision: `${here} is kept (a write concurrent with a remove wins)`,
            retry: `view ${here}; remove it again if it should go`,
          });
        }
      }
    }
    for (const [opId, rb] of this.rolledBack.entries()) {
      const op = this.op(opId);
      const src = label(rb.edge.source);
      const dst = label(rb.edge.target);
      out.push({
        id: `rolled-back:${opId}`,
        kind: "rolled-back",
        ops: [opId, ...rb.with],
        definitions: [rb.edge.source, rb.edge.target],
        reason: rb.concurrent
          ? `${src} references ${dst} (${rb.edge.key}) and ${dst} was removed concurrently: the reference would dangle`
          : `${src} references ${dst} (${rb.edge.key}), which is gone: the reference would dangle`,
        decision: `conflict policy strict: rolled back ${op?.op ?? "op"} ${opId}${rb.with.length > 0 ? ` together with ${rb.with.join(", ")}` : ""}`,
        retry:
          op?.op === "remove"
            ? `${dst} is back; remove the references to it first (kumiki refs ${dst}), then remove it again`
            : `re-issue your ${op?.op ?? "op"} on the latest graph (kumiki view ${src}); the ops it conflicted with are listed here`,
      });
    }
    for (const [opId, o] of this.orphans.entries()) {
      const op = this.op(opId);
      out.push({
        id: `orphaned:${opId}`,
        kind: "orphaned",
        ops: [opId],
        definitions: op === undefined ? [] : [op.def],
        reason:
          o.reason === "layer-mismatch"
            ? `${op?.op ?? "op"} ${opId} names layer ${op?.layer} but ${op?.def} is of another layer`
            : o.reason === "rolled-back-target"
              ? `${op?.op ?? "op"} ${opId} targets ${op?.def}, whose add was rolled back`
              : `${op?.op ?? "op"} ${opId} targets ${op?.def}, which the graph does not hold`,
        decision: "the op has no effect",
        retry: `re-issue the ${op?.op ?? "op"} against a definition that exists (kumiki list)`,
      });
    }
    return out.sort((a, b) => compareIds(a.id, b.id));
  }
}

function failureConflict(s: DefinitionState, here: string, opId: OpId, f: ApplyFailure): Conflict {
  if (f.kind === "edit-rebase-failed") {
    return {
      id: `edit-rebase-failed:${opId}`,
      kind: "edit-rebase-failed",
      ops: [opId, f.onto],
      definitions: [s.id],
      reason: `edit ${opId} of ${here} was written against another version and ${describePatchFailure(f.failure)} in the text of ${f.onto}`,
      decision: "the edit is not applied; the text stays as merged without it",
      retry: `view ${here} and issue the edit again against its current text`,
    };
  }
  return {
    id: `link-site-missing:${opId}`,
    kind: "link-site-missing",
    ops: [opId, f.onto],
    definitions: [s.id],
    reason: `link ${opId} binds ${f.ref} in ${here}, but its text (version ${f.onto}) no longer names it`,
    decision: "the link is not applied",
    retry: `view ${here}; link again once its text references ${f.ref}`,
  };
}

interface Snapshot {
  readonly layer: Layer;
  readonly name: string;
  readonly alive: boolean;
  readonly refs: Body["refs"];
}

const EMPTY: ReadonlySet<DefId> = new Set();

function targetsOf(refs: Body["refs"]): Set<DefId> {
  return new Set(Object.values(refs));
}

/**
 * The causal order of ops that are to go after everything already placed (`placed`): Kahn's
 * algorithm over the new ops, smallest op-id first; parents already placed count as done.
 */
function causalOrderAfter(ops: readonly Op[], placed: (id: OpId) => boolean): { order: Op[] } {
  const byId = new Map<OpId, Op>(ops.map((o) => [o["op-id"], o]));
  const waiting = new Map<OpId, number>();
  const children = new Map<OpId, Op[]>();
  for (const op of ops) {
    let n = 0;
    let blocked = false;
    for (const p of op["parent-ops"]) {
      if (placed(p)) continue;
      if (!byId.has(p)) {
        blocked = true;
        break;
      }
      n++;
      const l = children.get(p);
      if (l === undefined) children.set(p, [op]);
      else l.push(op);
    }
    waiting.set(op["op-id"], blocked ? Number.POSITIVE_INFINITY : n);
  }
  const ready = new MinHeap<Op>((a, b) => compareIds(a["op-id"], b["op-id"]));
  for (const o of ops) if (waiting.get(o["op-id"]) === 0) ready.push(o);
  const order: Op[] = [];
  for (let op = ready.pop(); op !== undefined; op = ready.pop()) {
    order.push(op);
    for (const c of children.get(op["op-id"]) ?? []) {
      const left = waiting.get(c["op-id"])! - 1;
      waiting.set(c["op-id"], left);
      if (left === 0) ready.push(c);
    }
  }
  return { order };
}
