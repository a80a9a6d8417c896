/**
 * A graph as it was at earlier heads: what a check kept for a state the graph has since moved past
 * (after `kumiki sync` took in a peer's ops) is gone on from, instead of checking in full.
 */
import type { OpId } from "../ops/ids.js";
import type { LogOp } from "../ops/op.js";
import { Graph } from "./graph.js";

/**
 * The graph of the ops `heads` descend from, and of the heads themselves: `graph` as it was when
 * those were its heads (the fold is a function of the set of ops, so it equals the graph any
 * process had at those heads). Undefined when one of them is not an op `graph` has placed: that
 * state is not in this graph's past.
 */
export function graphAt(graph: Graph, heads: readonly string[]): Graph | undefined {
  const past = new Set<string>();
  const todo: string[] = [];
  for (const h of heads) {
    if (graph.positionOf(h as OpId) === undefined) return undefined;
    todo.push(h);
  }
  // Bounded: each placed op is taken once, and a placed op's parents are placed.
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    if (past.has(id)) continue;
    past.add(id);
    for (const p of graph.op(id as OpId)?.["parent-ops"] ?? []) if (!past.has(p)) todo.push(p);
  }
  const ops: LogOp[] = [];
  for (const op of graph.ops()) if (past.has(op["op-id"])) ops.push(op);
  // Every op here passed the wire schema when this graph took it in.
  return Graph.fold(ops, { wireChecked: ops.length });
}
