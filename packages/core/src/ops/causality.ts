/**
 * Causality over parent-ops: the deterministic causal order of a set of ops, and reachability (did
 * a happen before b) for ops placed in that order.
 */
import type { OpId } from "./ids.js";

/** What causality needs of an op. */
export interface CausalOp {
  readonly "op-id": OpId;
  readonly "parent-ops": readonly OpId[];
}

/**
 * The deterministic causal order of a set of ops: Kahn's algorithm taking the smallest op-id
 * among the ready ops, i.e. the lexicographically smallest topological order. It depends only on
 * the set, never on arrival order. Ops whose parents are not all in the set (and their
 * descendants) cannot be placed yet and come back as `pending`; a parent for which `placed` says
 * true (already placed before these ops, e.g. in a graph they are added to) counts as done.
 */
export function causalOrder<T extends CausalOp>(
  ops: Iterable<T>,
  placed: (id: OpId) => boolean = () => false,
): { order: T[]; pending: T[] } {
  const byId = new Map<OpId, T>();
  for (const op of ops) if (!byId.has(op["op-id"])) byId.set(op["op-id"], op);
  const sorted = [...byId.values()].sort((a, b) => compareIds(a["op-id"], b["op-id"]));
  // Ops written by this library get ids greater than all their parents', so the sorted order is
  // usually already topological, and then it is the smallest topological order.
  if (sorted.every((op) => op["parent-ops"].every((p) => (byId.has(p) && p < op["op-id"]) || placed(p)))) {
    return { order: sorted, pending: [] };
  }
  const missing = new Map<OpId, number>();
  const children = new Map<OpId, T[]>();
  for (const op of sorted) {
    let waits = 0;
    for (const p of op["parent-ops"]) {
      if (placed(p) && !byId.has(p)) continue;
      if (!byId.has(p)) {
        waits = Number.POSITIVE_INFINITY;
        break;
      }
      waits++;
      const list = children.get(p);
      if (list === undefined) children.set(p, [op]);
      else list.push(op);
    }
    missing.set(op["op-id"], waits);
  }
  const heap = new MinHeap<T>((a, b) => compareIds(a["op-id"], b["op-id"]));
  for (const op of sorted) if (missing.get(op["op-id"]) === 0) heap.push(op);
  const order: T[] = [];
  for (let op = heap.pop(); op !== undefined; op = heap.pop()) {
    order.push(op);
    for (const child of children.get(op["op-id"]) ?? []) {
      const left = missing.get(child["op-id"])! - 1;
      missing.set(child["op-id"], left);
      if (left === 0) heap.push(child);
    }
  }
  if (order.length === sorted.length) return { order, pending: [] };
  const ordered = new Set(order.map((o) => o["op-id"]));
  return { order, pending: sorted.filter((o) => !ordered.has(o["op-id"])) };
}

/** Op-ids compare as strings: ULIDs sort by time, then randomness. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A causal order as arrays, by position (what a fold snapshot keeps of it: `Causality.parts`). */
export interface CausalParts {
  readonly ids: readonly OpId[];
  /** Op i's parents are `parentList[parentStart[i] .. parentStart[i + 1])`. */
  readonly parentStart: readonly number[];
  readonly parentList: readonly number[];
  /**
   * Per position, the latest dominator at or before it: the latest op placed, at or before it,
   * that had every op placed before it as an ancestor.
   */
  readonly dom: readonly number[];
  /** The positions no op has as a parent. */
  readonly heads: readonly number[];
  /**
   * The greatest op-id (of an order holding any): what `Causality.restore` takes instead of
   * comparing every op-id again (12 ms at 100,000 ops).
   */
  readonly max?: OpId;
}

/**
 * Reachability over parent-ops for ops placed one after another in a causal order. Answers "did
 * `a` happen before `b`" (is `a` an ancestor of `b`) in O(1) when `b` is causally after everything
 * placed before some point that `a` precedes — the common case: a history that is mostly linear —
 * and otherwise by a walk back from `b` bounded below by `a`'s position.
 *
 * A placed op that had every op placed before it as an ancestor (its parents covered all heads) is a
 * *dominator*; `dom[i]` is the position of the latest dominator that is `i` or an ancestor of it.
 * Everything placed at or before `dom[i]` is an ancestor-or-self of `i`.
 */
export class Causality<T extends CausalOp = CausalOp> {
  /**
   * op-id → position, built on demand: most folds never look an op up by id (a parent is
   * usually the op placed just before, and the merge rules ask about op objects), and filling a
   * map of 100k string keys is a large share of a fold.
   */
  private readonly index = new Map<OpId, number>();
  private indexed = 0;
  /**
   * op object → position: what the merge rules' questions go through. A Map, not a WeakMap: `placed`
   * keeps every op alive anyway, and a WeakMap's entries are ephemerons every garbage collection
   * walks — 70 ms more CPU in a process folding 100,000 ops.
   */
  private readonly positions = new Map<T, number>();
  private ids: OpId[] = [];
  /** The ops by position; a restored order's are undefined until read ({@link restore}). */
  private placed: (T | undefined)[] = [];
  /** How many of `placed` are not read yet, and what reads the op at a position. */
  private unread = 0;
  private readOp: ((position: number) => void) | undefined;
  /** Parent positions of op i: parentList[parentStart[i] .. parentStart[i + 1]). */
  private parentStart: number[] = [0];
  private parentList: number[] = [];
  private dom: number[] = [];
  /**
   * `runningMax[i - maxFrom]`: the greatest op-id among positions 0..i, from `maxFrom` on; before
   * it (a restored order's positions) only the greatest is kept, `maxBefore`: a rollback never goes
   * back past a restored order's start (a mark is taken after the restore).
   */
  private readonly runningMax: OpId[] = [];
  private maxFrom = 0;
  private maxBefore: OpId | undefined;
  /** Positions no placed op has as a parent (an antichain; usually one, so an array). */
  private heads: number[] = [];

  /**
   * A causal order as {@link parts} gave it (the arrays are taken, not copied: it appends to
   * them), its ops read on demand: `read(position)` must hand the op at that position (and any
   * others it reads along) to {@link restoreOp}. What a graph restored from a fold snapshot holds:
   * at 100,000 ops most are never looked at by a write.
   */
  static restore<T extends CausalOp>(parts: CausalParts, read: (position: number) => void): Causality<T> {
    const c = new Causality<T>();
    const n = parts.ids.length;
    c.ids = parts.ids as OpId[];
    c.parentStart = parts.parentStart as number[];
    c.parentList = parts.parentList as number[];
    c.dom = parts.dom as number[];
    c.heads = [...parts.heads];
    c.placed = new Array<T | undefined>(n).fill(undefined);
    c.unread = n;
    c.readOp = read;
    let max = parts.max;
    if (max === undefined)
      for (let i = 0; i < n; i++) if (max === undefined || c.ids[i]! > max) max = c.ids[i]!;
    c.maxBefore = max;
    c.maxFrom = n;
    return c;
  }

  /** Hands a restored order the op at `position` (see {@link restore}). */
  restoreOp(position: number, op: T): void {
    if (this.placed[position] !== undefined) return;
    if (this.ids[position] !== op["op-id"])
      throw new Error(`causality: op ${op["op-id"]} restored at the position of ${this.ids[position]}`);
    this.placed[position] = op;
    this.positions.set(op, position);
    this.unread--;
  }

  /** The causal order as arrays (what {@link restore} takes back). */
  parts(): CausalParts {
    return {
      ids: [...this.ids],
      parentStart: [...this.parentStart],
      parentList: [...this.parentList],
      dom: [...this.dom],
      heads: [...this.heads],
      ...(this.size === 0 ? {} : { max: this.maxId()! }),
    };
  }

  private opAt(at: number): T {
    const op = this.placed[at];
    if (op !== undefined) return op;
    this.readOp!(at);
    const read = this.placed[at];
    if (read === undefined) throw new Error(`causality: the op at ${at} (${this.ids[at]}) was not restored`);
    return read;
  }

  /** How many ops are placed. */
  get size(): number {
    return this.ids.length;
  }

  /** The placed op-ids, in causal order. */
  get order(): readonly OpId[] {
    return this.ids;
  }

  private lookup(id: OpId): number | undefined {
    // An id greater than every placed one is not placed: the common question about a fresh op.
    const max = this.maxId();
    if (max === undefined || id > max) return undefined;
    // A new op's parents are the heads (a local write names them all): answered without the index,
    // whose first fill costs a write at 100,000 ops about 20 ms of hashing every op-id.
    if (this.indexed < this.ids.length && this.heads.length <= 8)
      for (const h of this.heads) if (this.ids[h] === id) return h;
    for (; this.indexed < this.ids.length; this.indexed++)
      this.index.set(this.ids[this.indexed]!, this.indexed);
    return this.index.get(id);
  }

  /** True when `id` is placed. */
  has(id: OpId): boolean {
    return this.lookup(id) !== undefined;
  }

  /** A placed op by id. */
  op(id: OpId): T | undefined {
    const at = this.lookup(id);
    return at === undefined ? undefined : this.opAt(at);
  }

  /** The placed ops, in causal order (a restored order's are all read first). */
  get ops(): readonly T[] {
    if (this.unread > 0) for (let i = 0; i < this.placed.length; i++) this.opAt(i);
    return this.placed as readonly T[];
  }

  /** The placed ops from position `from` on, in causal order (only those read, in a restored order). */
  opsFrom(from: number): T[] {
    const out: T[] = [];
    for (let i = Math.max(0, from); i < this.placed.length; i++) out.push(this.opAt(i));
    return out;
  }

  /** The position of a placed op in the causal order. */
  positionOf(id: OpId): number | undefined {
    return this.lookup(id);
  }

  /**
   * {@link positionOf} for an op placed near the end (a recent state's head), found by looking back
   * from the last op rather than by the index, whose first fill hashes every op-id (about 50 ms
   * in a process folding 100,000 ops). Every op is looked at when `id` is not placed.
   */
  recentPositionOf(id: OpId): number | undefined {
    if (this.indexed === this.ids.length) return this.index.get(id);
    for (let i = this.ids.length - 1; i >= 0; i--) if (this.ids[i] === id) return i;
    return undefined;
  }

  /** The position of a placed op object. */
  positionOfOp(op: T): number | undefined {
    return this.positions.get(op);
  }

  /** The op-ids that no placed op has as a parent, sorted. */
  headIds(): OpId[] {
    return this.heads.map((i) => this.ids[i]!).sort(compareIds);
  }

  /** The greatest placed op-id. */
  maxId(): OpId | undefined {
    return this.runningMax.length > 0 ? this.runningMax[this.runningMax.length - 1] : this.maxBefore;
  }

  /**
   * True when `op` can be placed after every placed op without changing the causal order of the
   * whole set: its parents are placed, and it is either causally after all of them (its parents
   * cover the heads) or its op-id is greater than every placed one's.
   */
  canAppend(op: CausalOp): boolean {
    const parents = op["parent-ops"];
    for (const p of parents) if (this.lookup(p) === undefined) return false;
    const greatest = this.maxId();
    if (greatest === undefined || op["op-id"] > greatest) return true;
    let covered = 0;
    for (const p of parents) if (this.heads.includes(this.lookup(p)!)) covered++;
    return covered === this.heads.length;
  }

  /**
   * Places `op` after every placed op and returns its position. Its parents must be placed; with
   * `tentative`, a missing parent returns -1 and places nothing instead of throwing.
   */
  append(op: T, tentative = false): number {
    const id = op["op-id"];
    const n = this.ids.length;
    const parentIds = op["parent-ops"];
    const prevMax = this.maxId();
    let d: number;
    // The common case, a linear history: the only parent is the op placed last, the only head.
    if (parentIds.length === 1 && n > 0 && this.heads.length === 1 && parentIds[0] === this.ids[n - 1]) {
      this.parentList.push(n - 1);
      d = n;
      this.heads[0] = n;
    } else {
      const from = this.parentList.length;
      let covered = 0;
      for (let i = 0; i < parentIds.length; i++) {
        const at = this.lookup(parentIds[i]!);
        if (at === undefined) {
          this.parentList.length = from;
          if (tentative) return -1;
          throw new Error(`causality: parent ${parentIds[i]} of ${id} is not placed`);
        }
        this.parentList.push(at);
        if (this.heads.includes(at)) covered++;
      }
      const to = this.parentList.length;
      d = -1;
      if (covered === this.heads.length) d = n;
      else
        for (let i = from; i < to; i++)
          if (this.dom[this.parentList[i]!]! > d) d = this.dom[this.parentList[i]!]!;
      const parents = new Set(this.parentList.slice(from, to));
      this.heads = this.heads.filter((h) => !parents.has(h));
      this.heads.push(n);
    }
    this.ids.push(id);
    this.placed.push(op);
    this.positions.set(op, n);
    this.parentStart.push(this.parentList.length);
    this.dom.push(d);
    this.runningMax.push(prevMax === undefined || id > prevMax ? id : prevMax);
    return n;
  }

  /**
   * By position, 1 for the ops at `positions` and every ancestor of theirs: the ops of the state
   * whose heads those are. One walk over the parent lists, no op-id looked up.
   */
  ancestry(positions: readonly number[]): Uint8Array {
    const marks = new Uint8Array(this.ids.length);
    const stack = [...positions];
    for (let p = stack.pop(); p !== undefined; p = stack.pop()) {
      if (marks[p] === 1) continue;
      marks[p] = 1;
      for (let j = this.parentStart[p]!, end = this.parentStart[p + 1]!; j < end; j++)
        if (marks[this.parentList[j]!] === 0) stack.push(this.parentList[j]!);
    }
    return marks;
  }

  /** A point to come back to with {@link rollback}. */
  mark(): { readonly size: number; readonly heads: readonly number[] } {
    return { size: this.ids.length, heads: [...this.heads] };
  }

  /** Forgets every op placed since `mark` was taken. */
  rollback(mark: { readonly size: number; readonly heads: readonly number[] }): void {
    if (mark.size < this.maxFrom) throw new Error("causality: a rollback past a restored order's start");
    while (this.ids.length > mark.size) {
      const id = this.ids.pop()!;
      if (this.indexed > this.ids.length) {
        this.index.delete(id);
        this.indexed = this.ids.length;
      }
      const op = this.placed.pop();
      if (op !== undefined) this.positions.delete(op);
      else this.unread--;
      this.parentStart.pop();
      this.dom.pop();
      this.runningMax.pop();
    }
    this.parentList.length = this.parentStart[this.parentStart.length - 1]!;
    this.heads = [...mark.heads];
  }

  /** A position at or before which every placed op is an ancestor-or-self of `id` (-1: none). */
  coveredBy(id: OpId): number {
    const at = this.lookup(id);
    return at === undefined ? -1 : this.dom[at]!;
  }

  /** {@link coveredBy} for a placed op object. */
  coveredByOp(op: T): number {
    const at = this.positions.get(op);
    return at === undefined ? -1 : this.dom[at]!;
  }

  /** True when `a` is an ancestor of `b` (`a` happened before `b`); false for `a === b`. */
  happenedBefore(a: OpId, b: OpId): boolean {
    const pa = this.lookup(a);
    const pb = this.lookup(b);
    if (pa === undefined || pb === undefined || pa >= pb) return false;
    return this.reaches(pa, pb);
  }

  /** {@link happenedBefore} for placed op objects. */
  opHappenedBefore(a: T, b: T): boolean {
    const pa = this.positions.get(a);
    const pb = this.positions.get(b);
    if (pa === undefined || pb === undefined || pa >= pb) return false;
    return this.reaches(pa, pb);
  }

  /** True when neither op happened before the other. */
  concurrent(a: OpId, b: OpId): boolean {
    return a !== b && !this.happenedBefore(a, b) && !this.happenedBefore(b, a);
  }

  private reaches(pa: number, pb: number): boolean {
    if (pa <= this.dom[pb]!) return true;
    const seen = new Set<number>([pb]);
    const stack = [pb];
    while (stack.length > 0) {
      const x = stack.pop()!;
      for (let i = this.parentStart[x]!, end = this.parentStart[x + 1]!; i < end; i++) {
        const p = this.parentList[i]!;
        if (p === pa) return true;
        if (p < pa || seen.has(p)) continue;
        if (pa <= this.dom[p]!) return true;
        seen.add(p);
        stack.push(p);
      }
    }
    return false;
  }
}

/** A binary min-heap. */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => number) {}

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.less(a[i]!, a[parent]!) >= 0) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  get size(): number {
    return this.items.length;
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!) < 0) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}
