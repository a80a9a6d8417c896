const GONE: unique symbol = Symbol("gone");
/** A root map's entry not read yet ({@link CowMap.deferred}): present, its value made when first asked for. */
const UNREAD: unique symbol = Symbol("unread");

/**
 * A map that can be forked in O(1): a fork reads through to its base and keeps its own writes,
 * until it is committed into the base or dropped. Values a fork takes from its base are copied
 * before the fork mutates them ({@link mutable}), so the base never sees a fork's changes.
 */
export class CowMap<K, V> {
  private readonly own = new Map<K, V | typeof GONE | typeof UNREAD>();
  /** How many of `own`'s entries are {@link UNREAD}, and what reads one (see {@link deferred}). */
  private unread = 0;
  private read: ((key: K) => V) | undefined;
  /** Forks of this map neither committed nor dropped: while any is, its values are not changed in place. */
  private forks = 0;
  /** Set when this fork was committed or dropped (it no longer counts among its base's forks). */
  private done = false;

  constructor(private readonly base?: CowMap<K, V>) {}

  get(key: K): V | undefined {
    const v = this.own.get(key);
    if (v === GONE) return undefined;
    if (v === UNREAD) return this.readOne(key);
    if (v !== undefined || this.base === undefined) return v;
    return this.base.get(key);
  }

  /**
   * Makes an empty root map hold `keys` (in that order, as if set one after another) whose values
   * are made by `read` when first asked for — by a read, a write, a walk, or a fork reading
   * through — and kept from then on: a graph restored from a fold snapshot reads only the
   * definitions a call looks at. `read` must not touch this map's other unread keys' order.
   */
  deferred(keys: Iterable<K>, read: (key: K) => V): void {
    if (this.base !== undefined || this.own.size > 0)
      throw new Error("cow-map: only an empty root map defers");
    for (const k of keys) this.own.set(k, UNREAD);
    this.unread = this.own.size;
    this.read = read;
  }

  private readOne(key: K): V {
    const v = this.read!(key);
    this.own.set(key, v);
    this.unread--;
    return v;
  }

  /** Reads every unread value (a walk over the map is a walk over every value). */
  private readAll(): void {
    for (const [k, v] of this.own) if (v === UNREAD) this.readOne(k);
  }

  /** Whether the map holds `key` (an unread value is held: it is not read for this). */
  has(key: K): boolean {
    const v = this.own.get(key);
    if (v === UNREAD) return true;
    if (v === GONE) return false;
    if (v !== undefined || this.base === undefined) return v !== undefined;
    return this.base.has(key);
  }

  set(key: K, value: V): void {
    if (this.unread > 0 && this.own.get(key) === UNREAD) this.unread--;
    this.own.set(key, value);
  }

  delete(key: K): void {
    if (this.unread > 0 && this.own.get(key) === UNREAD) this.unread--;
    // A mark only where the base holds the key: a fork that deleted what it alone had set (the
    // draft's pending ops, each taken out as it is placed) would otherwise keep a mark per key, and
    // every `entries()` walk over them made a draft of n items cost O(n²).
    if (this.base === undefined || this.base.get(key) === undefined) this.own.delete(key);
    else this.own.set(key, GONE);
  }

  /**
   * The value under `key` when it may be changed in place: this map's own (not read through to
   * its base), in a map no live fork reads (one forked and neither committed nor {@link drop}ped:
   * its base's values are replaced, never changed, while it lives). Undefined otherwise: replace
   * the value with {@link set}.
   */
  ownValue(key: K): V | undefined {
    if (this.forks > 0) return undefined;
    const v = this.own.get(key);
    if (v === UNREAD) return this.readOne(key);
    return v === GONE ? undefined : v;
  }

  /** The value under `key`, safe to mutate in place: a fork copies its base's value first. */
  mutable(key: K, copy: (v: V) => V): V | undefined {
    const v = this.own.get(key);
    if (v === GONE) return undefined;
    if (v === UNREAD) return this.readOne(key);
    if (v !== undefined) return v;
    const inherited = this.base?.get(key);
    if (inherited === undefined) return undefined;
    const mine = copy(inherited);
    this.own.set(key, mine);
    return mine;
  }

  /** Every entry (a fork's own entries override its base's). */
  entries(): IterableIterator<[K, V]> {
    // A map that is not a fork never holds a mark (its delete removes the key), so its own Map's
    // iterator is every entry: in a process of its own a generator walking 5,000 definitions cost
    // 9.9 ms where the Map's iterator costs a tenth of it (`status` at 5,000 definitions).
    if (this.base === undefined) {
      if (this.unread > 0) this.readAll();
      return this.own.entries() as IterableIterator<[K, V]>;
    }
    return this.forkEntries(this.base);
  }

  private *forkEntries(base: CowMap<K, V>): IterableIterator<[K, V]> {
    for (const [k, v] of base.entries()) if (!this.own.has(k)) yield [k, v];
    // A fork's own entries are never unread (only a root defers).
    for (const [k, v] of this.own) if (v !== GONE) yield [k, v as V];
  }

  /**
   * Calls `f` with every key and its value, or undefined for one not read yet ({@link deferred}):
   * a walk that reads nothing (a fork's own entries override its base's, as in {@link entries}).
   * A callback, not a generator of pairs: a process of its own walks 5,000 definitions a few times
   * per write, and the generator and a pair per entry cost about 5 ms of a write's `status`.
   */
  peekEach(f: (key: K, value: V | undefined) => void): void {
    if (this.base === undefined) {
      this.own.forEach((v, k) => {
        f(k, v === UNREAD ? undefined : (v as V));
      });
      return;
    }
    this.base.peekEach((k, v) => {
      if (!this.own.has(k)) f(k, v);
    });
    this.own.forEach((v, k) => {
      if (v !== GONE) f(k, v as V);
    });
  }

  /**
   * Calls `f` with every value and its key, as {@link entries} gives them (an unread value is read
   * first): without a generator and a pair per entry, which a fork's walk of 5,000 names (a check
   * one write behind asks the past which definitions a name contest hides) cost 5–10 ms of.
   */
  forEach(f: (value: V, key: K) => void): void {
    if (this.base === undefined) {
      if (this.unread > 0) this.readAll();
      (this.own as Map<K, V>).forEach(f);
      return;
    }
    this.base.forEach((v, k) => {
      if (!this.own.has(k)) f(v, k);
    });
    this.own.forEach((v, k) => {
      if (v !== GONE) f(v as V, k);
    });
  }

  /** Every value (see {@link entries}). */
  values(): IterableIterator<V> {
    if (this.base === undefined) {
      if (this.unread > 0) this.readAll();
      return this.own.values() as IterableIterator<V>;
    }
    return this.forkValues();
  }

  private *forkValues(): IterableIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }

  get size(): number {
    if (this.base === undefined) return this.own.size;
    let n = 0;
    for (const _ of this.entries()) n++;
    return n;
  }

  /** True when the map holds nothing (cheap for a map that is not a fork). */
  isEmpty(): boolean {
    if (this.base === undefined) return this.own.size === 0;
    for (const _ of this.entries()) return false;
    return true;
  }

  /** A fork of this map. */
  fork(): CowMap<K, V> {
    this.forks++;
    return new CowMap(this);
  }

  /** Drops this fork: its writes never reach its base, which may change its values in place again. */
  drop(): void {
    this.release();
  }

  private release(): void {
    if (this.base === undefined || this.done) return;
    this.done = true;
    this.base.forks--;
  }

  /** Writes this fork's changes into its base (the values become the base's own). */
  commit(): void {
    const base = this.base;
    if (base === undefined) return;
    for (const [k, v] of this.own) {
      if (v === GONE) base.delete(k);
      else base.set(k, v as V);
    }
    this.own.clear();
    this.release();
  }
}

/**
 * Appends `item` to the list under `key`: in place where {@link CowMap.ownValue} allows it, else as
 * a new list — so appending k items to one key costs O(k), not O(k²), in a map no fork reads.
 */
export function appendToList<K, T>(map: CowMap<K, readonly T[]>, key: K, item: T): void {
  const own = map.ownValue(key) as T[] | undefined;
  if (own !== undefined) own.push(item);
  else map.set(key, [...(map.get(key) ?? []), item]);
}
