/**
 * Drafts that write the past back: the revert of one op (an add by a remove, a remove by bringing
 * the definition back, a text change by the text before it, a rename by the name before it) and
 * the undo of a task (each definition it touched back to its state before the task).
 */
import type { DefinitionState } from "../graph/graph.js";
import { qualified } from "../graph/materialize.js";
import type { DefId, OpId } from "../ops/ids.js";
import { sameBindings } from "../ops/merge.js";
import { isControlOp, type RefBindings, type RefKey } from "../ops/op.js";
import { decomposeSource } from "../ops/source.js";
import type { Draft } from "./draft.js";
import type { Rejection } from "./result.js";
import type { TaskUndoPlan } from "./task-undo.js";

export function draftRevert(draft: Draft, opId: OpId, task: string | undefined): Rejection | undefined {
  const g = draft.fork;
  const held = g.op(opId);
  if (held === undefined) return { code: "unknown-op", message: `no op ${opId} in this graph` };
  if (isControlOp(held)) {
    return {
      code: "not-revertable",
      message: `${opId} is a ${held.op} op; change the policy or the locks directly (setConflictPolicy, lock, unlock)`,
    };
  }
  const op = held;
  if (g.isRolledBack(opId) || g.orphanReason(opId) !== undefined) {
    return {
      code: "not-revertable",
      message: `${opId} was rolled back by a conflict; it has no effect to revert (see conflicts)`,
    };
  }
  const s = g.definition(op.def);
  if (s === undefined)
    return { code: "not-revertable", message: `${opId} targets ${op.def}, which does not exist` };
  const q = g.label(s.def);
  const diverged = (what: string): Rejection => ({
    code: "revert-diverged",
    message: `cannot revert ${op.op} ${opId} of ${q}: ${what}; revert the later changes first, or write the text you want`,
    details: { op: opId, definition: q },
  });
  // Reverting a revert that brought a definition back removes it again.
  const undoesRemove = op.reverts !== undefined && g.op(op.reverts)?.op === "remove" && op.op === "replace";
  if (op.op === "add" || undoesRemove) {
    if (!s.alive) return { code: "not-revertable", message: `${q} is already removed` };
    if (undoesRemove && s.body.version !== opId) return diverged("its text changed since");
    return draft.remove({ qname: s.def, ...(task === undefined ? {} : { task }) }, opId);
  }
  switch (op.op) {
    case "remove": {
      if (s.alive)
        return { code: "not-revertable", message: `${q} is live: the remove ${opId} is not in effect` };
      if (s.ops[s.ops.length - 1] !== op) return diverged("it changed since");
      const parts = decomposeSource(s.body.text);
      if (parts === undefined) return diverged("its text cannot be restored");
      const holder = g.lookup(s.layer, s.name);
      if (holder !== undefined) {
        return {
          code: "duplicate-name",
          message: `cannot bring back ${qualified(s.layer, s.name)}: the name is now taken by ${holder}; rename that one first`,
          details: { holder },
        };
      }
      return restore(draft, s, s.body.text, s.body.refs, opId, task);
    }
    case "rename": {
      if (s.nameWinner !== op)
        return s.nameMax.includes(op)
          ? { code: "not-revertable", message: `${opId} lost to a concurrent rename` }
          : diverged(`it was renamed again since (now ${s.name})`);
      return draft.rename({ qname: s.def, newName: op.name, ...(task === undefined ? {} : { task }) }, opId);
    }
    default: {
      if (!s.alive) return { code: "not-revertable", message: `${q} is removed; revert its removal first` };
      if (s.failures.has(opId))
        return {
          code: "not-revertable",
          message: `${opId} did not apply (see conflicts); there is nothing to revert`,
        };
      if (op.op === "replace" && s.textWinner !== op && s.textMax.includes(op)) {
        return {
          code: "not-revertable",
          message: `${opId} lost to a concurrent replace; there is nothing to revert`,
        };
      }
      if (s.body.version !== opId) return diverged("its text changed since");
      const prior = g.bodyBefore(s.def, opId);
      if (prior === undefined)
        return { code: "not-revertable", message: `${opId} left no earlier text to restore` };
      return restore(draft, s, prior.text, prior.refs, opId, task);
    }
  }
}

/**
 * Writes the ops of a task undo: first the definitions the task removed come back, then texts and
 * names return to what they were, then what the task added goes (referrers first). A binding to
 * a definition that is not live yet is written unbound and linked once everything is back, so no
 * op of the write ever binds to a definition that is gone.
 */
export function draftUndo(draft: Draft, plan: TaskUndoPlan, task: string): Rejection | undefined {
  const later: { def: DefId; key: RefKey; target: DefId }[] = [];
  const restoreText = (s: DefinitionState, text: string, refs: RefBindings): Rejection | undefined => {
    const now: Record<string, DefId> = {};
    for (const [k, t] of Object.entries(refs) as [RefKey, DefId][]) {
      if (draft.fork.definition(t)?.alive === true || t === s.def) now[k] = t;
      else later.push({ def: s.def, key: k, target: t });
    }
    return restore(draft, s, text, now as RefBindings, undefined, task);
  };
  const ordered = [...plan.definitions].sort((a, b) => (a.revive === b.revive ? 0 : a.revive ? -1 : 1));
  for (const d of ordered) {
    if (d.before === undefined || !d.before.alive) continue;
    const s = draft.fork.definition(d.def)!;
    const sameText = s.alive && s.body.text === d.before.text && sameBindings(s.body.refs, d.before.refs);
    if (!sameText) {
      const why = restoreText(s, d.before.text, d.before.refs);
      if (why !== undefined) return why;
    }
    const now = draft.fork.definition(d.def)!;
    if (now.name !== d.before.name) {
      const why = draft.rename({ qname: now.def, newName: d.before.name, task });
      if (why !== undefined) return why;
    }
  }
  for (const l of later) {
    const s = draft.fork.definition(l.def)!;
    if (draft.fork.definition(l.target)?.alive !== true) {
      return {
        code: "undefined-reference",
        message: `cannot restore ${draft.fork.label(l.def)}: it referenced ${draft.fork.label(l.target)} (${l.key}), which is gone and not part of the task; restore it first`,
        details: { definition: draft.fork.label(l.def), key: l.key, target: l.target },
      };
    }
    const why = draft.place({
      ...draft.meta("link", s.layer, s.name, s.def, task),
      op: "link",
      ref: l.key,
      target: l.target,
    });
    if (why !== undefined) return why;
  }
  const gone = new Set(
    plan.definitions
      .filter(
        (d) => (d.before === undefined || !d.before.alive) && draft.fork.definition(d.def)?.alive === true,
      )
      .map((d) => d.def),
  );
  if (gone.size > 0) {
    const why = draft.removeAll(gone, task, []);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** A replace that sets a stored text and its bindings as they were (a revert's op). */
function restore(
  draft: Draft,
  s: DefinitionState,
  text: string,
  refs: RefBindings,
  reverts: OpId | undefined,
  task: string | undefined,
): Rejection | undefined {
  const parts = decomposeSource(text);
  if (parts === undefined)
    return {
      code: "not-revertable",
      message: `the earlier text of ${qualified(s.layer, s.name)} cannot be restored`,
    };
  return draft.place({
    ...draft.meta("replace", s.layer, s.name, s.def, task),
    op: "replace",
    body: parts.body,
    ...(parts.head === undefined ? {} : { head: parts.head }),
    refs,
    ...(reverts === undefined ? {} : { reverts }),
  });
}
