/**
 * The fold's control state (ai-edit.md §9.8.3, docs/semantics.md §11): the policy register of
 * `config` ops and the ownership locks of `lock` / `unlock` ops, decided by causality alone, so
 * every replica agrees — which lock binds an op, which locks are live, which policy is in force.
 */
import { type Causality, compareIds } from "../ops/causality.js";
import { matchesLockPattern } from "../ops/glob.js";
import { lwwWinner } from "../ops/merge.js";
import type { ConfigOp, ControlOp, LockOp, LogOp, Op, UnlockOp } from "../ops/op.js";
import type { FoldState } from "./fold-state.js";
import type { LockEntry } from "./records.js";

/** Takes a control op into the control state. */
export function placeControl(st: FoldState, causality: Causality<LogOp>, op: ControlOp): void {
  if (op.op === "config") {
    // The policy register: the maximal config ops; among concurrent ones, newer ts then op-id.
    const max = (st.control.get("config") ?? []).filter((c) => !causality.opHappenedBefore(c, op));
    st.control.set("config", [...max, op]);
    return;
  }
  st.control.set("locks", [...(st.control.get("locks") ?? []), op]);
}

/**
 * The lock, by another agent, that was in force where `op` was written — in its causal past and
 * not lifted by an unlock in its causal past — on a name the op touches (its target's name as
 * the op records it, and a rename's new name). A lock concurrent with the op does not bind it.
 */
export function lockViolation(
  st: FoldState,
  causality: Causality<LogOp>,
  op: Op,
): { lock: LockOp; pattern: string } | undefined {
  const all = st.control.get("locks") ?? [];
  const names = op.op === "rename" ? [op.name, op["new-name"]] : [op.name];
  for (const l of all) {
    if (l.op !== "lock" || l.agent === op.author) continue;
    for (const pattern of l.patterns) {
      if (!names.some((n) => matchesLockPattern(pattern, op.layer, n))) continue;
      if (!causality.happenedBefore(l["op-id"], op["op-id"])) continue;
      const lifted = all.some(
        (u) =>
          u.op === "unlock" &&
          liftsLock(u, l.agent, pattern) &&
          causality.happenedBefore(l["op-id"], u["op-id"]) &&
          causality.happenedBefore(u["op-id"], op["op-id"]),
      );
      if (!lifted) return { lock: l, pattern };
    }
  }
  return undefined;
}

/** The config op that set the policy in force, if any did. */
export function policyOpOf(st: FoldState): ConfigOp | undefined {
  const max = st.control.get("config") as readonly ConfigOp[] | undefined;
  return max === undefined || max.length === 0 ? undefined : lwwWinner(max);
}

/**
 * The live ownership locks, sorted by pattern then agent: each pattern a lock op gave an agent,
 * unless an unlock by then (causally after it) lifted it. A lock and an unlock that are
 * concurrent: the lock stands (an unlock only lifts what its author had seen).
 */
export function liveLocks(st: FoldState, causality: Causality<LogOp>): LockEntry[] {
  const all = st.control.get("locks") ?? [];
  const live = new Map<string, LockEntry>();
  for (const l of all) {
    if (l.op !== "lock") continue;
    for (const pattern of l.patterns) {
      const lifted = all.some(
        (u) =>
          u.op === "unlock" &&
          liftsLock(u, l.agent, pattern) &&
          causality.happenedBefore(l["op-id"], u["op-id"]),
      );
      if (lifted) continue;
      const key = `${pattern} ${l.agent}`;
      const had = live.get(key);
      if (had === undefined || l["op-id"] > had.opId)
        live.set(key, { agent: l.agent, pattern, opId: l["op-id"], ts: l.ts });
    }
  }
  return [...live.values()].sort((a, b) => compareIds(a.pattern, b.pattern) || compareIds(a.agent, b.agent));
}

/** Whether unlock `u` lifts the lock `agent` holds on `pattern` (an unlock without patterns lifts them all). */
function liftsLock(u: UnlockOp, agent: string, pattern: string): boolean {
  return u.agent === agent && (u.patterns === undefined || u.patterns.includes(pattern));
}
