/**
 * The fold: the graph as a pure function of the set of ops (placed in causal order through the
 * merge rules of ops/merge.ts), forkable in O(1) for the write gate.
 */
import type { ContentHash } from "../lang/hash.js";
import type { Layer } from "../lang/layers.js";
import { Causality, type CausalParts, causalOrder, compareIds } from "../ops/causality.js";
import { appendToList } from "../ops/cow-map.js";
import { matchesLockPattern } from "../ops/glob.js";
import type { DefId, OpId } from "../ops/ids.js";
import {
  applyToDefinition,
  type Body,
  CHANGED_NAME,
  type ConflictPolicy,
  cloneDefinition,
  createDefinition,
  type DanglingEdge,
  type DefinitionState,
  type MergeContext,
  replayDefinition,
  resolveDangling,
} from "../ops/merge.js";
import {
  CONFIG_DEFAULTS,
  type ConfigOp,
  type ControlOp,
  isControlOp,
  isWireOp,
  type LogOp,
  type Op,
  parseOp,
} from "../ops/op.js";
import { conflictRecords } from "./conflicts.js";
import { liveLocks, lockViolation, placeControl, policyOpOf } from "./control-state.js";
import { danglingAround } from "./dangling.js";
import {
  decodeDefinition,
  encodeFold,
  type FoldSnapshot,
  type FoldSnapshotHead,
  headIndexes,
  unpackCausal,
} from "./fold-snapshot.js";
import { commitFoldState, dropFoldState, type FoldState, forkFoldState, newFoldState } from "./fold-state.js";
import type { Conflict, LockEntry, Orphan, Quarantined } from "./records.js";

export type { Body, DefinitionState } from "../ops/merge.js";

export type {
  Conflict,
  ConflictKind,
  Kept,
  LockEntry,
  Orphan,
  Quarantined,
  Rollback,
} from "./records.js";

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
  /** The conflict policy in force. */
  readonly policy: ConflictPolicy;
  /** Live ownership locks. */
  readonly locks: number;
}

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
  private causality: Causality<LogOp>;
  /** Everything the fold keeps but the causal order, in copy-on-write maps (fold-state.ts). */
  private st: FoldState;
  private readonly parent: Graph | undefined;
  private causalMark: ReturnType<Causality["mark"]> | undefined;
  private readonly ctx: MergeContext;
  /** What a graph taken up from a snapshot ({@link fromSnapshot}) knows of its unread rows; shared with forks. */
  private restored: Restored | undefined;

  private constructor(parent?: Graph) {
    this.parent = parent;
    if (parent === undefined) {
      this.causality = new Causality();
      this.st = newFoldState();
    } else {
      this.causality = parent.causality;
      this.causalMark = parent.causality.mark();
      this.st = forkFoldState(parent.st);
      this.restored = parent.restored;
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
   * quarantined, never folded. `wireChecked`: how many of the first inputs are known to pass it
   * (`isWireOp`, checked when they were stored: see `ReadableOpLog.wireChecked`), taken without
   * checking them again — at 20,000 definitions checking every op is a tenth of a read's CPU.
   */
  static fold(ops: Iterable<unknown>, options: { readonly wireChecked?: number } = {}): Graph {
    const g = new Graph();
    g.refold(ops, options.wireChecked ?? 0);
    return g;
  }

  /**
   * The graph a fold snapshot ({@link snapshot}) keeps, read on demand: each definition's row is
   * parsed, and its ops placed, when the graph first looks at that definition (a walk over every
   * definition reads them all). Reads as the fold of the same ops does, and takes further ops the
   * same way. Throws when `snapshot`'s head is not of that shape (a damaged snapshot is a bug of
   * whoever kept it; check it before).
   */
  static fromSnapshot(snapshot: FoldSnapshot): Graph {
    const { head } = snapshot;
    const causal = head?.v === 2 ? unpackCausal(head.causal) : undefined;
    if (causal === undefined || !snapshotHeadFits(head, causal, snapshot.rows))
      throw new Error("graph: a fold snapshot whose head does not fit");
    const g = new Graph();
    const { ids, names, nameHistory, referrers } = headIndexes(head);
    const rowOf = new Map<DefId, number>();
    for (let i = 0; i < ids.length; i++) rowOf.set(ids[i]!, i);
    const restored: Restored = { head, rowOf, bodies: new WeakSet(), records: new Set(head.records) };
    g.restored = restored;
    g.causality = Causality.restore(causal, (position) => {
      g.st.defs.get(ids[head.owner[position]!]!);
    });
    g.st.defs.deferred(ids, (id) => {
      const i = rowOf.get(id)!;
      const s = decodeDefinition(id, head.defs[i]![1], snapshot.row(i), g.causality);
      restored.bodies.add(s.body);
      return s;
    });
    for (const [k, v] of names) g.st.names.set(k, v);
    for (const [k, v] of nameHistory) g.st.nameHistory.set(k, v);
    for (const [k, v] of referrers) g.st.referrers.set(k, v);
    return g;
  }

  /**
   * This graph as a fold snapshot ({@link fromSnapshot} takes it back): its head, and a row of JSON
   * text per definition. Undefined for a fork, and for a graph holding what a snapshot does not
   * keep (an op pending or quarantined, a rollback, an orphan, a kept dangling edge, a control op).
   */
  snapshot(): { head: FoldSnapshotHead; rows: string[] } | undefined {
    if (this.parent !== undefined) return undefined;
    return encodeFold(this.st, this.causality);
  }

  // -------------------------------------------------------------------------------------------
  // Receiving ops
  // -------------------------------------------------------------------------------------------

  /**
   * Takes ops into the graph (any order; ops already held are ignored). Each op is validated; one
   * whose parents have not all arrived waits (pending) until they do. Returns the ops newly held.
   */
  receive(inputs: Iterable<unknown>): { added: LogOp[]; refolded: boolean } {
    const fresh: LogOp[] = [];
    const freshIds = new Set<OpId>();
    for (const input of inputs) {
      const r = parseOp(input);
      if (!r.ok) {
        const id = String((input as { "op-id"?: unknown } | null)?.["op-id"] ?? "(no op-id)");
        if (!this.st.quarantine.has(id))
          this.st.quarantine.set(id, { opId: id, code: r.error.code, message: r.error.message });
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
    const { order } = causalOrder(candidates, (id) => this.causality.has(id));
    // What was placed, by id: asking the causal order whether an op older than its last is placed
    // fills its index of every op-id (18 ms at 100,000 ops, for a write that receives a few).
    const placedNow = new Set<OpId>();
    for (const op of order) {
      if (!this.causality.canAppend(op)) {
        if (this.parent !== undefined)
          throw new Error("graph: a fork only takes ops that go after everything");
        this.refold([...this.ops(), ...fresh]);
        return { added: fresh, refolded: true };
      }
      this.causality.append(op);
      this.st.pending.delete(op["op-id"]);
      this.place(op);
      placedNow.add(op["op-id"]);
    }
    for (const op of candidates) if (!placedNow.has(op["op-id"])) this.st.pending.set(op["op-id"], op);
    return { added: fresh, refolded: false };
  }

  private *pendingOps(): IterableIterator<LogOp> {
    yield* this.st.pending.values();
  }

  /** Re-folds everything from scratch (only a root graph does this). */
  private refold(inputs: Iterable<unknown>, wireChecked = 0): void {
    let valid: LogOp[] = [];
    let at = 0;
    for (const input of inputs) {
      if (at++ < wireChecked || isWireOp(input)) {
        valid.push(input as LogOp);
        continue;
      }
      const r = parseOp(input);
      if (r.ok) {
        valid.push(r.op);
        continue;
      }
      const id = String((input as { "op-id"?: unknown } | null)?.["op-id"] ?? "(no op-id)");
      if (!this.st.quarantine.has(id))
        this.st.quarantine.set(id, { opId: id, code: r.error.code, message: r.error.message });
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
    for (const op of pending) this.st.pending.set(op["op-id"], op);
  }

  private reset(): void {
    // A fold from scratch reads nothing from a snapshot any more.
    this.restored = undefined;
    this.causality = new Causality();
    // Quarantined inputs stay: they are what was held but never folded, whatever is folded next.
    this.st = newFoldState(this.st.quarantine);
  }

  /** Applies a placed op to the definitions and settles what it left dangling. */
  private place(op: LogOp): void {
    const id = op["op-id"];
    if (isControlOp(op)) {
      placeControl(this.st, this.causality, op);
      return;
    }
    const locked = this.st.control.has("locks") ? lockViolation(this.st, this.causality, op) : undefined;
    if (op.op === "add" || op.op === "rename") {
      const key = `${op.layer}:${op.op === "add" ? op.name : op["new-name"]}`;
      const known = this.st.nameHistory.get(key) ?? [];
      if (!known.includes(op.def)) this.st.nameHistory.set(key, [...known, op.def]);
    }
    if (op.op === "add") {
      if (locked !== undefined) {
        this.st.rolledBack.set(id, { cause: "locked", ...locked });
        this.st.graveyard.set(op.def, [id]);
        return;
      }
      this.replaceState(op.def, createDefinition(op));
    } else {
      const s = this.st.defs.mutable(op.def, cloneDefinition);
      if (s === undefined) {
        this.st.graveyard.mutable(op.def, (l) => [...l])?.push(id);
        this.st.orphans.set(id, {
          reason: this.addRolledBack(op.def) ? "rolled-back-target" : "missing-target",
        });
        return;
      }
      s.history.push(id);
      if (s.layer !== op.layer) {
        this.st.orphans.set(id, { reason: "layer-mismatch" });
        return;
      }
      if (locked !== undefined) {
        this.st.rolledBack.set(id, { cause: "locked", ...locked });
        return;
      }
      const name = s.name;
      const alive = s.alive;
      const refs = s.body.refs;
      const change = applyToDefinition(s, op, this.ctx);
      if (change !== 0)
        this.afterChange(s.def, { layer: s.layer, name, alive, refs }, s, (change & ~CHANGED_NAME) !== 0);
      // A write to a definition whose reference a forced remove left dangling: the remove may not
      // have seen it, so the edge is decided again.
      if (op.op !== "remove" && s.alive && !this.st.kept.isEmpty()) {
        for (const key of Object.keys(s.body.refs)) {
          if (this.st.kept.get(`${s.def} ${key}`)?.reason === "forced") {
            this.suspects.push(s.def);
            break;
          }
        }
      }
    }
    this.settle();
  }

  /** The conflict policy in force now (at the end of the causal order so far). */
  policy(): ConflictPolicy {
    return this.policyOp()?.value ?? CONFIG_DEFAULTS["conflict-policy"];
  }

  /** The config op that set the policy in force, if any did. */
  policyOp(): ConfigOp | undefined {
    return policyOpOf(this.st);
  }

  /**
   * The live ownership locks, sorted by pattern then agent: each pattern a lock op gave an agent,
   * unless an unlock by then (causally after it) lifted it (control-state.ts).
   */
  locks(): LockEntry[] {
    return liveLocks(this.st, this.causality);
  }

  /** The live locks that cover `layer.name`. */
  locksOn(layer: string, name: string): LockEntry[] {
    if (!this.st.control.has("locks")) return [];
    return this.locks().filter((l) => matchesLockPattern(l.pattern, layer, name));
  }

  /** Every control op placed (config, lock, unlock), in causal order. */
  controlOps(): ControlOp[] {
    const out: ControlOp[] = [];
    for (const op of this.causality.ops) if (isControlOp(op)) out.push(op);
    return out;
  }

  private addRolledBack(def: DefId): boolean {
    return this.st.rolledBack.has(`op_${def.slice(4)}` as OpId);
  }

  /** Puts a definition's new state in place (undefined: it no longer exists) and updates the indexes. */
  private replaceState(id: DefId, next: DefinitionState | undefined): void {
    const prev = this.st.defs.get(id);
    const before =
      prev === undefined
        ? undefined
        : { layer: prev.layer, name: prev.name, alive: prev.alive, refs: prev.body.refs };
    if (next === undefined) this.st.defs.delete(id);
    else this.st.defs.set(id, next);
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
        const rest = (this.st.names.get(oldKey) ?? []).filter((d) => d !== id);
        if (rest.length === 0) this.st.names.delete(oldKey);
        else this.st.names.set(oldKey, rest);
      }
      if (newKey !== undefined) this.st.names.set(newKey, [...(this.st.names.get(newKey) ?? []), id]);
    }
    // Referrer index.
    const refsChanged = before?.refs !== after?.body.refs;
    if (refsChanged) {
      const oldTargets = before === undefined ? EMPTY : targetsOf(before.refs);
      const newTargets = after === undefined ? EMPTY : targetsOf(after.body.refs);
      for (const t of oldTargets) {
        if (newTargets.has(t)) continue;
        const rest = (this.st.referrers.get(t) ?? []).filter((d) => d !== id);
        if (rest.length === 0) this.st.referrers.delete(t);
        else this.st.referrers.set(t, rest);
      }
      for (const t of newTargets) {
        if (oldTargets.has(t)) continue;
        // In place where no fork can see the list: copying it for each new referrer made a fold of
        // k definitions that reference one type O(k²) (20,000 slots of one type: 4.8 s).
        appendToList(this.st.referrers, t, id);
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
      for (const id of ids) edges.push(...danglingAround(this.st, id));
      if (edges.length === 0) continue;
      edges.sort((a, b) => compareIds(a.source, b.source) || compareIds(a.key, b.key));
      const affected = new Set<DefId>();
      let progress = false;
      const policy = this.policy();
      for (const edge of edges) {
        const decision = resolveDangling(policy, edge, this.ctx);
        if (decision.kept !== undefined) {
          this.st.kept.set(`${edge.source} ${edge.key}`, {
            edge,
            concurrent: decision.concurrent,
            reason: decision.kept,
            policy,
          });
          continue;
        }
        const fresh = decision.rollBack.filter((o) => !this.st.rolledBack.has(o));
        progress ||= fresh.length > 0;
        for (const o of fresh) {
          this.st.rolledBack.set(o, {
            cause: "dangling",
            edge,
            concurrent: decision.concurrent,
            with: decision.rollBack.filter((x) => x !== o),
            policy,
          });
          const def = this.defOp(o)?.def;
          if (def !== undefined) affected.add(def);
        }
      }
      // Every decision rolls back an op that is still applied, or keeps the edge; nothing rolled
      // back means every edge left is kept, and stopping keeps the fold from spinning on it.
      if (!progress) break;
      for (const def of [...affected].sort(compareIds)) this.rebuild(def);
    }
    this.suspects.length = 0;
  }

  /** Replays a definition from its ops that are not rolled back. */
  private rebuild(id: DefId): void {
    const history = this.opsOf(id);
    const ops = history
      .filter((o) => !this.st.rolledBack.has(o) && !this.st.orphans.has(o))
      .map((o) => this.defOp(o)!);
    const next = replayDefinition(ops, this.ctx);
    if (next === undefined) {
      for (const o of ops)
        if (!this.st.rolledBack.has(o["op-id"]))
          this.st.orphans.set(o["op-id"], { reason: "rolled-back-target" });
      this.st.graveyard.set(id, [...history]);
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
    commitFoldState(this.st);
    this.causalMark = undefined;
  }

  /** Drops a fork's changes (its ops leave the shared causal order). */
  discard(): void {
    if (this.parent === undefined) throw new Error("graph: only a fork is discarded");
    if (this.causalMark !== undefined) this.causality.rollback(this.causalMark);
    this.causalMark = undefined;
    dropFoldState(this.st);
  }

  /**
   * This graph as it was when `heads` were its heads, as a fork to read and then {@link discard}:
   * its definitions, names, referrers and content hashes are that state's; its causal order
   * (`heads`, `ops`, positions) stays this graph's. Made without folding the past again — what it
   * costs is replaying the definitions the later ops target — and so only when those ops changed
   * nothing else: they come after every op of that state in the causal order, none is a control
   * op, and no op of the graph is rolled back, orphaned, pending or kept dangling. Undefined
   * otherwise (and for a fork, or heads not placed): fold the past instead (`graphAt`).
   */
  asOf(heads: readonly string[]): Graph | undefined {
    const later = this.opsAfterState(heads);
    if (later === undefined) return undefined;
    const past = this.fork();
    // Every placed op is of that state or later (nothing is pending).
    const laterIds = new Set<string>(later.map((op) => op["op-id"]));
    const before = (id: OpId) => !laterIds.has(id);
    for (const def of new Set(later.map((op) => (op as Op).def))) {
      const s = this.st.defs.get(def);
      // Not here: a write being tried on a fork of this graph adds it; the past lacks it too.
      if (s === undefined) continue;
      const ops = s.ops.filter((o) => before(o["op-id"]));
      const state = replayDefinition(ops, this.ctx);
      if (state !== undefined) state.history = s.history.filter(before);
      past.replaceState(def, state);
    }
    past.forgetClaims(later, before);
    past.undoneDefs = new Set(later.map((op) => (op as Op).def));
    // The state had no dangling reference (the graph keeps none, and none was rolled back): a
    // replay that shows one is not that state.
    const suspects = [...new Set(past.suspects.splice(0))];
    if (suspects.some((id) => danglingAround(past.st, id).length > 0)) {
      past.discard();
      return undefined;
    }
    return past;
  }

  /**
   * For a graph {@link asOf} made: the definitions the ops it undid target — every other
   * definition's state, and who shows under every other name, is the present graph's. Undefined
   * for any other graph.
   */
  get undone(): ReadonlySet<DefId> | undefined {
    return this.undoneDefs;
  }
  private undoneDefs: ReadonlySet<DefId> | undefined;

  /** The ops placed after the state whose heads are `heads`, when {@link asOf} can undo them. */
  private opsAfterState(heads: readonly string[]): LogOp[] | undefined {
    if (this.parent !== undefined || heads.length === 0) return undefined;
    const st = this.st;
    if (!(st.pending.isEmpty() && st.rolledBack.isEmpty() && st.orphans.isEmpty() && st.kept.isEmpty()))
      return undefined;
    const held = this.heldBy(heads);
    if (held === undefined) return undefined;
    // Only a prefix of the causal order: this graph's fold went through that state, so what it
    // holds now (no record of a rollback or of an edge kept dangling) held then. A state of ops a
    // later one sits among (a peer's, concurrent) was folded in another order, whose decisions
    // (a reference found dangling, an op rolled back) this fold may never have made.
    let length = 0;
    while (length < held.length && held[length] === 1) length++;
    for (let i = length; i < held.length; i++) if (held[i] === 1) return undefined;
    // Only those ops read (a graph taken up from a snapshot reads no other row for them).
    const later = this.causality.opsFrom(length);
    return later.some(isControlOp) ? undefined : later;
  }

  /**
   * The placed ops of the state whose heads are `heads` — those ops and their ancestors — in
   * causal order (what `graphAt` folds); undefined when one of them is not placed.
   */
  opsAt(heads: readonly string[]): LogOp[] | undefined {
    const held = this.heldBy(heads);
    return held === undefined ? undefined : this.causality.ops.filter((_, i) => held[i] === 1);
  }

  /** By position, 1 for the ops of the state whose heads are `heads`; undefined when one is not placed. */
  private heldBy(heads: readonly string[]): Uint8Array | undefined {
    const positions: number[] = [];
    for (const h of heads) {
      const at = this.causality.recentPositionOf(h as OpId);
      if (at === undefined) return undefined;
      positions.push(at);
    }
    return this.causality.ancestry(positions);
  }

  /** Takes back from the name history what `later` ops claimed and no op `before` had claimed. */
  private forgetClaims(later: readonly LogOp[], before: (id: OpId) => boolean): void {
    for (const op of later) {
      if (op.op !== "add" && op.op !== "rename") continue;
      const name = op.op === "add" ? op.name : op["new-name"];
      const key = `${op.layer}:${name}`;
      const claimedBefore = this.opsOf(op.def).some((id) => {
        const o = this.defOp(id);
        return (
          before(id) && (o?.op === "add" ? o.name : o?.op === "rename" ? o["new-name"] : undefined) === name
        );
      });
      if (claimedBefore) continue;
      const rest = (this.st.nameHistory.get(key) ?? []).filter((d) => d !== op.def);
      if (rest.length === 0) this.st.nameHistory.delete(key);
      else this.st.nameHistory.set(key, rest);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Reading
  // -------------------------------------------------------------------------------------------

  /** A definition's state by identity (live, removed or shadowed); never mutate it. */
  definition(id: DefId): DefinitionState | undefined {
    return this.st.defs.get(id);
  }

  /** Every definition that exists (live or removed). */
  definitions(): IterableIterator<DefinitionState> {
    return this.st.defs.values();
  }

  /**
   * Every definition's identity, layer, name and life, as {@link definitions} gives them but
   * without reading a restored graph's unread rows (`state`: the definition's state, when read).
   */
  summaries(): DefinitionSummary[] {
    const r = this.restored;
    const out: DefinitionSummary[] = [];
    this.st.defs.peekEach((id, s) => {
      if (s !== undefined) out.push({ def: s.def, layer: s.layer, name: s.name, alive: s.alive, state: s });
      else {
        const [, layer, name, alive] = r!.head.defs[r!.rowOf.get(id)!]!;
        out.push({ def: id, layer, name, alive });
      }
    });
    return out;
  }

  /**
   * Whether `s` (a state of this graph's) holds its text as the snapshot this graph was taken up
   * from kept it: no op changed its text since (a change makes a new body). False for a graph not
   * taken up from one.
   */
  isAsRestored(s: DefinitionState): boolean {
    return this.restored?.bodies.has(s.body) === true;
  }

  /** The live definition that shows under `layer.name` (the name contest's winner). */
  lookup(layer: Layer, name: string): DefId | undefined {
    const claimants = this.st.names.get(`${layer}:${name}`);
    if (claimants === undefined || claimants.length === 0) return undefined;
    if (claimants.length === 1) return claimants[0];
    let best: DefinitionState | undefined;
    for (const d of claimants) {
      const s = this.st.defs.get(d)!;
      if (best === undefined || s.nameWinner["op-id"] > best.nameWinner["op-id"]) best = s;
    }
    return best?.def;
  }

  /** The live definitions named `layer.name` (more than one: a name conflict). */
  claimants(layer: Layer, name: string): readonly DefId[] {
    return this.st.names.get(`${layer}:${name}`) ?? [];
  }

  /**
   * The live definitions that do not show under their name (each name contest's losers): what
   * {@link isVisible} answers false for among the live ones, found for all at once by one pass
   * over the name index: asking {@link isVisible} of each of 5,000 definitions (a write's resume
   * of the kept check) took 15–43 ms in a process of its own, building and hashing each name key;
   * this 4–11.
   */
  shadowed(): Set<DefId> {
    const out = new Set<DefId>();
    this.st.names.forEach((claimants, key) => {
      if (claimants.length < 2) return;
      const at = key.indexOf(":");
      const shown = this.lookup(key.slice(0, at) as Layer, key.slice(at + 1));
      for (const d of claimants) if (d !== shown) out.add(d);
    });
    return out;
  }

  /** True when `id` is live and shows under its name. */
  isVisible(id: DefId): boolean {
    const s = this.st.defs.get(id);
    return s?.alive === true && this.lookup(s.layer, s.name) === id;
  }

  /** Every definition that ever claimed `layer.name` (by add or rename), live or not. */
  everNamed(layer: Layer, name: string): readonly DefId[] {
    return this.st.nameHistory.get(`${layer}:${name}`) ?? [];
  }

  /** The live definitions whose text references `id`. */
  referrersOf(id: DefId): DefId[] {
    return (this.st.referrers.get(id) ?? []).filter((d) => this.st.defs.get(d)?.alive === true);
  }

  /** A held op by id (a definition op or a control op). */
  op(id: OpId): LogOp | undefined {
    return this.causality.op(id) ?? this.st.pending.get(id);
  }

  /** A held definition op by id (undefined for a control op). */
  defOp(id: OpId): Op | undefined {
    const op = this.op(id);
    return op === undefined || isControlOp(op) ? undefined : op;
  }

  private holdsOp(id: OpId): boolean {
    return this.causality.has(id) || this.st.pending.has(id);
  }

  /** True when the op is held (valid, or quarantined). */
  holds(id: string): boolean {
    return this.holdsOp(id as OpId) || this.st.quarantine.has(id);
  }

  /** Every valid held op: the placed ones in causal order, then the pending ones. */
  *ops(): IterableIterator<LogOp> {
    yield* this.causality.ops;
    yield* this.st.pending.values();
  }

  /** The placed ops that target `id`, in causal order (applied, lost, rolled back or orphaned). */
  opsOf(id: DefId): readonly OpId[] {
    return this.st.defs.get(id)?.history ?? this.st.graveyard.get(id) ?? [];
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
    const s = this.st.defs.get(def);
    if (s === undefined) return undefined;
    const at = s.ops.findIndex((o) => o["op-id"] === op);
    if (at <= 0) return undefined;
    return replayDefinition(s.ops.slice(0, at), this.ctx)?.body;
  }

  /**
   * The state of a definition as the author of `op` saw it, before (`after` false) or after writing
   * it: a replay of the ops applied to it that happened before `op` (and `op` itself). Undefined
   * when there is none (the op is the definition's add and `after` is false).
   */
  stateSeenBy(def: DefId, op: OpId, after: boolean): DefinitionState | undefined {
    const s = this.st.defs.get(def);
    if (s === undefined) return undefined;
    const ops = s.ops.filter(
      (o) => (after && o["op-id"] === op) || this.causality.happenedBefore(o["op-id"], op),
    );
    return replayDefinition(ops, this.ctx);
  }

  /** The conflict record id that explains why an op is rolled back (`rolled-back:…` or `locked:…`). */
  rollbackConflictId(id: OpId): string | undefined {
    const rb = this.st.rolledBack.get(id);
    if (rb === undefined) return undefined;
    return rb.cause === "locked" ? `locked:${id}` : `rolled-back:${id}`;
  }

  /** True when the op was rolled back by the conflict policy. */
  isRolledBack(id: OpId): boolean {
    return this.st.rolledBack.has(id);
  }

  /** Why a placed op has no effect because its target does not exist, if so. */
  orphanReason(id: OpId): Orphan["reason"] | undefined {
    return this.st.orphans.get(id)?.reason;
  }

  /** A cached content hash (undefined: not computed since the definition or a dependency changed). */
  cachedHash(id: DefId): ContentHash | undefined {
    return this.st.hashes.get(id);
  }

  /** Stores computed content hashes. */
  storeHashes(hashes: ReadonlyMap<string, ContentHash>): void {
    for (const [id, h] of hashes) this.st.hashes.set(id as DefId, h);
  }

  /**
   * Forgets the hash of `id` and of everything that references it, transitively. Stops at a live
   * definition without a hash: its dependents have none either (a hash is only ever computed
   * together with its dependencies'). A removed definition never has a hash while its dependents
   * may (they hash it as unresolved), so the walk goes on through it.
   */
  private invalidate(id: DefId): void {
    if (this.st.hashes.isEmpty()) return;
    const stack = [id];
    const seen = new Set<DefId>();
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (seen.has(d)) continue;
      seen.add(d);
      if (d !== id && !this.st.hashes.has(d) && this.st.defs.get(d)?.alive === true) continue;
      this.st.hashes.delete(d);
      for (const r of this.st.referrers.get(d) ?? []) stack.push(r);
    }
  }

  /** How many definitions live (a restored graph's unread rows counted from its snapshot's head). */
  liveCount(): number {
    let live = 0;
    if (this.restored === undefined) {
      for (const s of this.st.defs.values()) if (s.alive) live++;
      return live;
    }
    // Without a summary object each.
    const { head, rowOf } = this.restored;
    this.st.defs.peekEach((id, s) => {
      if (s === undefined ? head.defs[rowOf.get(id)!]![3] : s.alive) live++;
    });
    return live;
  }

  /** Whether the graph holds definition `id` (live or removed), without reading a restored graph's row. */
  holdsDefinition(id: DefId): boolean {
    return this.st.defs.has(id);
  }

  /** Where the graph stands. */
  status(): GraphStatus {
    const live = this.liveCount();
    return {
      ops: this.causality.size + this.st.pending.size,
      pending: this.st.pending.size,
      quarantined: [...this.st.quarantine.values()].sort((a, b) => compareIds(a.opId, b.opId)),
      definitions: live,
      heads: this.heads(),
      conflicts: this.conflicts().length,
      policy: this.policy(),
      locks: this.locks().length,
    };
  }

  /** The definitions that can hold a record: those read, and the unread rows the snapshot names. */
  private recordCandidates(): DefinitionState[] {
    const r = this.restored!;
    const out: DefinitionState[] = [];
    const unread: DefId[] = [];
    this.st.defs.peekEach((id, s) => {
      if (s !== undefined) out.push(s);
      else if (r.records.has(r.rowOf.get(id)!)) unread.push(id);
    });
    // Read after the walk: reading a row changes the map the walk goes over.
    for (const id of unread) out.push(this.st.defs.get(id)!);
    return out;
  }

  /** A person-readable name for a definition: `slot.todos`, with its identity when it is not shown under it. */
  label(id: DefId): string {
    const s = this.st.defs.get(id);
    if (s === undefined) return id;
    return definitionLabel(id, s.layer, s.name, s.alive, s.alive && this.lookup(s.layer, s.name) === id);
  }

  /**
   * Every conflict record, sorted by id. With `only`, the records about those definitions (name
   * contests they are in, their registers) and every rollback and orphan, which is what the write
   * gate compares before and after a write without walking the whole graph.
   */
  conflicts(only?: ReadonlySet<DefId>): Conflict[] {
    return conflictRecords(
      {
        st: this.st,
        causality: this.causality,
        label: (id) => this.label(id),
        lookup: (layer, name) => this.lookup(layer, name),
        defOp: (id) => this.defOp(id),
        locks: () => this.locks(),
        opsOf: (id) => this.opsOf(id),
        isRolledBack: (id) => this.isRolledBack(id),
        ...(this.restored === undefined ? {} : { candidates: () => this.recordCandidates() }),
      },
      only,
    );
  }
}

/**
 * How a person reads a definition's name: `slot.todos` when it shows under it, with its identity
 * when another shows there, and said removed when it does not live (`shows` is not read then).
 * One rule for a graph ({@link Graph.label}) and for a table of every definition's rows.
 */
export function definitionLabel(
  id: DefId,
  layer: Layer,
  name: string,
  alive: boolean,
  shows: boolean,
): string {
  const q = `${layer}.${name}`;
  if (!alive) return `${q} (removed, ${id})`;
  return shows ? q : `${q} (${id})`;
}

/** A definition's identity, layer, name and life, and its state when it was read ({@link Graph.summaries}). */
export interface DefinitionSummary {
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  readonly alive: boolean;
  readonly state?: DefinitionState;
}

/** What a graph taken up from a snapshot keeps of it (see {@link Graph.fromSnapshot}). */
interface Restored {
  readonly head: FoldSnapshotHead;
  readonly rowOf: ReadonlyMap<DefId, number>;
  /** The bodies read from rows: a state holding one has its text as the snapshot kept it. */
  readonly bodies: WeakSet<Body>;
  /** The rows that can hold a conflict record (`head.records`). */
  readonly records: ReadonlySet<number>;
}

interface Snapshot {
  readonly layer: Layer;
  readonly name: string;
  readonly alive: boolean;
  readonly refs: Body["refs"];
}

const EMPTY: ReadonlySet<DefId> = new Set();

/**
 * Whether a snapshot head's arrays agree with each other and with its `rows` (not its rows'
 * texts), its causal order unpacked whole as `c`.
 */
function snapshotHeadFits(head: FoldSnapshotHead, c: CausalParts, rows: number): boolean {
  const n = c.ids.length;
  if (
    !Array.isArray(head.defs) ||
    head.defs.length !== rows ||
    !Array.isArray(head.owner) ||
    head.owner.length !== n ||
    !Array.isArray(head.names) ||
    !Array.isArray(head.nameHistory) ||
    !Array.isArray(head.referrers) ||
    !Array.isArray(head.records) ||
    !head.records.every((r) => r >= 0 && r < rows)
  )
    return false;
  for (let i = 0; i < n; i++) {
    const o = head.owner[i]!;
    if (!(o >= 0 && o < rows) || typeof c.ids[i] !== "string") return false;
  }
  for (const h of c.heads) if (!(h >= 0 && h < n)) return false;
  const ref = (r: unknown) => typeof r === "string" || (typeof r === "number" && r >= 0 && r < rows);
  return (
    head.defs.every(
      (d) =>
        Array.isArray(d) &&
        (typeof d[0] === "string" || (typeof d[0] === "number" && d[0] >= 0 && d[0] < n)) &&
        typeof d[1] === "string" &&
        typeof d[2] === "string",
    ) &&
    head.names.every(([k, rs]) => typeof k === "string" && Array.isArray(rs) && rs.every(ref)) &&
    head.nameHistory.every(([k, rs]) => typeof k === "string" && Array.isArray(rs) && rs.every(ref)) &&
    head.referrers.every(([t, rs]) => ref(t) && Array.isArray(rs) && rs.every(ref))
  );
}

function targetsOf(refs: Body["refs"]): Set<DefId> {
  return new Set(Object.values(refs));
}
