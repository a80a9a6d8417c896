/**
 * Proving, without a fold, that ops which arrive change no merge decision: the common arrival of
 * definitions nobody else touched. A sync asks which conflicts and quarantined ops the merge
 * brought; folding a 7,000-op graph to learn "none" costs 40-60 ms on every pull.
 */
import type { Layer } from "../lang/layers.js";
import { compareIds } from "../ops/causality.js";
import type { DefId, OpId } from "../ops/ids.js";
import { isControlOp, isWireOp, type Op } from "../ops/op.js";

/** The definitions an op's text references (none for an op without text). */
function refTargets(op: Op): readonly DefId[] {
  return "refs" in op ? Object.values(op.refs) : [];
}

/**
 * True when folding `held` and `received` together provably records no conflict, rollback, orphan
 * or quarantined op that folding `held` alone does not (and leaves every held op's fate as it was);
 * false means "fold to find out", never "something changed". `held` and `received` are disjoint
 * by op-id (what a replica held, and what a sync brought).
 *
 * It holds when every op passes the wire schema, the graph has no control op (no locks, the
 * default conflict policy), every op's parents are held with smaller op-ids (so the causal order
 * is the op-id order and nothing waits, and no held op waits for a received one), and every
 * received op is an `add` that stands alone: the only op on its definition, which no held op
 * references or links to, under a `layer:name` no other op names, whose references are all to
 * definitions added earlier in that order that stand alone in the same way (added once, never
 * touched after, referencing only such definitions). Such an add applies as written, takes
 * part in no name contest, leaves no reference dangling and is not referenced by anything that
 * could dangle, so no merge decision involves it. Cost: one pass over the ops (each checked
 * against the wire schema), no fold.
 */
export function addsStandAlone(held: readonly unknown[], received: readonly unknown[]): boolean {
  if (received.length === 0) return true;
  /** name → the layers received adds claim it in (a name in two layers is two names). */
  const claimed = new Map<string, Layer[]>();
  const receivedIds = new Set<OpId>();
  for (const x of received) {
    // Valid as they are (the fold takes a wire op without parsing it): none is quarantined.
    if (!isWireOp(x) || x.op !== "add") return false;
    const layers = claimed.get(x.name);
    if (layers === undefined) claimed.set(x.name, [x.layer]);
    else if (layers.includes(x.layer)) return false;
    else layers.push(x.layer);
    receivedIds.add(x["op-id"]);
  }
  const claims = (name: string, layer: Layer) => claimed.get(name)?.includes(layer) === true;
  const ids = new Set<OpId>();
  const all: Op[] = [];
  for (const x of held) {
    // A held op the fold quarantines leaves the ops after it waiting: not provable here.
    if (!isWireOp(x) || isControlOp(x) || ids.has(x["op-id"])) return false;
    ids.add(x["op-id"]);
    all.push(x);
  }
  const heldCount = all.length;
  for (const x of received as Op[]) {
    if (ids.has(x["op-id"])) return false;
    ids.add(x["op-id"]);
    all.push(x);
  }
  const opsOn = new Map<DefId, number>();
  /** Definitions a held op references or links to. */
  const targeted = new Set<DefId>();
  /** def → its add (a definition with two is not one that stands alone). */
  const addOf = new Map<DefId, Op>();
  for (let i = 0; i < all.length; i++) {
    const op = all[i]!;
    const isHeld = i < heldCount;
    for (const p of op["parent-ops"]) {
      if (!ids.has(p) || compareIds(p, op["op-id"]) >= 0) return false;
      // A held op waiting for a parent stays waiting (one that arrives here would set it going).
      if (isHeld && receivedIds.has(p)) return false;
    }
    opsOn.set(op.def, (opsOn.get(op.def) ?? 0) + 1);
    if (isHeld) {
      // Another claim on a name a received add claims (their own claims were counted above).
      if (claims(op.name, op.layer) || (op.op === "rename" && claims(op["new-name"], op.layer))) return false;
      if (op.op === "link") targeted.add(op.target);
      for (const t of refTargets(op)) targeted.add(t);
    }
    if (op.op === "add") addOf.set(op.def, op);
  }
  const standing = standingIn(addOf, opsOn);
  for (const x of received as Op[]) if (targeted.has(x.def) || !standing(x.def)) return false;
  return true;
}

/**
 * Whether a definition stands alone: added once and never touched after, and referencing only
 * definitions added before it (in op-id order, the causal order here) that stand alone too.
 * Memoized, walked with a stack of its own (reference chains can be long).
 */
function standingIn(
  addOf: ReadonlyMap<DefId, Op>,
  opsOn: ReadonlyMap<DefId, number>,
): (def: DefId) => boolean {
  const memo = new Map<DefId, boolean>();
  return (root) => {
    const stack = [root];
    while (stack.length > 0) {
      const def = stack[stack.length - 1]!;
      if (memo.has(def)) {
        stack.pop();
        continue;
      }
      const add = addOf.get(def);
      let ok = add !== undefined && opsOn.get(def) === 1;
      let waiting = false;
      if (add !== undefined && ok) {
        for (const t of refTargets(add)) {
          const target = addOf.get(t);
          const known = memo.get(t);
          if (target === undefined || compareIds(target["op-id"], add["op-id"]) >= 0 || known === false) {
            ok = false;
            break;
          }
          if (known === undefined) {
            stack.push(t);
            waiting = true;
          }
        }
      }
      if (!ok || !waiting) {
        memo.set(def, ok);
        stack.pop();
      }
    }
    return memo.get(root) === true;
  };
}
