import {
  type Checker,
  type CheckerState,
  type CheckOptions,
  createChecker,
  resumeChecker,
} from "../check/check.js";
import { requireCode } from "../check/codes.js";
import type { Diagnostic } from "../check/diagnostic.js";
import { type CheckInput, lazyInput, summaryOf } from "../check/graph.js";
import type { DefinitionState, DefinitionSummary, Graph as OpGraph } from "../graph/graph.js";
import { Materializer, parseText } from "../graph/materialize.js";
import type { Layer } from "../lang/layers.js";
import type { DefId } from "../ops/ids.js";
import { sameBindings } from "../ops/merge.js";
import { bodyLineOf } from "../ops/source.js";

/**
 * What the checker reads of one store definition: its text with the current names (so locations
 * say `tile.TodoRow.body:2` with today's names and auto-patch anchors match what `view` shows), its
 * reference sites, and per site the identity it is bound to. A live definition a name conflict
 * hides is checked too, marked `hidden` (E0007 reports it). Undefined for a definition the check
 * does not see: removed, or with a text that does not parse (a merge can leave one; the store
 * reports it).
 */
export function storeInput(
  graph: OpGraph,
  materializer: Materializer,
  s: DefinitionState,
): CheckInput | undefined {
  if (!s.alive) return undefined;
  const text = materializer.render(s);
  const shown = parseText(text);
  const bound = materializer.sites(s);
  if (!shown.ok || bound === undefined) return undefined;
  // Rendering changes names only, so the sites line up one to one; the write gate refuses a text
  // for which they would not (projection-mismatch), and then the unmatched tail counts as unbound.
  const targets = shown.sites.map((_, i) => bound[i]?.target ?? null);
  const hidden = !graph.isVisible(s.def);
  return {
    id: s.def,
    def: shown.def,
    sites: shown.sites,
    targets,
    source: text,
    ...(hidden ? { hidden } : {}),
  };
}

/**
 * E0008 for a live definition whose text does not parse (a faithful import keeps such a text; a
 * merge can leave one), located like every diagnostic (`reducer.inc.body:2`, lines counted from the
 * layer keyword's); undefined when it parses or is removed.
 */
export function parseDiagnostic(s: DefinitionState): Diagnostic | undefined {
  if (!s.alive) return undefined;
  const p = parseText(s.body.text);
  if (p.ok) return undefined;
  const line = bodyLineOf(s.body.text, p.error.span.line);
  const info = requireCode("E0008");
  return {
    code: "E0008",
    kind: info.kinds[0]!,
    severity: info.severity,
    location: `${s.layer}.${s.name}.body:${line}`,
    message: `${s.layer}.${s.name} does not parse: ${p.error.message.replace(/ at \d+:\d+$/, "")} (body:${line}, column ${p.error.span.column}); replace or edit it until it parses`,
    definition: s.def,
    span: { ...p.error.span, line },
  };
}

/** What a definition's check input is made of (its text and bindings are one immutable body). */
interface Seen {
  /** Undefined: the definition as a restored graph's snapshot kept it, not read (see `Graph.isAsRestored`). */
  readonly body: DefinitionState["body"] | undefined;
  readonly name: string;
  readonly alive: boolean;
  readonly layer: DefinitionState["layer"];
}

function seen(s: DefinitionState): Seen {
  return { body: s.body, name: s.name, alive: s.alive, layer: s.layer };
}

/** What a check saw of a definition: read, or (unread in a restored graph) as its snapshot kept it. */
function seenOf(s: DefinitionSummary): Seen {
  return s.state === undefined
    ? { body: undefined, name: s.name, alive: s.alive, layer: s.layer }
    : seen(s.state);
}

/** A graph's heads as one string: equal heads, equal ops, equal definitions. */
export function headsKey(graph: OpGraph | { readonly heads: readonly string[] }): string {
  const heads = "heads" in graph && Array.isArray(graph.heads) ? graph.heads : (graph as OpGraph).heads();
  return [...heads].sort().join(",");
}

/**
 * A live check as JSON (`LiveCheck.state`): what `LiveCheck.resume` goes on from in another
 * process, for the same graph state, options and checker code.
 */
export interface LiveCheckState {
  readonly v: 1;
  /** The heads of the graph it is the check of (sorted, comma-joined op ids). */
  readonly at: string;
  readonly checker: CheckerState;
  /** The E0008 of each live definition whose text does not parse. */
  readonly unparsed: readonly Diagnostic[];
  /** The timer each checked reducer that declares one declares: [id, name]. */
  readonly timers: readonly (readonly [string, string])[];
}

/** Whether `s`, of `graph`, is as `a` saw it (a state the snapshot kept: when its text is the snapshot's). */
function same(a: Seen, s: DefinitionState, graph: OpGraph): boolean {
  if (a.name !== s.name || a.alive !== s.alive) return false;
  return a.body === undefined ? graph.isAsRestored(s) : a.body === s.body;
}

/**
 * Whether `a`, read in another fold of the same ops, reads as `s`: text, bindings, name, life. A
 * state seen unread (as a snapshot kept it) is the same when `graph` still holds it as kept.
 */
function sameContent(a: Seen, s: DefinitionState, graph: OpGraph): boolean {
  if (a.name !== s.name || a.alive !== s.alive || a.layer !== s.layer) return false;
  if (a.body === undefined) return graph.isAsRestored(s);
  return a.body === s.body || (a.body.text === s.body.text && sameBindings(a.body.refs, s.body.refs));
}

/**
 * A checker kept in step with a store's graph (or a fork of it): {@link sync} finds what changed
 * since the last call — a definition's text and bindings are one body object, replaced on every
 * change, so the scan is a few identity comparisons per definition — and re-checks only that and
 * what it can affect. Parsing, rendering and checking happen only for what changed.
 */
export class LiveCheck {
  private readonly source = new Map<string, CheckInput>();
  /** What each definition was last read from (also for the ones the check does not see). */
  private readonly states = new Map<DefId, Seen>();
  private readonly checker: Checker;
  /**
   * The graph of the current sync: where a lazy input (of a resumed check) is read when a check
   * first looks at it. A definition no sync marked dirty reads the same in every graph synced
   * through since, so reading it in this one is reading it as of the resume.
   */
  private graph: OpGraph;
  /** The materializer lazy inputs are read with, of {@link graph}. */
  private reader: { readonly graph: OpGraph; readonly m: Materializer } | undefined;
  /** E0008 per live definition whose text does not parse (the checker cannot see those). */
  private readonly unparsed = new Map<DefId, Diagnostic>();
  private current: Diagnostic[];
  /**
   * The heads of the graph last synced to. Two graphs with the same heads hold the same ops and so
   * the same definitions (the fold is deterministic), whichever object they are: a store's graph
   * after a write commits equals the fork the gate checked.
   */
  private key: string;
  /** After a sync to a fork: the heads before it and what it changed, to go back cheaply. */
  private undo: { readonly key: string; readonly ids: ReadonlySet<DefId> } | undefined;

  /**
   * `heads`: the graph's heads, when the graph's own are not its state's (see {@link sync}).
   * `from`: a state to resume (internal: {@link LiveCheck.resume}).
   */
  constructor(graph: OpGraph, options: CheckOptions, heads: string = headsKey(graph), from?: LiveCheckState) {
    this.graph = graph;
    this.key = heads;
    const checker = from === undefined ? undefined : this.resumeFrom(graph, options, from);
    if (checker !== undefined) {
      this.checker = checker;
      this.current = this.withUnparsed(checker.diagnostics());
      return;
    }
    this.states.clear();
    this.source.clear();
    this.unparsed.clear();
    const m = new Materializer(graph);
    for (const s of graph.definitions()) {
      this.states.set(s.def, seen(s));
      const input = storeInput(graph, m, s);
      if (input !== undefined) this.source.set(s.def, input);
      else this.noteUnparsed(s);
    }
    this.checker = createChecker(this.source, options);
    this.current = this.withUnparsed(this.checker.diagnostics());
  }

  /**
   * The check `state` kept of this graph (another process's {@link state}), taken up without
   * checking or parsing anything: each definition is read when a later sync first needs it. A
   * state of other heads than `heads`, or not of this graph's definitions, is not taken: the check
   * is then made in full, as by the constructor.
   */
  static resume(
    graph: OpGraph,
    options: CheckOptions,
    state: LiveCheckState,
    heads: string = headsKey(graph),
  ): LiveCheck {
    return new LiveCheck(graph, options, heads, state);
  }

  /**
   * The check `state` kept of an earlier state of this graph, `past` (the graph at `state.at`:
   * `graphAt`), brought to `graph`: what changed between the two — a definition's text, bindings,
   * name or life, which definition shows under a name — and what that can affect is re-checked,
   * nothing else. The held summaries are the past's, so a name a definition no longer has is
   * still known for what read it. A `state` that does not fit `past` (a damaged one) is not
   * taken: the past is then checked in full and brought to `graph` the same way.
   */
  static resumeBehind(
    graph: OpGraph,
    options: CheckOptions,
    state: LiveCheckState,
    past: OpGraph,
    heads: string = headsKey(graph),
  ): LiveCheck {
    const check = new LiveCheck(past, options, state.at, state);
    check.catchUp(graph, past, heads);
    return check;
  }

  /** Brings a check of `past` (another fold of an earlier state) to `graph`, at `heads`. */
  private catchUp(graph: OpGraph, past: OpGraph, heads: string): void {
    const since = past.undone;
    const changed = since === undefined ? this.changedFrom(graph, past) : this.changedOf(graph, past, since);
    this.graph = graph;
    const dirty = this.refresh(graph, changed);
    // What was not re-read reads the same here: later syncs compare with this graph's bodies. A
    // past made by undoing ops holds the graph's own states but for the definitions undone.
    if (since !== undefined) {
      for (const id of since) {
        const s = dirty.has(id) ? undefined : graph.definition(id);
        if (s !== undefined) this.states.set(id, seen(s));
      }
    } else for (const s of graph.summaries()) if (!dirty.has(s.def)) this.states.set(s.def, seenOf(s));
    this.key = heads;
    if (dirty.size > 0) this.current = this.withUnparsed(this.checker.update(dirty));
  }

  /**
   * What differs between `past`, made by undoing ops on `graph` ({@link OpGraph.asOf}), and
   * `graph`: among the definitions those ops target (`since`), by content (the past replayed them:
   * new body objects), and who shows under the names they held then or hold now — found without a
   * walk over every definition (at 5,000 definitions the walks cost a check one write behind about
   * 20 ms of its 300).
   */
  private changedOf(graph: OpGraph, past: OpGraph, since: ReadonlySet<DefId>): Set<DefId> {
    const changed = this.changedAmong(graph, since, sameContent);
    const keys = new Map<string, readonly [Layer, string]>();
    for (const id of since)
      for (const s of [past.definition(id), graph.definition(id)])
        if (s !== undefined) keys.set(`${s.layer}:${s.name}`, [s.layer, s.name]);
    for (const [layer, name] of keys.values()) {
      const shownBefore = past.lookup(layer, name);
      const shownNow = graph.lookup(layer, name);
      if (shownBefore === shownNow) continue;
      for (const id of [...past.claimants(layer, name), ...graph.claimants(layer, name)])
        if ((id === shownBefore) !== (id === shownNow)) changed.add(id);
    }
    return changed;
  }

  /** What differs between `past`, another fold of an earlier state, and `graph`: a walk over both. */
  private changedFrom(graph: OpGraph, past: OpGraph): Set<DefId> {
    // The two folds share no body objects, so what changed is found by content. A definition the
    // graph (taken up from a snapshot) has not read is as the snapshot kept it, in the past too:
    // the past is a fork of it or a fold of the ops before, and an op since would have read it.
    const changed = new Set<DefId>();
    for (const s of graph.summaries()) {
      const was = this.states.get(s.def);
      if (was === undefined) changed.add(s.def);
      else if (s.state === undefined && was.body === undefined) continue;
      else if (!sameContent(was, s.state ?? graph.definition(s.def)!, graph)) changed.add(s.def);
    }
    for (const id of this.states.keys()) if (!graph.holdsDefinition(id)) changed.add(id);
    // Who shows under a contested name turns on each claimant's name op, which can change while
    // the name stays (two peers renaming it to one name): who shows is compared too.
    const [hiddenBefore, hiddenNow] = [past.shadowed(), graph.shadowed()];
    for (const id of hiddenBefore) if (!hiddenNow.has(id)) changed.add(id);
    for (const id of hiddenNow) if (!hiddenBefore.has(id)) changed.add(id);
    return changed;
  }

  /** Whether the last construction took its state (false: it checked in full). */
  get resumed(): boolean {
    return this.wasResumed;
  }
  private wasResumed = false;

  /** This check as JSON, for {@link resume} in another process (see {@link LiveCheckState}). */
  state(): LiveCheckState {
    const timers: (readonly [string, string])[] = [];
    for (const input of this.source.values()) {
      const { timer } = summaryOf(input);
      if (timer !== undefined) timers.push([input.id, timer]);
    }
    return {
      v: 1,
      at: this.key,
      checker: this.checker.state(),
      unparsed: [...this.unparsed.values()],
      timers,
    };
  }

  /** Takes up `from` (see {@link resume}); undefined, with nothing kept, when it does not fit. */
  private resumeFrom(graph: OpGraph, options: CheckOptions, from: LiveCheckState): Checker | undefined {
    if (from?.v !== 1 || from.at !== this.key || !Array.isArray(from.unparsed) || !Array.isArray(from.timers))
      return undefined;
    for (const d of from.unparsed) {
      if (typeof d?.definition !== "string") return undefined;
      this.unparsed.set(d.definition as DefId, d);
    }
    const timers = new Map<string, string>(from.timers as [string, string][]);
    const shadowed = graph.shadowed();
    // Summaries, not states: a graph taken up from a snapshot reads no row for this.
    for (const s of graph.summaries()) {
      this.states.set(s.def, seenOf(s));
      if (!s.alive || this.unparsed.has(s.def)) continue;
      const timer = timers.get(s.def);
      const summary = {
        layer: s.layer,
        name: s.name,
        hidden: shadowed.has(s.def),
        ...(timer === undefined ? {} : { timer }),
      };
      this.source.set(s.def, lazyInput(s.def, summary, this.readLazily));
    }
    const checker = resumeChecker(this.source, options, from.checker);
    this.wasResumed = checker !== undefined;
    return checker;
  }

  /** A resumed definition's input, read in the graph of the current sync. */
  private readonly readLazily = (id: string): CheckInput => {
    const { graph } = this;
    if (this.reader?.graph !== graph) this.reader = { graph, m: new Materializer(graph) };
    const s = graph.definition(id as DefId);
    const input = s === undefined ? undefined : storeInput(graph, this.reader.m, s);
    if (input === undefined)
      throw new Error(
        `live check: the resumed ${id} does not read in the graph synced to (the kept state is not this graph's)`,
      );
    return input;
  };

  /** The heads ({@link headsKey}) of the graph last synced to: what {@link diagnostics} are of. */
  get at(): string {
    return this.key;
  }

  /** The diagnostics as of the last sync. */
  diagnostics(): Diagnostic[] {
    return this.current;
  }

  /** How many definitions the last sync re-checked. */
  get rechecked(): number {
    return this.checker.rechecked;
  }

  /** The input the check reads for `id`, as of the last sync. */
  input(id: string): CheckInput | undefined {
    return this.source.get(id);
  }

  /**
   * Brings the check to `graph`'s state and returns every diagnostic. With `hint` — every
   * definition that may have changed since the last sync (the write gate knows them) — only those
   * are looked at; without it every definition is compared with what was last read. `heads` is
   * the graph's heads as {@link headsKey} writes them, for a caller that knows them better than
   * the graph can say (a store graph shares its causal order with the fork a write is tried on).
   */
  sync(graph: OpGraph, hint?: Iterable<DefId>, heads: string = headsKey(graph)): Diagnostic[] {
    const key = heads;
    this.graph = graph;
    if (key === this.key) return this.current;
    let changed: Set<DefId>;
    if (hint !== undefined) changed = this.changedAmong(graph, hint);
    else if (this.undo !== undefined && this.undo.key === key) changed = new Set(this.undo.ids);
    else changed = this.changedAll(graph);
    const dirty = this.refresh(graph, changed);
    this.undo = hint === undefined ? undefined : { key: this.key, ids: dirty };
    this.key = key;
    if (dirty.size > 0) this.current = this.withUnparsed(this.checker.update(dirty));
    return this.current;
  }

  private noteUnparsed(s: DefinitionState): void {
    const d = parseDiagnostic(s);
    if (d === undefined) this.unparsed.delete(s.def);
    else this.unparsed.set(s.def, d);
  }

  /**
   * The checker's diagnostics and then each E0008, by definition id (less those `skip` names). A
   * reference bound to a definition that does not parse is not an undefined name: the checker
   * cannot see its target, so its E01xx is dropped (the target's E0008 stands for it).
   */
  private withUnparsed(ds: Diagnostic[], skip?: ReadonlyMap<string, unknown>): Diagnostic[] {
    if (this.unparsed.size === 0) return ds;
    const opaque = (id: string | null | undefined): boolean =>
      id !== null && id !== undefined && this.unparsed.has(id as DefId) && skip?.has(id) !== true;
    const kept = ds.filter((d) => {
      if (!d.code.startsWith("E01") || d.definition === undefined || d.span === undefined) return true;
      const input = this.source.get(d.definition);
      const i = input?.sites.findIndex((site) => site.span.offset === d.span!.offset) ?? -1;
      return i < 0 || !opaque(input!.targets[i]);
    });
    const extra = [...this.unparsed].filter(([id]) => skip?.has(id) !== true);
    extra.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return [...kept, ...extra.map(([, d]) => d)];
  }

  private changedAll(graph: OpGraph): Set<DefId> {
    const changed = new Set<DefId>();
    let matched = 0;
    for (const s of graph.definitions()) {
      const was = this.states.get(s.def);
      if (was !== undefined) matched++;
      if (was === undefined || !same(was, s, graph)) changed.add(s.def);
    }
    // Definitions this check holds that the graph does not (it was last synced to a fork).
    if (matched < this.states.size) {
      for (const id of this.states.keys()) if (graph.definition(id) === undefined) changed.add(id);
    }
    return changed;
  }

  /**
   * Which of `ids` `graph` holds otherwise than this check last saw them, by `compare`: {@link
   * same} in the graph synced from (bodies compared by identity), `sameContent` in another fold.
   */
  private changedAmong(
    graph: OpGraph,
    ids: Iterable<DefId>,
    compare: (a: Seen, s: DefinitionState, graph: OpGraph) => boolean = same,
  ): Set<DefId> {
    const changed = new Set<DefId>();
    for (const id of ids) {
      const was = this.states.get(id);
      const now = graph.definition(id);
      if (was === undefined ? now !== undefined : now === undefined || !compare(was, now, graph))
        changed.add(id);
    }
    return changed;
  }

  /** Re-reads the changed definitions and what their change shows in; returns all it re-read. */
  private refresh(graph: OpGraph, changed: ReadonlySet<DefId>): Set<DefId> {
    const dirty = new Set<DefId>(changed);
    for (const id of changed) {
      const was = this.states.get(id);
      const now = graph.definition(id);
      // A new name or a change of life shows in every referrer's text, and can change which
      // definition shows under the old and the new name.
      if (was?.name !== now?.name || was?.alive !== now?.alive) {
        for (const r of graph.referrersOf(id)) dirty.add(r);
        for (const s of [was, now]) {
          if (s === undefined) continue;
          for (const c of graph.claimants(s.layer, s.name)) dirty.add(c);
        }
      }
    }
    const m = new Materializer(graph);
    for (const id of dirty) {
      const s = graph.definition(id);
      if (s === undefined) {
        this.states.delete(id);
        this.source.delete(id);
        this.unparsed.delete(id);
        continue;
      }
      this.states.set(id, seen(s));
      const input = storeInput(graph, m, s);
      if (input === undefined) {
        this.source.delete(id);
        this.noteUnparsed(s);
      } else {
        this.source.set(id, input);
        this.unparsed.delete(id);
      }
    }
    return dirty;
  }

  /**
   * The diagnostics the graph would have with `changes` made (an input, or undefined to drop the
   * definition), without keeping them: the check is put back as it was before returning.
   */
  tryChanges(changes: ReadonlyMap<string, CheckInput | undefined>): Diagnostic[] {
    const saved = new Map<string, CheckInput | undefined>();
    for (const [id, input] of changes) {
      saved.set(id, this.source.get(id));
      if (input === undefined) this.source.delete(id);
      else this.source.set(id, input);
    }
    // A changed definition's E0008 is the change's to keep or drop: a change is a text that parses.
    const out = this.withUnparsed(this.checker.update(changes.keys()), changes);
    for (const [id, input] of saved) {
      if (input === undefined) this.source.delete(id);
      else this.source.set(id, input);
    }
    this.current = this.withUnparsed(this.checker.update(saved.keys()));
    return out;
  }
}
