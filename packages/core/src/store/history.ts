/** A definition's history (`Store.history`, `kumiki view --history`): every op, its status, the names it had. */
import type { Conflict, Graph } from "../graph/graph.js";
import { qualified } from "../graph/materialize.js";
import type { DefId } from "../ops/ids.js";
import { type OpStatus, statusOf } from "./fate.js";
import type { DefinitionHistory, HistoryEntry } from "./store-types.js";

/** The history of definition `id` in `g`: its ops in causal order with their fate, and the names it had. */
export function historyOf(g: Graph, id: DefId): DefinitionHistory[] {
  const s = g.definition(id);
  const opIds = g.opsOf(id);
  const first = g.defOp(opIds[0]!);
  if (first === undefined) return [];
  const byOp = new Map<string, Conflict>();
  for (const c of g.conflicts(new Set([id]))) byOp.set(c.ops[0]!, c);
  const names: string[] = [];
  const entries = opIds.map((o): HistoryEntry => {
    const op = g.defOp(o)!;
    const conflict = byOp.get(o);
    const status: OpStatus = statusOf(g, o, conflict);
    if (status === "applied" || status === "lost") {
      const n = op.op === "add" ? op.name : op.op === "rename" ? op["new-name"] : undefined;
      if (n !== undefined && names[names.length - 1] !== n) names.push(n);
    }
    const rolled = g.isRolledBack(o)
      ? g.rollbackConflictId(o)
      : g.orphanReason(o) !== undefined
        ? `orphaned:${o}`
        : conflict?.id;
    return {
      opId: o,
      op: op.op,
      author: op.author,
      ts: op.ts,
      name: op.name,
      ...(op.op === "rename" ? { newName: op["new-name"] } : {}),
      ...(op.task === undefined ? {} : { task: op.task }),
      ...(op.reverts === undefined ? {} : { reverts: op.reverts }),
      ...(op.op === "remove" && op.force === true ? { force: true as const } : {}),
      status,
      ...(status === "applied" || rolled === undefined ? {} : { conflict: rolled }),
    };
  });
  const layer = s?.layer ?? first.layer;
  const name = s?.name ?? first.name;
  return [
    {
      def: id,
      layer,
      name,
      qname: qualified(layer, name),
      alive: s?.alive === true,
      visible: g.isVisible(id),
      names: names.length > 0 ? names : [name],
      entries,
    },
  ];
}
