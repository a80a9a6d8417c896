/**
 * The dangling edges around a definition (ai-edit.md §9.4.2): references out of it to definitions
 * that do not live, when it lives, and references into it, when it does not — each with the ops
 * that made it and those that removed its target, for the conflict policy to decide. Edges the fold
 * already decided to keep, unchanged since, are not asked again.
 */
import type { DefId } from "../ops/ids.js";
import type { DanglingEdge } from "../ops/merge.js";
import type { RefKey } from "../ops/op.js";
import type { FoldState } from "./fold-state.js";

/** Dangling edges out of `id` (when it lives) and into it (when it does not). */
export function danglingAround(st: FoldState, id: DefId): DanglingEdge[] {
  const out: DanglingEdge[] = [];
  const s = st.defs.get(id);
  const push = (edge: DanglingEdge) => {
    // An edge already decided to be kept, unchanged since, is not decided again (a later policy
    // change does not reach back).
    const k = st.kept.get(`${edge.source} ${edge.key}`);
    if (
      k !== undefined &&
      k.edge.target === edge.target &&
      k.edge.introducer === edge.introducer &&
      k.edge.removes.length === edge.removes.length &&
      (k.reason === "warn" || k.edge.sourceOps.length === edge.sourceOps.length)
    )
      return;
    out.push(edge);
  };
  if (s?.alive === true) {
    for (const [key, target] of Object.entries(s.body.refs) as [RefKey, DefId][]) {
      const t = st.defs.get(target);
      if (t?.alive === true) continue;
      push({
        source: id,
        key,
        target,
        introducer: s.introducers.get(key) ?? s.body.version,
        removes: t?.removes ?? [],
        sourceOps: [...s.ops],
      });
    }
  } else {
    for (const r of st.referrers.get(id) ?? []) {
      const rs = st.defs.get(r);
      if (rs?.alive !== true) continue;
      for (const [key, target] of Object.entries(rs.body.refs) as [RefKey, DefId][]) {
        if (target !== id) continue;
        push({
          source: r,
          key,
          target,
          introducer: rs.introducers.get(key) ?? rs.body.version,
          removes: s?.removes ?? [],
          sourceOps: [...rs.ops],
        });
      }
    }
  }
  return out;
}
