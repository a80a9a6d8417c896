/**
 * A graph as it was at earlier heads: what a check kept for a state the graph has since moved past
 * (after `kumiki sync` took in a peer's ops) is gone on from, instead of checking in full.
 */
import { Graph } from "./graph.js";

/**
 * The graph of the ops `heads` descend from, and of the heads themselves: `graph` as it was when
 * those were its heads (the fold is a function of the set of ops, so it equals the graph any
 * process had at those heads). Undefined when one of them is not an op `graph` has placed: that
 * state is not in this graph's past.
 */
export function graphAt(graph: Graph, heads: readonly string[]): Graph | undefined {
  const ops = graph.opsAt(heads);
  // Every op here passed the wire schema when this graph took it in.
  return ops === undefined ? undefined : Graph.fold(ops, { wireChecked: ops.length });
}
