/**
 * The checker of loose programs and store graphs (ai-edit.md §9.2.3): its options, `checkProgram`,
 * and the incremental `Checker` that re-checks what a change can affect.
 */
import type { ReducerDef } from "../lang/ast.js";
import { LAYERS, type Layer } from "../lang/layers.js";
import { type CapabilityManifest, manifestCapabilities } from "../lang/stdlib.js";
import { narrowingOf } from "./codes.js";
import { CheckContext, type CheckSettings, makeDiagnostic } from "./context.js";
import { checkDefinition } from "./definition.js";
import type { Diagnostic } from "./diagnostic.js";
import { duplicatePatch } from "./duplicate-patch.js";
import { type CheckInput, type Deps, Graph, nameKey, summaryOf } from "./graph.js";
import { type CapabilityNeed, shareCapabilityPatches } from "./shared-patches.js";

/** Options of a check (ai-edit.md §9.2.3). */
export interface CheckOptions {
  /**
   * Narrowing: when any of `types`, `refs`, `effects` is set, only the bands they select are
   * reported (their union), plus the bands no flag selects (E00xx, E07xx, E08xx).
   */
  readonly types?: boolean;
  readonly refs?: boolean;
  readonly effects?: boolean;
  /** Report the accessibility checks (E0701–E0703). */
  readonly a11y?: boolean;
  /**
   * Whether a program with no app is an error (E0003). Default true; the AI-editing verbs build a
   * program one definition at a time and check with it off (errors.md E0003).
   */
  readonly requireApp?: boolean;
  /** A kumiki.caps.json manifest (or its capability names): custom capabilities app.caps accepts. */
  readonly capabilities?: CapabilityManifest | readonly string[];
}

/** The definitions a checker reads: a map by identity (a `Map<string, CheckInput>` is one). */
export interface CheckSource {
  /** The definition of identity `id`, or undefined. */
  get(id: string): CheckInput | undefined;
  /** Every definition, in any order. */
  values(): Iterable<CheckInput>;
}

function settingsOf(options: CheckOptions): CheckSettings {
  return {
    a11y: options.a11y === true,
    requireApp: options.requireApp !== false,
    registeredCaps: manifestCapabilities(options.capabilities),
  };
}

/**
 * The filter a narrowing (`--types`, `--refs`, `--effects`, composed as a union) applies to a full
 * report; undefined when the options narrow nothing.
 */
export function narrowingFilter(options: CheckOptions): ((d: Diagnostic) => boolean) | undefined {
  const selected = new Set<string>();
  if (options.types === true) selected.add("types");
  if (options.refs === true) selected.add("refs");
  if (options.effects === true) selected.add("effects");
  if (selected.size === 0) return undefined;
  return (d) => {
    const by = narrowingOf(d.code);
    return by === null || selected.has(by);
  };
}

const layerRank = new Map<Layer, number>(LAYERS.map((l, i) => [l, i]));

/** Deterministic order: program-level first, then by layer, name, identity, position, code. */
function compareDiagnostics(graph: Graph): (a: Diagnostic, b: Diagnostic) => number {
  const rank = (d: Diagnostic): [number, string, string] => {
    if (d.definition === undefined) return [-1, "", ""];
    const node = graph.nodes.get(d.definition);
    if (node === undefined) return [LAYERS.length, "", d.definition];
    const { layer, name } = summaryOf(node);
    return [layerRank.get(layer) ?? LAYERS.length, name, d.definition];
  };
  const cmp = (x: string | number, y: string | number): number => (x < y ? -1 : x > y ? 1 : 0);
  return (a, b) => {
    const [la, na, ia] = rank(a);
    const [lb, nb, ib] = rank(b);
    return (
      cmp(la, lb) ||
      cmp(na, nb) ||
      cmp(ia, ib) ||
      cmp(a.span?.offset ?? -1, b.span?.offset ?? -1) ||
      cmp(a.code, b.code) ||
      cmp(a.kind, b.kind) ||
      cmp(a.message, b.message)
    );
  };
}

/**
 * The diagnostics that depend on the whole set of definitions rather than on one definition and
 * what it reads: a missing or second app (E0003, E0004), same-name duplicates (E0007) and
 * duplicate timer names (E0002). Computed from the graph's indexes, so it costs what the
 * duplicates cost, not what the graph does.
 */
function programDiagnostics(
  graph: Graph,
  settings: CheckSettings,
  readersOf: (id: string) => Iterable<string>,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (settings.requireApp && graph.apps.length === 0) {
    out.push({
      code: "E0003",
      kind: "missing-app",
      severity: "error",
      location: "program",
      message: "Program has no app definition: add an app with caps, routes and init",
    });
  }
  for (const id of graph.apps.slice(1)) {
    const node = graph.nodes.get(id)!;
    const first = graph.nodes.get(graph.apps[0]!)!;
    out.push(
      makeDiagnostic(
        node,
        "E0004",
        node.def.name.span,
        `Program declares more than one app definition ("${node.def.name.name}"; the app is "${first.def.name.name}"): remove or merge the extra one`,
      ),
    );
  }
  for (const key of graph.duplicateKeys) {
    const ids = graph.byKey.get(key) ?? [];
    for (const id of ids.slice(1)) {
      const node = graph.nodes.get(id)!;
      const q = `${node.def.layer}.${node.def.name.name}`;
      // One repair per name, on its first hidden definition (a third copy gets its own once the
      // first is applied): two patches removing the same definition would not compose.
      const autoPatch = id === ids[1] ? duplicatePatch(graph, ids[0]!, id, readersOf) : undefined;
      out.push(
        makeDiagnostic(
          node,
          "E0007",
          node.def.name.span,
          `${q} is declared more than once; references resolve to ${ids[0]}${graph.nodes.get(ids[0]!)?.hidden === undefined && node.hidden === true ? " (it shows under the name)" : " (the first)"}, this one (${id}) is unreachable: ${autoPatch === undefined ? "rename or remove one" : "its auto-patch keeps the text that shows, here, and binds every reference to it (or rename or remove one)"}`,
          autoPatch === undefined ? {} : { autoPatch },
        ),
      );
    }
  }
  for (const timer of graph.duplicateTimers) {
    const ids = graph.timers.get(timer) ?? [];
    for (const id of ids.slice(1)) {
      const node = graph.nodes.get(id)!;
      const on = (node.def as ReducerDef).on;
      const span = on.kind === "TimerEvent" && on.timer !== undefined ? on.timer.span : node.def.name.span;
      out.push(
        makeDiagnostic(
          node,
          "E0002",
          span,
          `Timer name "${timer}" is declared more than once (also by ${graph.nodes.get(ids[0]!)?.def.name.name ?? ids[0]}): give each timer(…, name=…) its own name`,
        ),
      );
    }
  }
  return out;
}

/**
 * Checks a set of definitions (ai-edit.md §9.2.3, errors.md) and returns every diagnostic, in a
 * deterministic order. `input` is what `resolveProgram` returns, or the store's graph.
 */
export function checkProgram(input: Iterable<CheckInput>, options: CheckOptions = {}): Diagnostic[] {
  const checker = createChecker(new Map([...input].map((n) => [n.id, n])), options);
  return checker.diagnostics();
}

/** An incremental checker over a changing set of definitions. */
export interface Checker {
  /** Every diagnostic of the current definitions, in deterministic order. */
  diagnostics(): Diagnostic[];
  /**
   * Re-reads `ids` from the source (an id the source no longer has was removed), re-checks only
   * what they can affect, and returns every diagnostic — the same list a full check gives.
   */
  update(ids: Iterable<string>): Diagnostic[];
  /** How many definitions the last full check or update re-checked. */
  readonly rechecked: number;
  /** The findings and what each check read, as JSON: what {@link resumeChecker} goes on from. */
  state(): CheckerState;
}

/**
 * A checker's state as JSON ({@link Checker.state}): per checked definition its diagnostics, what
 * its check read, and the capability each of its E0301s needs. Valid only for the same
 * definitions, options and checker code (a cache keys it by all three).
 */
export interface CheckerState {
  readonly v: 1;
  readonly defs: readonly CheckedDefinition[];
}

/** One definition of a {@link CheckerState}. */
export interface CheckedDefinition {
  readonly id: string;
  readonly diagnostics?: readonly Diagnostic[];
  /** What its check read (the definitions, names and layers it is re-checked on). */
  readonly reads: {
    readonly ids?: readonly string[];
    readonly keys?: readonly string[];
    readonly layers?: readonly Layer[];
    readonly app?: true;
    readonly timers?: true;
  };
  /** Per diagnostic index, the capability it needs (shared E0301 patches). */
  readonly needs?: readonly (readonly [number, { readonly app: string; readonly cap: string }])[];
}

/**
 * Creates a checker over `source`. The first full check happens here; afterwards `update` re-checks
 * the changed definitions, the definitions whose check read one of them (targets followed, names
 * looked up), and — when names came or went — the definitions whose did-you-mean read those
 * names. Diagnostics about the whole program (E0002, E0003, E0004, E0007) come from indexes kept
 * up to date on every change.
 */
export function createChecker(source: CheckSource, options: CheckOptions = {}): Checker {
  return new IncrementalChecker(source, options);
}

/**
 * A checker over `source` that checks nothing to start: it takes each definition's findings from
 * `state` (what a checker of the same definitions and options left, {@link Checker.state}), so a
 * source of lazy inputs is parsed only where `update` re-checks. Undefined when `state` is not of
 * exactly `source`'s definitions, or not a state at all (a damaged cache): check in full then.
 */
export function resumeChecker(
  source: CheckSource,
  options: CheckOptions,
  state: CheckerState,
): Checker | undefined {
  const checker = new IncrementalChecker(source, options, state);
  return checker.resumed ? checker : undefined;
}

/** Whether a state's `reads` has their shape (a damaged cache's does not: check in full then). */
function readsValid(reads: CheckedDefinition["reads"] | undefined): boolean {
  if (typeof reads !== "object" || reads === null) return false;
  const strings = (v: unknown): boolean => {
    if (v === undefined) return true;
    if (!Array.isArray(v)) return false;
    for (const x of v) if (typeof x !== "string") return false;
    return true;
  };
  return strings(reads.ids) && strings(reads.keys) && strings(reads.layers);
}

function readsOf(deps: Deps): CheckedDefinition["reads"] {
  return {
    ...(deps.ids.size > 0 ? { ids: [...deps.ids] } : {}),
    ...(deps.keys.size > 0 ? { keys: [...deps.keys] } : {}),
    ...(deps.layers.size > 0 ? { layers: [...deps.layers] } : {}),
    ...(deps.app ? { app: true as const } : {}),
    ...(deps.timers ? { timers: true as const } : {}),
  };
}

function link<K>(index: Map<K, Set<string>>, key: K, id: string): void {
  let s = index.get(key);
  if (s === undefined) {
    s = new Set();
    index.set(key, s);
  }
  s.add(id);
}

function unlink<K>(index: Map<K, Set<string>>, key: K, id: string): void {
  const s = index.get(key);
  if (s === undefined) return;
  s.delete(id);
  if (s.size === 0) index.delete(key);
}

/** What a check read, as {@link Deps} holds it or as a state's `reads` spells it. */
interface Reads {
  readonly ids?: Iterable<string>;
  readonly keys?: Iterable<string>;
  readonly layers?: Iterable<Layer>;
  readonly app?: boolean;
  readonly timers?: boolean;
}

/**
 * Who read what: per definition id, name key and layer, the definitions whose check read it, and
 * those that depend on the app or on timers — what a change makes dirty.
 */
class DependencyIndex {
  private readonly byId = new Map<string, Set<string>>();
  private readonly byKey = new Map<string, Set<string>>();
  private readonly byLayer = new Map<Layer, Set<string>>();
  private readonly onApp = new Set<string>();
  private readonly onTimers = new Set<string>();
  /**
   * A resumed check's reads, by definition, not linked into the maps above yet: a check resumed in
   * a process of its own (a CLI write's gate) asks one question, and scanning the reads for it costs
   * less than linking every definition's. Linked at the second question. Measured on `kumiki add`
   * in its own process (medians in blocks per build, two runs each): 471 -> 401 and 513 -> 495 ms
   * of CPU at 5,000 definitions, 1,273 -> 1,213 and 1,259 -> 1,182 at 20,000.
   */
  private readonly kept = new Map<string, CheckedDefinition["reads"]>();
  /** Kept reads once linked into the maps: what {@link remove} unlinks for a definition without Deps. */
  private readonly linked = new Map<string, CheckedDefinition["reads"]>();
  private asked = 0;

  /** Takes a resumed definition's reads as the state gave them (see {@link kept}). */
  keep(id: string, reads: CheckedDefinition["reads"]): void {
    this.kept.set(id, reads);
  }

  /** Links the kept reads into the maps, from the second question on; true while they are kept. */
  private scanning(): boolean {
    if (this.kept.size === 0) return false;
    if (++this.asked < 2) return true;
    for (const [id, r] of this.kept) {
      this.add(id, r);
      this.linked.set(id, r);
    }
    this.kept.clear();
    return false;
  }

  /** Links what `id`'s check read: its {@link Deps}, or a resumed state's reads. */
  add(id: string, reads: Reads): void {
    for (const d of reads.ids ?? []) link(this.byId, d, id);
    for (const k of reads.keys ?? []) link(this.byKey, k, id);
    for (const l of reads.layers ?? []) link(this.byLayer, l, id);
    if (reads.app === true) this.onApp.add(id);
    if (reads.timers === true) this.onTimers.add(id);
  }

  /** Unlinks `id`: `deps`, its Deps when it was checked here, else the resumed reads kept or linked. */
  remove(id: string, deps: Deps | undefined): void {
    if (this.kept.delete(id)) return;
    const r = deps ?? this.linked.get(id);
    this.linked.delete(id);
    for (const d of r?.ids ?? []) unlink(this.byId, d, id);
    for (const k of r?.keys ?? []) unlink(this.byKey, k, id);
    for (const l of r?.layers ?? []) unlink(this.byLayer, l, id);
    this.onApp.delete(id);
    this.onTimers.delete(id);
  }

  /** The definitions whose check read definition `id`. */
  readersOf(id: string): Iterable<string> {
    // Asked first: the second question links the kept reads into the maps read next.
    const scan = this.scanning();
    const linked = this.byId.get(id) ?? [];
    if (!scan) return linked;
    const out = new Set(linked);
    for (const [reader, r] of this.kept) if (r.ids?.includes(id) === true) out.add(reader);
    return out;
  }

  /** What a change makes dirty: the changed, their readers, and the readers of the names, layers, app and timers it touched. */
  dirty(changed: ReadonlySet<string>, touched: Touched): Set<string> {
    // Asked first: the second question links the kept reads into the maps read next.
    const scan = this.scanning();
    const dirty = new Set<string>();
    for (const id of changed) {
      dirty.add(id);
      for (const d of this.byId.get(id) ?? []) dirty.add(d);
    }
    for (const k of touched.keys) for (const d of this.byKey.get(k) ?? []) dirty.add(d);
    for (const l of touched.layers) for (const d of this.byLayer.get(l) ?? []) dirty.add(d);
    if (touched.app) for (const d of this.onApp) dirty.add(d);
    if (touched.timers) for (const d of this.onTimers) dirty.add(d);
    if (scan)
      for (const [reader, r] of this.kept)
        if (!dirty.has(reader) && readsAny(r, changed, touched)) dirty.add(reader);
    return dirty;
  }
}

/**
 * Whether a resumed definition's `reads` hold anything a change touched. Plain loops, not
 * `some` with a callback per list: this runs once per definition of a resumed check, in a process
 * that has not optimized it: at 20,000 definitions a write's scan took 93 ms with the callbacks
 * and 61 without (medians of 5 profiles; `sync` of the gate 121 -> 70 ms).
 */
function readsAny(r: CheckedDefinition["reads"], changed: ReadonlySet<string>, touched: Touched): boolean {
  if ((r.app === true && touched.app) || (r.timers === true && touched.timers)) return true;
  return holdsAny(r.ids, changed) || holdsAny(r.keys, touched.keys) || holdsAny(r.layers, touched.layers);
}

/** Whether `list` holds a member of `set`. */
function holdsAny<T>(list: readonly T[] | undefined, set: ReadonlySet<T>): boolean {
  if (list === undefined || set.size === 0) return false;
  for (let i = 0; i < list.length; i++) if (set.has(list[i]!)) return true;
  return false;
}

/** What a change touched beyond the definitions themselves (see {@link DependencyIndex.dirty}). */
interface Touched {
  readonly keys: Set<string>;
  readonly layers: Set<Layer>;
  app: boolean;
  timers: boolean;
}

/** The {@link Checker} {@link createChecker} makes: per-definition diagnostics kept with what each read. */
class IncrementalChecker implements Checker {
  private readonly settings: ReturnType<typeof settingsOf>;
  private readonly keep: ReturnType<typeof narrowingFilter>;
  private readonly graph = new Graph();
  private readonly perDef = new Map<string, Diagnostic[]>();
  private readonly perDefNeeds = new Map<string, ReadonlyMap<Diagnostic, CapabilityNeed>>();
  private readonly depsOf = new Map<string, Deps>();
  /** The state's entries of the definitions not re-checked since the resume (kept as they are). */
  private readonly resumedDefs = new Map<string, CheckedDefinition>();
  private readonly index = new DependencyIndex();
  rechecked = 0;
  /** Whether the constructor took every definition's findings from the state it was given. */
  readonly resumed: boolean = false;

  constructor(
    private readonly source: CheckSource,
    options: CheckOptions,
    state?: CheckerState,
  ) {
    this.settings = settingsOf(options);
    this.keep = narrowingFilter(options);
    for (const node of source.values()) this.graph.add(node);
    if (state !== undefined) {
      this.resumed = this.resume(state);
      return;
    }
    for (const id of this.graph.nodes.keys()) this.recheck(id);
  }

  /** Takes every definition's findings from `state`; false when it does not cover exactly the graph's. */
  private resume(state: CheckerState): boolean {
    if (state?.v !== 1 || !Array.isArray(state.defs) || state.defs.length !== this.graph.nodes.size)
      return false;
    for (const d of state.defs) {
      if (!readsValid(d?.reads) || !this.graph.nodes.has(d.id) || this.resumedDefs.has(d.id)) return false;
      if (d.diagnostics !== undefined && !Array.isArray(d.diagnostics)) return false;
      this.resumedDefs.set(d.id, d);
      this.index.keep(d.id, d.reads);
      const out = d.diagnostics ?? [];
      if (out.length > 0) this.perDef.set(d.id, [...out]);
      if (Array.isArray(d.needs) && d.needs.length > 0) {
        const needs = new Map<Diagnostic, CapabilityNeed>();
        for (const [i, need] of d.needs) if (out[i] !== undefined) needs.set(out[i], need);
        this.perDefNeeds.set(d.id, needs);
      }
    }
    return true;
  }

  state(): CheckerState {
    const defs: CheckedDefinition[] = [...this.resumedDefs.values()];
    for (const [id, deps] of this.depsOf) {
      const out = this.perDef.get(id);
      const needs = this.perDefNeeds.get(id);
      defs.push({
        id,
        ...(out === undefined ? {} : { diagnostics: out }),
        reads: readsOf(deps),
        ...(needs === undefined || out === undefined
          ? {}
          : { needs: [...needs].map(([d, need]) => [out.indexOf(d), need] as const) }),
      });
    }
    return { v: 1, defs };
  }

  private forget(id: string): void {
    this.index.remove(id, this.depsOf.get(id));
    this.depsOf.delete(id);
    this.resumedDefs.delete(id);
    this.perDef.delete(id);
    this.perDefNeeds.delete(id);
  }

  private recheck(id: string): void {
    this.forget(id);
    const node = this.graph.nodes.get(id);
    if (node === undefined) return;
    const ctx = new CheckContext(this.graph, this.settings, node);
    checkDefinition(ctx);
    this.depsOf.set(id, ctx.deps);
    this.index.add(id, ctx.deps);
    if (ctx.out.length > 0) this.perDef.set(id, ctx.out);
    if (ctx.needs.size > 0) this.perDefNeeds.set(id, ctx.needs);
    this.rechecked++;
  }

  diagnostics(): Diagnostic[] {
    const all: Diagnostic[] = programDiagnostics(this.graph, this.settings, (id) => this.index.readersOf(id));
    for (const ds of this.perDef.values()) for (const d of ds) all.push(d);
    const kept = this.keep === undefined ? all : all.filter(this.keep);
    kept.sort(compareDiagnostics(this.graph));
    if (this.perDefNeeds.size === 0) return kept;
    const needs = new Map<Diagnostic, CapabilityNeed>();
    for (const m of this.perDefNeeds.values()) for (const [d, need] of m) needs.set(d, need);
    return shareCapabilityPatches(kept, needs, (id) => this.graph.nodes.get(id));
  }

  update(ids: Iterable<string>): Diagnostic[] {
    this.rechecked = 0;
    const changed = new Set(ids);
    const touched: Touched = { keys: new Set(), layers: new Set(), app: false, timers: false };
    // From the summary, not the definition: a lazy input that was replaced is not read again (its
    // text may no longer be in the graph), and its summary is what the indexes held of it.
    const note = (node: CheckInput, nameSetChanged: boolean): void => {
      const def = summaryOf(node);
      touched.keys.add(nameKey(def.layer, def.name));
      if (nameSetChanged) touched.layers.add(def.layer);
      if (def.layer === "app") touched.app = true;
      // What a timer's readers read is the set of declared names.
      if (def.timer !== undefined) touched.timers = true;
    };
    for (const id of changed) {
      const before = this.graph.remove(id);
      const after = this.source.get(id);
      if (after !== undefined && after.id !== id)
        throw new Error(`source.get(${JSON.stringify(id)}) returned a definition with id ${after.id}`);
      // A body change that keeps the name leaves every layer's name set as it was.
      const was = before === undefined ? undefined : summaryOf(before);
      const now = after === undefined ? undefined : summaryOf(after);
      const renamed =
        was === undefined || now === undefined || was.layer !== now.layer || was.name !== now.name;
      if (before !== undefined) note(before, renamed);
      if (after !== undefined) {
        this.graph.add(after);
        note(after, renamed);
      }
    }
    for (const id of this.index.dirty(changed, touched)) this.recheck(id);
    return this.diagnostics();
  }
}
