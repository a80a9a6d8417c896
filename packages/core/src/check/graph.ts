import type { Definition, ReducerDef } from "../lang/ast.js";
import type { Layer } from "../lang/layers.js";
import type { ReferenceSite } from "../lang/references.js";

/**
 * One definition to check: the resolved form `resolveProgram` returns and the store keeps. A site
 * counts as resolved when its target is a definition of the same input; the checker never
 * re-resolves names, because in the store identity, not the name, is what a reference is.
 */
export interface CheckInput {
  /** The definition's identity (a qualified name in a loose program, a DefId in the store). */
  readonly id: string;
  readonly def: Definition;
  /** `referenceSites(def)`. */
  readonly sites: readonly ReferenceSite[];
  /** Per site, the identity of its target, or null. */
  readonly targets: readonly (string | null)[];
  /**
   * The text `def`'s spans index into (the whole file for a loose program). Optional; with it,
   * auto-patches that rewrite more than a name (E0001, E0301) can quote their anchor exactly.
   */
  readonly source?: string;
  /**
   * A store definition a same-name conflict hides (a program's second definition of a name, or the
   * loser of a concurrent add): checked like any other, but ranked after the one that shows, so
   * look-ups by name find the shown one and E0007 falls on the hidden.
   */
  readonly hidden?: boolean;
}

/** What one definition's check read, so that it is re-checked exactly when one of these changes. */
export class Deps {
  /** Identities read: targets followed and definitions looked at. */
  readonly ids = new Set<string>();
  /** `layer\0name` keys looked up by name. */
  readonly keys = new Set<string>();
  /** Layers whose whole name set was read (did-you-mean). */
  readonly layers = new Set<Layer>();
  /** Read the app (its caps, its routes). */
  app = false;
  /** Read the set of declared timer names. */
  timers = false;
}

/** The key of a (layer, name) pair in the name index. */
export function nameKey(layer: Layer, name: string): string {
  return `${layer}\u0000${name}`;
}

function insertSorted(list: string[], id: string, before: (a: string, b: string) => boolean): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(list[mid]!, id)) lo = mid + 1;
    else hi = mid;
  }
  if (list[lo] !== id) list.splice(lo, 0, id);
}

function removeFrom(list: string[], id: string): void {
  const i = list.indexOf(id);
  if (i >= 0) list.splice(i, 1);
}

/** The timer names a reducer declares with `on=timer(d, name=N)`. */
export function declaredTimer(def: Definition): string | undefined {
  if (def.kind !== "ReducerDef") return undefined;
  const on = (def as ReducerDef).on;
  return on.kind === "TimerEvent" ? on.timer?.name : undefined;
}

/**
 * What the indexes of a {@link Graph} read of a definition: enough to place it without its text.
 * A lazy input ({@link lazyInput}) carries it, so that indexing it parses nothing.
 */
export interface InputSummary {
  readonly layer: Layer;
  readonly name: string;
  readonly hidden: boolean;
  /** The timer name a reducer declares with `on=timer(d, name=N)`. */
  readonly timer?: string;
}

/** What the indexes read of `node`: its summary when it is lazy, else read off its definition. */
export function summaryOf(node: CheckInput): InputSummary {
  if (node instanceof LazyInput) return node.summary;
  const timer = declaredTimer(node.def);
  return {
    layer: node.def.layer,
    name: node.def.name.name,
    hidden: node.hidden === true,
    ...(timer === undefined ? {} : { timer }),
  };
}

/**
 * A check input read only when a check first looks at its definition, its sites or its text (a
 * definition no re-check follows is never parsed): `load` makes it, and must agree with `summary`.
 * What a resumed check ({@link createChecker}'s `resume`) holds for the definitions it was not
 * asked to re-check.
 */
export function lazyInput(id: string, summary: InputSummary, load: (id: string) => CheckInput): CheckInput {
  return new LazyInput(id, summary, load);
}

/**
 * A class, not an object literal with its own getters and its summary in a WeakMap, and one loader
 * for all: a resumed check makes one per definition. Measured on `kumiki add` in its own process
 * (medians of 6–8, in blocks per build, each build's kept check current): 499 -> 476 ms of CPU at
 * 5,000 definitions, 1,368 -> 1,322 ms and 248 -> 229 MB peak RSS at 20,000.
 */
class LazyInput implements CheckInput {
  private got: CheckInput | undefined;
  readonly hidden: boolean;

  constructor(
    readonly id: string,
    readonly summary: InputSummary,
    private readonly load: (id: string) => CheckInput,
  ) {
    this.hidden = summary.hidden;
  }

  private input(): CheckInput {
    this.got ??= this.load(this.id);
    return this.got;
  }

  get def(): Definition {
    return this.input().def;
  }

  get sites(): readonly ReferenceSite[] {
    return this.input().sites;
  }

  get targets(): readonly (string | null)[] {
    return this.input().targets;
  }

  get source(): string | undefined {
    return this.input().source;
  }
}

/**
 * The definitions being checked, with the indexes every check looks things up in. Ids within one
 * name (a same-name duplicate) are kept sorted — shown before hidden, then by id — so "the first"
 * is the same on every replica, and in a store it is the definition that shows under the name.
 */
export class Graph {
  readonly nodes = new Map<string, CheckInput>();
  /** Ids per `layer\0name`, sorted. */
  readonly byKey = new Map<string, string[]>();
  /** Keys holding more than one definition (E0007). */
  readonly duplicateKeys = new Set<string>();
  /** Name → count per layer (did-you-mean candidates). */
  readonly layerNames = new Map<Layer, Map<string, number>>();
  /** App ids, sorted by (name, id): the first is the app. */
  apps: string[] = [];
  /** Timer name → reducer ids declaring it, sorted. */
  readonly timers = new Map<string, string[]>();
  /** Timer names declared more than once (E0002). */
  readonly duplicateTimers = new Set<string>();

  add(node: CheckInput): void {
    const def = summaryOf(node);
    this.nodes.set(node.id, node);
    const key = nameKey(def.layer, def.name);
    let ids = this.byKey.get(key);
    if (ids === undefined) {
      ids = [];
      this.byKey.set(key, ids);
    }
    insertSorted(ids, node.id, this.before);
    if (ids.length > 1) this.duplicateKeys.add(key);
    let names = this.layerNames.get(def.layer);
    if (names === undefined) {
      names = new Map();
      this.layerNames.set(def.layer, names);
    }
    names.set(def.name, (names.get(def.name) ?? 0) + 1);
    if (def.layer === "app") {
      this.apps.push(node.id);
      this.sortApps();
    }
    const { timer } = def;
    if (timer !== undefined) {
      let rs = this.timers.get(timer);
      if (rs === undefined) {
        rs = [];
        this.timers.set(timer, rs);
      }
      insertSorted(rs, node.id, this.before);
      if (rs.length > 1) this.duplicateTimers.add(timer);
    }
  }

  remove(id: string): CheckInput | undefined {
    const node = this.nodes.get(id);
    if (node === undefined) return undefined;
    const def = summaryOf(node);
    this.nodes.delete(id);
    const key = nameKey(def.layer, def.name);
    const ids = this.byKey.get(key);
    if (ids !== undefined) {
      removeFrom(ids, id);
      if (ids.length === 0) this.byKey.delete(key);
      if (ids.length <= 1) this.duplicateKeys.delete(key);
    }
    const names = this.layerNames.get(def.layer);
    if (names !== undefined) {
      const n = (names.get(def.name) ?? 1) - 1;
      if (n <= 0) names.delete(def.name);
      else names.set(def.name, n);
    }
    if (def.layer === "app") removeFrom(this.apps, id);
    const { timer } = def;
    if (timer !== undefined) {
      const rs = this.timers.get(timer);
      if (rs !== undefined) {
        removeFrom(rs, id);
        if (rs.length === 0) this.timers.delete(timer);
        if (rs.length <= 1) this.duplicateTimers.delete(timer);
      }
    }
    return node;
  }

  /** True when `a` ranks before `b` within one name: shown before hidden, then by id. */
  private readonly before = (a: string, b: string): boolean => {
    const ha = this.nodes.get(a)?.hidden === true;
    const hb = this.nodes.get(b)?.hidden === true;
    return ha !== hb ? hb : a < b;
  };

  private sortApps(): void {
    const nameOf = (id: string): string => {
      const node = this.nodes.get(id);
      return node === undefined ? "" : summaryOf(node).name;
    };
    this.apps.sort((a, b) => {
      const na = nameOf(a);
      const nb = nameOf(b);
      if (na !== nb) return na < nb ? -1 : 1;
      return this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0;
    });
  }

  /** The ids defining `name` in `layer`, sorted (empty when none). */
  idsOf(layer: Layer, name: string): readonly string[] {
    return this.byKey.get(nameKey(layer, name)) ?? [];
  }
}
