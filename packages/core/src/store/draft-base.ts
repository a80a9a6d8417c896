/**
 * The state of a write being drafted against a fork of the graph, and the steps every kind of
 * request shares: op-ids, placing an op on the fork, binding reference sites, deferred links of a
 * bundle, the closure of referrers. draft.ts adds a method per request kind (see {@link Draft}).
 */

import type { DefinitionState, Graph } from "../graph/graph.js";
import { compareDefinitions, parseText, qualified, siteTarget } from "../graph/materialize.js";
import { GraphReader } from "../graph/reader.js";
import { isLayer, type Layer } from "../lang/layers.js";
import type { ReferenceSite } from "../lang/references.js";
import { isStandardReference } from "../lang/stdlib.js";
import { type AuthorId, type DefId, defIdOf, type OpId, type OpIdGenerator } from "../ops/ids.js";
import {
  type ConfigOp,
  type ControlOp,
  isRefKey,
  type LockOp,
  type LogOp,
  type OpKind,
  parseOp,
  RESERVED_WORDS,
  type RefBindings,
  type RefKey,
  splitRefKey,
  type UnlockOp,
} from "../ops/op.js";
import { bodyLineOf, decomposeSource } from "../ops/source.js";
import type { BundleItem } from "./inputs.js";
import { ok, quoted, type Rejection, reject, type StoreResult } from "./result.js";
import { suggest } from "./suggest.js";
import { resolveTarget } from "./target.js";

// ---------------------------------------------------------------------------------------------
// Authoring: turning requests into ops, against a fork of the graph
// ---------------------------------------------------------------------------------------------

/** Site resolution failure, for messages. */
export interface Unresolved {
  readonly name: string;
  readonly layers: readonly Layer[];
  readonly line: number;
  readonly column: number;
}

/** The state of a draft and the steps every request shares; {@link Draft} writes the requests. */
export abstract class DraftBase {
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
  protected readonly addedHere = new Set<DefId>();

  /** Per `layer:name`, the bundle's adds of it not yet placed. */
  protected readonly toAdd = new Map<string, number>();

  /** The `layer:name` keys the bundle adds more than once (set by {@link reserve}). */
  protected duplicated: ReadonlySet<string> = new Set();

  /** Definitions removed as part of a cascade or an undo (their referrers go too). */
  readonly cascaded = new Set<DefId>();

  /** The task of the bundle item being written (the links a bundle writes for it carry it too). */
  protected itemTask: string | undefined;

  protected floor: OpId | undefined;

  /** `layer:name` of the definitions a bundle's adds will create. */
  protected readonly reserved = new Set<string>();

  /** References to a definition a later add of the bundle creates: bound by a link once it exists. */
  protected deferred: { source: DefId; key: RefKey }[] = [];

  constructor(
    base: Graph,
    protected readonly author: AuthorId,
    protected readonly now: () => number,
    protected readonly ids: OpIdGenerator,
  ) {
    this.fork = base.fork();
    this.reader = new GraphReader(this.fork);
    this.floor = base.maxOpId();
  }

  /** The next op-id: greater than every op held and every op of this write so far. */
  protected nextId(): OpId {
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
  protected awaitsLastOf(key: string): boolean {
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
  protected bindDeferred(added: DefinitionState): Rejection | undefined {
    const key = `${added.layer}:${added.name}`;
    const now = this.deferred.filter((d) => d.key === key);
    if (now.length === 0) return undefined;
    this.deferred = this.deferred.filter((d) => d.key !== key);
    for (const d of now) {
      const s = this.fork.definition(d.source);
      if (s === undefined || !s.alive) continue;
      const why = this.place({
        ...this.meta("link", s.layer, s.name, s.def, this.itemTask, this.nextId()),
        op: "link",
        ref: d.key,
        target: added.def,
      });
      if (why !== undefined) return why;
    }
    return undefined;
  }

  /** @internal For draft-history.ts. */
  meta(
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

  /** @internal For draft-history.ts. */
  place(op: LogOp): Rejection | undefined {
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

  protected target(qname: string, live = true): StoreResult<DefinitionState> {
    return resolveTarget(this.fork, qname, { live });
  }

  /**
   * Parses a definition text and binds every reference site to the definition it names now,
   * layer-aware (the first candidate layer that has one). `self` is the definition being written.
   */
  protected bind(
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
      const shown = text.split("\n")[span.line - 1] ?? "";
      // Positions as body:N counts them (docs/errors.md, Positions), not the parser's own.
      const line = bodyLineOf(text, span.line);
      return reject(
        "parse-error",
        `${q} does not parse at body:${line}, column ${span.column}: ${message.replace(/ at \d+:\d+$/, "")}\n  ${shown}\n  ${" ".repeat(Math.max(0, span.column - 1))}^`,
        {
          definition: q,
          line,
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
          line: bodyLineOf(text, site.span.line),
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
            `${m.name} at body:${m.line}, column ${m.column} (no ${m.layers.join(" or ")} of that name${m.suggestions.length > 0 ? `; did you mean ${m.suggestions.map((s) => s.name).join(", ")}?` : ""})`,
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
  protected unboundNames(id: DefId): Set<string> {
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

  protected badName(name: string): Rejection {
    return {
      code: "invalid-name",
      message: RESERVED_WORDS.has(name)
        ? `${quoted(name)} is a reserved word and cannot name a definition`
        : `${quoted(name)} is not a name: a letter, then letters, digits, _ or -, at most 32 characters`,
      details: { name },
    };
  }

  protected writeText(
    kind: "replace",
    s: DefinitionState,
    text: string,
    task: string | undefined,
    reverts?: OpId,
  ): Rejection | undefined {
    const bound = this.bind(text, { layer: s.layer, name: s.name }, s.def);
    if (!bound.ok) return bound.error;
    const parts = decomposeSource(text)!;
    return this.place({
      ...this.meta(kind, s.layer, s.name, s.def, task),
      op: kind,
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: bound.value.refs,
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  /** `ids` and every live definition that references one of them, transitively. */
  protected referrerClosure(ids: readonly DefId[]): Set<DefId> {
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
  /** @internal For draft-history.ts. */
  removeAll(
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
      const free = states.filter((x) => this.fork.referrersOf(x.def).every((r) => !left.has(r)));
      const batch = free.length > 0 ? free : [states[0]!];
      for (const x of batch) {
        left.delete(x.def);
        this.cascaded.add(x.def);
        this.removed.push(this.fork.label(x.def));
        const why = this.place({
          ...this.meta("remove", x.layer, x.name, x.def, task),
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
  protected keysShownAs(s: DefinitionState, ref: string): StoreResult<{ key: RefKey; bound: boolean }[]> {
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
}
