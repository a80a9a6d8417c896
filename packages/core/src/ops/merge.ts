/**
 * THE merge rules: how each op kind acts on a definition, given what it is concurrent with.
 * docs/semantics.md states them as a table for every pair of op kinds; this module is that table
 * as code. Everything here is a pure function of the ops and their causality, so every replica that
 * holds the same ops decides the same way, whatever order they arrived in.
 *
 * A definition's state is a set of registers, each resolved the same way — keep the *maximal*
 * writes (those no other write to the register happened after), and among several (concurrent)
 * maximal writes take a deterministic winner:
 *
 * - text (`add`/`replace`): last writer wins, newer `ts` then greater op-id; `edit`, `link` and
 *   `unlink` are not contenders but changes applied on top of the winner, in causal order, each
 *   rebased when it was written against another version (an edit only if every anchor still
 *   matches exactly once — otherwise a recorded failure, never a silent drop);
 * - name (`add`/`rename`): last writer wins, newer `ts` then greater op-id;
 * - existence: add-wins observed-remove — a `remove` removes the writes its author had seen; the
 *   definition lives while any write (any op but remove) is unseen by every remove.
 *
 * Across definitions: two live definitions wanting one name in a layer — the greater claim op-id
 * shows under it, the other is kept (addressable by identity) and listed as a conflict; a reference
 * left dangling by concurrent ops is resolved by the conflict policy ({@link resolveDangling}).
 */
import type { Layer } from "../lang/layers.js";
import type { DefId, OpId } from "./ids.js";
import type {
  AddOp,
  ConflictPolicy,
  EditOp,
  LinkOp,
  Op,
  RefBindings,
  RefKey,
  RemoveOp,
  RenameOp,
  ReplaceOp,
  UnlinkOp,
} from "./op.js";
import { splitRefKey } from "./op.js";
import { applyPatch, type PatchFailure } from "./patch.js";
import { composeSource } from "./source.js";

/** Causality, as the merge rules need it. */
export interface MergeContext {
  /** True when op `a` is an ancestor of op `b` (both placed). */
  happenedBefore(a: Op, b: Op): boolean;
  /** True when the op with id `a` is an ancestor of op `b`. */
  idHappenedBefore(a: OpId, b: OpId): boolean;
  /** The position of a placed op in the causal order. */
  position(op: Op): number;
  /** A position at or before which every op is an ancestor-or-self of `op`. */
  coveredBy(op: Op): number;
}

/** A definition's text: the full source and the identity each of its reference keys is bound to. */
export interface Body {
  /** Full source as written (names as its author saw them; rendering shows the current ones). */
  readonly text: string;
  readonly refs: RefBindings;
  /** The op that produced this version. */
  readonly version: OpId;
  /**
   * True when this is exactly the body an author who saw `version` saw: `version`'s own recorded
   * result, not a rebase of it. Only then may an edit written against `version` take its recorded
   * result instead of being rebased.
   */
  readonly exact: boolean;
}

/** Why an edit or link did not take effect. */
export type ApplyFailure =
  | { readonly kind: "edit-rebase-failed"; readonly onto: OpId; readonly failure: PatchFailure }
  | { readonly kind: "link-site-missing"; readonly onto: OpId; readonly ref: RefKey };

/** The ops that set a definition's whole text. */
export type TextWrite = AddOp | ReplaceOp;
/** The ops that set a definition's name. */
export type NameWrite = AddOp | RenameOp;
/** The ops applied on top of the text winner. */
export type TextChange = EditOp | LinkOp | UnlinkOp;

/** The merged state of one definition (mutated in place while the fold runs; forks copy it first). */
export interface DefinitionState {
  /** Its identity (`def_…`), as ops name it. */
  readonly def: DefId;
  readonly layer: Layer;
  readonly added: AddOp;
  /** Every op applied to it (not rolled back), in causal order; the add first. */
  ops: Op[];
  /** Every placed op that targets it, applied or not (rolled back, orphaned), in causal order. */
  history: OpId[];
  /** The maximal ops among `ops`. */
  heads: Op[];
  alive: boolean;
  /** The maximal non-remove ops that no remove has seen; the definition is alive iff non-empty. */
  tags: Op[];
  removes: RemoveOp[];
  name: string;
  nameWinner: NameWrite;
  nameMax: NameWrite[];
  textWinner: TextWrite;
  textMax: TextWrite[];
  body: Body;
  /** Per reference key, the op that bound it to its current target. */
  introducers: Map<RefKey, OpId>;
  /** Edits and links that did not take effect, and why. */
  failures: Map<OpId, ApplyFailure>;
}

/** Total order among concurrent writes to one register: newer ts, then greater op-id. */
export function lwwGreater(a: { ts: number; "op-id": OpId }, b: { ts: number; "op-id": OpId }): boolean {
  return a.ts !== b.ts ? a.ts > b.ts : a["op-id"] > b["op-id"];
}

/** The last-writer-wins winner of a non-empty set of concurrent writes. */
export function lwwWinner<T extends { ts: number; "op-id": OpId }>(writes: readonly T[]): T {
  let w = writes[0]!;
  for (const x of writes) if (lwwGreater(x, w)) w = x;
  return w;
}

/** The name a name write sets. */
export function nameOf(w: NameWrite): string {
  return w.op === "add" ? w.name : w["new-name"];
}

/** The body an add, replace or clean edit sets. */
function bodyOf(op: AddOp | ReplaceOp | EditOp): Body {
  return {
    text: composeSource({ layer: op.layer, name: op.name, body: op.body, head: op.head ?? `${op.layer} ` }),
    refs: op.refs,
    version: op["op-id"],
    exact: true,
  };
}

/** A new definition state from its add. */
export function createDefinition(add: AddOp): DefinitionState {
  const body = bodyOf(add);
  const introducers = new Map<RefKey, OpId>();
  for (const k of Object.keys(add.refs) as RefKey[]) introducers.set(k, add["op-id"]);
  return {
    def: add.def,
    layer: add.layer,
    added: add,
    ops: [add],
    history: [add["op-id"]],
    heads: [add],
    alive: true,
    tags: [add],
    removes: [],
    name: add.name,
    nameWinner: add,
    nameMax: [add],
    textWinner: add,
    textMax: [add],
    body,
    introducers,
    failures: new Map(),
  };
}

/** A copy of `s` that can be mutated without touching `s` (a fork's copy-on-write). */
export function cloneDefinition(s: DefinitionState): DefinitionState {
  return {
    ...s,
    ops: [...s.ops],
    history: [...s.history],
    heads: [...s.heads],
    tags: [...s.tags],
    removes: [...s.removes],
    nameMax: [...s.nameMax],
    textMax: [...s.textMax],
    introducers: new Map(s.introducers),
    failures: new Map(s.failures),
  };
}

/**
 * The antichain `set` after `op`: the members `op` did not happen after, then `op` (so `op` is
 * causally after all of them exactly when the result has length 1). May reuse `set`, which the
 * caller replaces by the result.
 */
function supersede<T extends Op>(set: T[], op: T, ctx: MergeContext): T[] {
  if (set.length === 1) {
    const first = set[0]!;
    if (!ctx.happenedBefore(first, op)) return [first, op];
    set[0] = op; // the caller stores the result where `set` was: reuse it
    return set;
  }
  const next: T[] = [];
  for (const m of set) if (!ctx.happenedBefore(m, op)) next.push(m);
  next.push(op);
  return next;
}

/**
 * Applies one op (not the add) to a definition, the op being the next in causal order. Mutates `s`;
 * returns the CHANGED_* bits of what changed.
 */
export function applyToDefinition(s: DefinitionState, op: Op, ctx: MergeContext): number {
  s.heads = supersede(s.heads, op, ctx);
  // True when every op already applied to the definition happened before this one: then no
  // register holds a concurrent write, and each rule reduces to "the op wins" (the common case,
  // decided with one causality query).
  const dominates = s.heads.length === 1;
  s.ops.push(op);
  let change = 0;

  // Existence: add-wins observed-remove.
  const wasAlive = s.alive;
  if (op.op === "remove") {
    s.removes.push(op);
    s.tags = dominates ? [] : s.tags.filter((t) => !ctx.happenedBefore(t, op));
    s.alive = s.tags.length > 0;
  } else {
    s.tags = dominates ? only(s.tags, op) : supersede(s.tags, op, ctx);
    s.alive = true;
  }
  if (wasAlive !== s.alive) change |= CHANGED_ALIVE;

  switch (op.op) {
    case "add":
      throw new Error(`merge: add ${op["op-id"]} applied to existing definition ${s.def}`);
    case "remove":
      break;
    case "rename": {
      const next = dominates ? only(s.nameMax, op) : supersede(s.nameMax, op, ctx);
      s.nameMax = next;
      const winner = lwwWinner(next);
      s.nameWinner = winner;
      const name = nameOf(winner);
      if (name !== s.name) change |= CHANGED_NAME;
      s.name = name;
      break;
    }
    case "replace": {
      const next = dominates ? only(s.textMax, op) : supersede(s.textMax, op, ctx);
      s.textMax = next;
      const winner = lwwWinner(next);
      if (winner !== op) break; // a concurrent replace with a newer ts (or greater op-id) stays
      s.textWinner = op;
      const before = s.body;
      setBody(s, bodyOf(op), op);
      // Failures of changes this replace has seen are settled by it.
      if (s.failures.size > 0) {
        for (const id of [...s.failures.keys()])
          if (ctx.idHappenedBefore(id, op["op-id"])) s.failures.delete(id);
      }
      if (!dominates) {
        // Changes concurrent with the winning replace apply on top of it, in causal order.
        for (const c of concurrentChanges(s, op, ctx)) applyChange(s, c);
      }
      change |= bodyChange(before, s.body);
      break;
    }
    case "edit":
    case "link":
    case "unlink": {
      const before = s.body;
      applyChange(s, op);
      change |= bodyChange(before, s.body);
      break;
    }
  }
  return change;
}

/**
 * `[op]`, reusing `set` when it already has one element: the definition state owns its arrays (a
 * fork copies them first), and the common path should not allocate.
 */
function only<T extends Op>(set: T[], op: T): T[] {
  if (set.length !== 1) return [op];
  set[0] = op;
  return set;
}

/** Bits of what {@link applyToDefinition} changed. */
export const CHANGED_TEXT = 1;
export const CHANGED_REFS = 2;
export const CHANGED_ALIVE = 4;
export const CHANGED_NAME = 8;

function bodyChange(before: Body, after: Body): number {
  // setBody keeps the refs object when the bindings are the same, so identity tells.
  return (before.text !== after.text ? CHANGED_TEXT : 0) | (before.refs !== after.refs ? CHANGED_REFS : 0);
}

/** The text changes (edit, link, unlink) applied before `op` that `op` did not see, in causal order. */
function concurrentChanges(s: DefinitionState, op: Op, ctx: MergeContext): TextChange[] {
  const covered = ctx.coveredBy(op);
  const out: TextChange[] = [];
  // s.ops is in causal order and ends with `op`; everything at or before `covered` is an ancestor.
  for (let i = s.ops.length - 2; i >= 0; i--) {
    const c = s.ops[i]!;
    if (ctx.position(c) <= covered) break;
    if ((c.op === "edit" || c.op === "link" || c.op === "unlink") && !ctx.happenedBefore(c, op)) {
      out.push(c);
    }
  }
  return out.reverse();
}

/** True when two binding sets bind the same keys to the same identities. */
export function sameBindings(a: RefBindings, b: RefBindings): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (a[k as RefKey] !== b[k as RefKey]) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}

function setBody(s: DefinitionState, body: Body, by: Op): void {
  const old = s.body.refs;
  if (sameBindings(old, body.refs)) {
    // The same bindings: keep the object (so indexes see no change) and who introduced each.
    s.body = old === body.refs ? body : { ...body, refs: old };
    return;
  }
  const introducers = new Map<RefKey, OpId>();
  for (const k of Object.keys(body.refs) as RefKey[]) {
    const keep = old[k] === body.refs[k] ? s.introducers.get(k) : undefined;
    introducers.set(k, keep ?? by["op-id"]);
  }
  s.introducers = introducers;
  s.body = body;
}

/**
 * Applies an edit, link or unlink on top of the current text. An edit written against the current
 * version takes its recorded result; one written against another version is rebased: its anchors
 * are applied to the current text, and it fails (recorded) unless each matches exactly once.
 */
function applyChange(s: DefinitionState, c: TextChange): void {
  s.failures.delete(c["op-id"]);
  const onto = s.body.version;
  if (c.op === "edit") {
    if (c.base === onto && s.body.exact) {
      setBody(s, bodyOf(c), c);
      return;
    }
    const r = applyPatch(s.body.text, c.patch);
    if (!r.ok) {
      s.failures.set(c["op-id"], { kind: "edit-rebase-failed", onto, failure: r.failure });
      return;
    }
    // References of the rebased text: the current bindings, overlaid with the edit's, keeping the
    // keys whose name still occurs in the text (names the edit removed must not keep an edge alive).
    const names = identifiers(r.text);
    const refs: Record<string, DefId> = {};
    for (const [k, v] of Object.entries({ ...s.body.refs, ...c.refs })) {
      if (names.has(splitRefKey(k as RefKey).name)) refs[k] = v;
    }
    setBody(s, { text: r.text, refs: refs as RefBindings, version: c["op-id"], exact: false }, c);
    return;
  }
  if (c.op === "link") {
    if (!hasIdentifier(s.body.text, splitRefKey(c.ref).name)) {
      s.failures.set(c["op-id"], { kind: "link-site-missing", onto, ref: c.ref });
      return;
    }
    setBody(
      s,
      {
        text: s.body.text,
        refs: { ...s.body.refs, [c.ref]: c.target },
        version: c["op-id"],
        exact: s.body.exact,
      },
      c,
    );
    return;
  }
  // unlink: the binding is gone either way; a key the text no longer binds needs no change.
  if (!(c.ref in s.body.refs)) return;
  const refs: Record<string, DefId> = { ...s.body.refs };
  delete refs[c.ref];
  setBody(s, { text: s.body.text, refs: refs as RefBindings, version: c["op-id"], exact: s.body.exact }, c);
}

const IDENT_RE = /[A-Za-z][A-Za-z0-9_-]*/g;

/**
 * Every identifier-like word of a text, strings and comments included: an over-approximation of
 * the names its reference sites can use, found without parsing (the fold never parses).
 */
export function identifiers(text: string): Set<string> {
  return new Set(text.match(IDENT_RE) ?? []);
}

/** Whether `c` (a UTF-16 code) can continue an identifier: [A-Za-z0-9_-]. */
function identifierPart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

/** Whether `c` can start an identifier: [A-Za-z]. */
function identifierStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

/**
 * `identifiers(text).has(name)` without collecting every identifier of the text: a fold applies a
 * link per recursive reference an import binds (926 at 5,000 definitions), where building each
 * text's whole set took 5.5–7.4 ms in a process of its own and this search 1.5. A match of
 * {@link IDENT_RE} starts at a letter not inside an identifier begun further left (a run of
 * identifier characters holding a letter), and runs to the first character that cannot continue it.
 */
export function hasIdentifier(text: string, name: string): boolean {
  if (name === "" || !identifierStart(name.charCodeAt(0))) return false;
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const end = at + name.length;
    if (end < text.length && identifierPart(text.charCodeAt(end))) continue;
    let inside = false;
    for (let j = at - 1; j >= 0 && identifierPart(text.charCodeAt(j)); j--) {
      if (identifierStart(text.charCodeAt(j))) {
        inside = true;
        break;
      }
    }
    if (!inside) return true;
  }
  return false;
}

/** Replays a definition from its ops (the add first, causal order); undefined without the add. */
export function replayDefinition(ops: readonly Op[], ctx: MergeContext): DefinitionState | undefined {
  const first = ops[0];
  if (first === undefined || first.op !== "add") return undefined;
  const s = createDefinition(first);
  for (let i = 1; i < ops.length; i++) applyToDefinition(s, ops[i]!, ctx);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Across definitions
// ---------------------------------------------------------------------------------------------

/**
 * Which of several live definitions wanting one name in one layer shows under it: the one whose
 * name claim (its add, or the rename that gave it the name) has the greatest op-id. The others stay
 * in the graph, addressable by identity, and are listed as conflicts until renamed or removed.
 */
export function nameHolder(claims: readonly { def: DefId; claim: OpId }[]): DefId | undefined {
  let best: { def: DefId; claim: OpId } | undefined;
  for (const c of claims) if (best === undefined || c.claim > best.claim) best = c;
  return best?.def;
}

export type { ConflictPolicy } from "./op.js";

/** A live definition's reference to a definition that is gone (removed, or never added). */
export interface DanglingEdge {
  readonly source: DefId;
  readonly key: RefKey;
  readonly target: DefId;
  /** The op that bound `key` to `target`. */
  readonly introducer: OpId;
  /** The target's removes, when the target exists (and is therefore removed). */
  readonly removes: readonly RemoveOp[];
  /** The ops applied to the source, in causal order (to tell whether a forced remove saw them all). */
  readonly sourceOps: readonly Op[];
}

/** What the policy decided for one dangling edge. */
export interface DanglingDecision {
  /** Ops to roll back (leave out of the fold from now on). */
  readonly rollBack: readonly OpId[];
  /** True when the edge exists only because its two sides were concurrent. */
  readonly concurrent: boolean;
  /**
   * Set when the edge stays dangling: `warn` (the policy keeps both sides and records a warning),
   * `forced` (a forced remove whose author saw the reference and the source as they are: no
   * conflict at all).
   */
  readonly kept?: "warn" | "forced";
}

/**
 * The conflict policy (ai-edit.md §9.4.2), decided for one dangling edge from the ops alone, so every
 * replica decides alike:
 *
 * - a forced remove (`remove --force`, a cascade) whose author had seen the binding and every op of
 *   the source is intended: the edge is kept, not a conflict, under every policy;
 * - `strict`: when the binding and the target's removal were concurrent (neither author could have
 *   seen the other), both roll back — the removes, so the target is back, and the op that bound the
 *   reference; when they were not (a binding reappearing because another rollback restored an older
 *   text, or a write concurrent with a forced remove), only the removes roll back;
 * - `heal`: the removes roll back (the target is back with the text it had), the binding stays;
 * - `warn`: nothing rolls back; the edge is kept and recorded as a warning;
 * - a reference to a definition that does not exist at all (its add was rolled back) rolls back the
 *   op that bound it, except under `warn`, which keeps it.
 */
export function resolveDangling(
  policy: ConflictPolicy,
  edge: DanglingEdge,
  ctx: MergeContext,
): DanglingDecision {
  if (edge.removes.length === 0) {
    return policy === "warn"
      ? { rollBack: [], concurrent: false, kept: "warn" }
      : { rollBack: [edge.introducer], concurrent: false };
  }
  const concurrent = edge.removes.some(
    (r) =>
      !ctx.idHappenedBefore(edge.introducer, r["op-id"]) &&
      !ctx.idHappenedBefore(r["op-id"], edge.introducer),
  );
  if (!concurrent && edge.removes.some((r) => r.force === true && sawSource(r, edge, ctx)))
    return { rollBack: [], concurrent: false, kept: "forced" };
  if (policy === "warn") return { rollBack: [], concurrent, kept: "warn" };
  const rollBack = edge.removes.map((r) => r["op-id"]);
  return {
    rollBack: concurrent && policy === "strict" ? [...rollBack, edge.introducer] : rollBack,
    concurrent,
  };
}

/** True when the forced remove `r` saw the binding and no op of the source is concurrent with it. */
function sawSource(r: RemoveOp, edge: DanglingEdge, ctx: MergeContext): boolean {
  if (!ctx.idHappenedBefore(edge.introducer, r["op-id"])) return false;
  for (const o of edge.sourceOps) {
    if (!ctx.happenedBefore(o, r) && !ctx.happenedBefore(r, o)) return false;
  }
  return true;
}
