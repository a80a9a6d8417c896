/**
 * The conflict records of a graph (ai-edit.md §9.3.3, docs/semantics.md §7): read off the fold's
 * state — name contests, lost registers, failures, rollbacks, kept dangling edges, contested and
 * concurrent locks, orphans — each with what was decided and how to retry. A pure function of
 * the fold, so identical on every replica.
 */

import type { Layer } from "../lang/layers.js";
import type { Causality } from "../ops/causality.js";
import { compareIds } from "../ops/causality.js";
import { matchesLockPattern } from "../ops/glob.js";
import type { DefId, OpId } from "../ops/ids.js";
import { type ApplyFailure, type DanglingEdge, type DefinitionState, nameOf } from "../ops/merge.js";
import type { LogOp, Op } from "../ops/op.js";
import { describePatchFailure } from "../ops/patch.js";
import type { FoldState } from "./fold-state.js";
import type { Conflict, LockEntry, Rollback } from "./records.js";
import type { RemedyStep } from "./remedy.js";

/** What the records are read from: the fold's state and the graph's own lookups. */
export interface ConflictSource {
  readonly st: FoldState;
  readonly causality: Causality<LogOp>;
  label(id: DefId): string;
  lookup(layer: Layer, name: string): DefId | undefined;
  defOp(id: OpId): Op | undefined;
  locks(): LockEntry[];
  opsOf(id: DefId): readonly OpId[];
  isRolledBack(id: OpId): boolean;
  /**
   * The definitions that can hold a record of their own (see `mayConflict`), or more; every
   * definition when absent. A graph taken up from a snapshot names them without reading the rest.
   */
  candidates?(): Iterable<DefinitionState>;
}

/**
 * Ops by another agent written concurrently with a live lock on a name they touch: the lock did
 * not bind them (their writer could not have seen it), so they stand, and each is recorded
 * (`lock-concurrent`) so that neither agent is left believing the other respected it.
 */
function lockConcurrentConflicts(g: ConflictSource, only?: ReadonlySet<DefId>): Conflict[] {
  if (!g.st.control.has("locks")) return [];
  const out: Conflict[] = [];
  const locks = g.locks();
  if (locks.length === 0) return out;
  const states = only === undefined ? g.st.defs.values() : [...only].flatMap((d) => g.st.defs.get(d) ?? []);
  for (const s of states) {
    const covering = locks.filter((l) => {
      const dot = l.pattern.indexOf(".");
      const layer = l.pattern.slice(0, dot);
      return layer === "*" || layer === s.layer;
    });
    if (covering.length === 0) continue;
    for (const opId of g.opsOf(s.def)) {
      const op = g.defOp(opId);
      if (op === undefined || g.isRolledBack(opId)) continue;
      const names = op.op === "rename" ? [op.name, op["new-name"]] : [op.name];
      for (const l of covering) {
        if (l.agent === op.author || !names.some((n) => matchesLockPattern(l.pattern, op.layer, n))) continue;
        if (!g.causality.concurrent(l.opId, opId)) continue;
        const here = g.label(s.def);
        out.push({
          id: `lock-concurrent:${opId}`,
          kind: "lock-concurrent",
          ops: [opId, l.opId],
          definitions: [s.def],
          reason: `${op.op} ${opId} of ${here} by ${op.author} was written concurrently with ${l.agent}'s lock on ${l.pattern} (${l.opId}), which it had not seen`,
          decision: `the ${op.op} stands (a lock binds only ops written after it); ${l.pattern} stays locked by ${l.agent}`,
          retry: `${op.author}: check with ${l.agent}, and revert the ${op.op} ${opId} if it should not stand`,
          remedy: [{ do: "revert", op: opId }],
        });
        break;
      }
    }
  }
  return out;
}

/** True when the edge still dangles in the graph as it is now. */
function stillDangles(g: ConflictSource, edge: DanglingEdge): boolean {
  const s = g.st.defs.get(edge.source);
  return (
    s?.alive === true && s.body.refs[edge.key] === edge.target && g.st.defs.get(edge.target)?.alive !== true
  );
}

function rollbackConflict(g: ConflictSource, opId: OpId, rb: Rollback): Conflict {
  const op = g.defOp(opId);
  const label = (id: DefId) => g.label(id);
  if (rb.cause === "locked") {
    const here = op === undefined ? opId : `${op.layer}.${op.name}`;
    return {
      id: `locked:${opId}`,
      kind: "locked",
      ops: [opId, rb.lock["op-id"]],
      definitions: op === undefined ? [] : [op.def],
      reason: `${op?.op ?? "op"} ${opId} by ${op?.author ?? "?"} touches ${here}, which ${rb.lock.agent} had locked (${rb.pattern}, lock ${rb.lock["op-id"]}) before the op was written`,
      decision: `the op is left out: only ${rb.lock.agent} writes ${rb.pattern} while the lock stands`,
      retry: `ask ${rb.lock.agent} to unlock ${rb.pattern}, then re-issue the ${op?.op ?? "op"} on the latest graph`,
      remedy: [{ do: "unlock", agent: rb.lock.agent, pattern: rb.pattern }],
    };
  }
  const src = label(rb.edge.source);
  const dst = label(rb.edge.target);
  const restored = op?.op === "remove";
  return {
    id: `rolled-back:${opId}`,
    kind: "rolled-back",
    ops: [opId, ...rb.with],
    definitions: [rb.edge.source, rb.edge.target],
    reason: rb.concurrent
      ? `${src} references ${dst} (${rb.edge.key}) and ${dst} was removed concurrently: the reference would dangle`
      : `${src} references ${dst} (${rb.edge.key}), which is gone: the reference would dangle`,
    decision: `conflict policy ${rb.policy}: rolled back ${op?.op ?? "op"} ${opId}${rb.with.length > 0 ? ` together with ${rb.with.join(", ")}` : ""}${restored ? ` (${dst} is restored)` : ""}`,
    retry: restored
      ? `${dst} is back; remove the references to it first (see its referrers), then remove it again`
      : `re-issue your ${op?.op ?? "op"} on the latest graph (view ${src} first); the ops it conflicted with are listed here`,
    remedy: restored
      ? [
          { do: "refs", def: dst },
          { do: "remove", def: dst },
        ]
      : [{ do: "view", def: src }],
    policy: rb.policy,
  };
}

/** The name contests: a definition that wants a name another holds (all, or those about `only`). */
function nameContests(g: ConflictSource, only: ReadonlySet<DefId> | undefined): Conflict[] {
  const out: Conflict[] = [];
  const contests =
    only === undefined
      ? g.st.names.entries()
      : [...only].flatMap((d) => {
          const s = g.st.defs.get(d);
          if (s === undefined || !s.alive) return [];
          const key = `${s.layer}:${s.name}`;
          return [[key, g.st.names.get(key) ?? []] as [string, readonly DefId[]]];
        });
  const doneKeys = new Set<string>();
  for (const [key, claimants] of contests) {
    if (claimants.length < 2 || doneKeys.has(key)) continue;
    doneKeys.add(key);
    const [layer, name] = key.split(":") as [Layer, string];
    const holder = g.lookup(layer, name)!;
    const hs = g.st.defs.get(holder)!;
    for (const d of claimants) {
      if (d === holder) continue;
      const s = g.st.defs.get(d)!;
      out.push({
        id: `name-taken:${s.nameWinner["op-id"]}`,
        kind: "name-taken",
        ops: [s.nameWinner["op-id"], hs.nameWinner["op-id"]],
        definitions: [d, holder],
        reason: `${d} and ${holder} both want the name ${layer}.${name} (${g.causality.concurrent(s.nameWinner["op-id"], hs.nameWinner["op-id"]) ? "concurrent " : ""}${s.nameWinner.op} and ${hs.nameWinner.op})`,
        decision: `${layer}.${name} shows ${holder} (its name claim ${hs.nameWinner["op-id"]} has the greater op-id); ${d} is kept, reachable by its identity`,
        retry: `rename ${d} to a free name, or remove it`,
        remedy: [
          { do: "rename", def: d },
          { do: "remove", def: d },
        ],
      });
    }
  }
  return out;
}

/**
 * Whether `definitionConflicts` can find anything in `s` (a lost register, a failure, an
 * overridden remove): asked first because almost no definition has a record (with the map's own
 * iterator, `status` in a write at 5,000 definitions went from 18 to 5 ms).
 */
export function mayConflict(s: DefinitionState): boolean {
  return (
    s.textMax.length > 1 || s.nameMax.length > 1 || s.failures.size > 0 || (s.alive && s.removes.length > 0)
  );
}

/** The records about one definition: lost replaces and renames, failed edits, overridden removes. */
function definitionConflicts(g: ConflictSource, s: DefinitionState): Conflict[] {
  const out: Conflict[] = [];
  // Labelled only when a record needs it: most definitions have none, and a label costs a lookup.
  let label_: string | undefined;
  const here = () => (label_ ??= g.label(s.def));
  // Concurrent replaces: all but the winner lost.
  if (s.textMax.length > 1) {
    for (const w of s.textMax) {
      if (w === s.textWinner) continue;
      out.push({
        id: `replace-lost:${w["op-id"]}`,
        kind: "replace-lost",
        ops: [w["op-id"], s.textWinner["op-id"]],
        definitions: [s.def],
        reason: `${w.op} ${w["op-id"]} and ${s.textWinner.op} ${s.textWinner["op-id"]} set the text of ${here()} concurrently`,
        decision: `kept the text of ${s.textWinner["op-id"]} (newer ts, then greater op-id); the other text is in the history`,
        retry: `view ${here()}, then replace it with the text you want`,
        remedy: [
          { do: "view", def: here() },
          { do: "edit", def: here() },
        ],
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
        definitions: [s.def],
        reason: `${w["op-id"]} (→ ${nameOf(w)}) and ${s.nameWinner["op-id"]} (→ ${nameOf(s.nameWinner)}) renamed ${s.def} concurrently`,
        decision: `the name is ${s.name} (newer ts, then greater op-id)`,
        retry: `rename ${here()} again if ${nameOf(w)} is the name you want`,
        remedy: [{ do: "rename", def: here() }],
      });
    }
  }
  for (const [opId, f] of s.failures) out.push(failureConflict(s, here(), opId, f));
  if (s.alive && s.removes.length > 0) {
    for (const r of s.removes) {
      const against = s.tags.filter((t) => g.causality.concurrent(t["op-id"], r["op-id"]));
      if (against.length === 0) continue;
      out.push({
        id: `remove-overridden:${r["op-id"]}`,
        kind: "remove-overridden",
        ops: [r["op-id"], ...against.map((t) => t["op-id"])],
        definitions: [s.def],
        reason: `remove ${r["op-id"]} of ${here()} was concurrent with ${against.map((t) => `${t.op} ${t["op-id"]}`).join(", ")}, which it had not seen`,
        decision: `${here()} is kept (a write concurrent with a remove wins)`,
        retry: `view ${here()}; remove it again if it should go`,
        remedy: [
          { do: "view", def: here() },
          { do: "remove", def: here() },
        ],
      });
    }
  }
  return out;
}

/** References kept dangling by the `warn` policy, while they still dangle. */
function danglingConflicts(g: ConflictSource): Conflict[] {
  const out: Conflict[] = [];
  const label = (id: DefId) => g.label(id);
  for (const k of g.st.kept.values()) {
    if (k.reason !== "warn" || !stillDangles(g, k.edge)) continue;
    const src = label(k.edge.source);
    const dst = label(k.edge.target);
    const ops = [k.edge.introducer, ...k.edge.removes.map((r) => r["op-id"])];
    out.push({
      id: `dangling:${k.edge.source}:${k.edge.key}`,
      kind: "dangling",
      ops,
      definitions: [k.edge.source, k.edge.target],
      reason: k.concurrent
        ? `${src} references ${dst} (${k.edge.key}) and ${dst} was removed concurrently: the reference dangles`
        : `${src} references ${dst} (${k.edge.key}), which is gone: the reference dangles`,
      decision: `conflict policy warn: kept both ops; ${src} keeps a reference to the removed ${dst}`,
      retry: `restore ${dst} (revert its remove), or point ${src} elsewhere (link the reference, or edit ${src})`,
      remedy: [
        ...k.edge.removes.map((r): RemedyStep => ({ do: "revert", op: r["op-id"] })),
        { do: "link", def: src },
        { do: "edit", def: src },
      ],
      policy: k.policy,
    });
  }
  return out;
}

/** Patterns locked by two agents at once (concurrent locks). */
function lockContests(g: ConflictSource): Conflict[] {
  const out: Conflict[] = [];
  const byPattern = new Map<string, LockEntry[]>();
  for (const l of g.locks()) byPattern.set(l.pattern, [...(byPattern.get(l.pattern) ?? []), l]);
  for (const [pattern, holders] of byPattern) {
    if (holders.length < 2) continue;
    const sorted = [...holders].sort((a, b) => compareIds(a.opId, b.opId));
    out.push({
      id: `lock-contested:${sorted[sorted.length - 1]!.opId}`,
      kind: "lock-contested",
      ops: sorted.map((h) => h.opId),
      definitions: [],
      reason: `${sorted.map((h) => h.agent).join(" and ")} both lock ${pattern} (concurrent locks)`,
      decision: `both locks stand: nobody else may write ${pattern}, and each holder is locked out by the other`,
      retry: `one of them unlocks ${pattern}`,
      remedy: [{ do: "unlock", pattern }],
    });
  }
  return out;
}

/** Ops with no effect: their target is missing, of another layer, or its add was rolled back. */
function orphanConflicts(g: ConflictSource): Conflict[] {
  const out: Conflict[] = [];
  for (const [opId, o] of g.st.orphans.entries()) {
    const op = g.defOp(opId);
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
      retry: `re-issue the ${op?.op ?? "op"} against a definition that exists (list them first)`,
      remedy: [{ do: "list" }],
    });
  }
  return out;
}

/**
 * Every conflict record, sorted by id. With `only`, the records about those definitions (name
 * contests they are in, their registers) and every rollback and orphan, which is what the write
 * gate compares before and after a write without walking the whole graph.
 */
export function conflictRecords(g: ConflictSource, only?: ReadonlySet<DefId>): Conflict[] {
  const out = nameContests(g, only);
  const states =
    only === undefined
      ? (g.candidates?.() ?? g.st.defs.values())
      : [...only].flatMap((d) => g.st.defs.get(d) ?? []);
  for (const s of states) if (mayConflict(s)) out.push(...definitionConflicts(g, s));
  for (const [opId, rb] of g.st.rolledBack.entries()) out.push(rollbackConflict(g, opId, rb));
  out.push(
    ...danglingConflicts(g),
    ...lockContests(g),
    ...lockConcurrentConflicts(g, only),
    ...orphanConflicts(g),
  );
  return out.sort((a, b) => compareIds(a.id, b.id));
}

function failureConflict(s: DefinitionState, here: string, opId: OpId, f: ApplyFailure): Conflict {
  if (f.kind === "edit-rebase-failed") {
    return {
      id: `edit-rebase-failed:${opId}`,
      kind: "edit-rebase-failed",
      ops: [opId, f.onto],
      definitions: [s.def],
      reason: `edit ${opId} of ${here} was written against another version and ${describePatchFailure(f.failure)} in the text of ${f.onto}`,
      decision: "the edit is not applied; the text stays as merged without it",
      retry: `view ${here} and issue the edit again against its current text`,
      remedy: [
        { do: "view", def: here },
        { do: "edit", def: here },
      ],
    };
  }
  return {
    id: `link-site-missing:${opId}`,
    kind: "link-site-missing",
    ops: [opId, f.onto],
    definitions: [s.def],
    reason: `link ${opId} binds ${f.ref} in ${here}, but its text (version ${f.onto}) no longer names it`,
    decision: "the link is not applied",
    retry: `view ${here}; link again once its text references ${f.ref}`,
    remedy: [
      { do: "view", def: here },
      { do: "link", def: here },
    ],
  };
}
