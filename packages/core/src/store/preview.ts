/** A drafted write as a preview (`Store.preview`, a dry run): its ops, the diff of what it changes, its fingerprint. */
import type { Graph } from "../graph/graph.js";
import type { GraphReader } from "../graph/reader.js";
import type { DefId } from "../ops/ids.js";
import { type ControlOp, isControlOp, type LogOp } from "../ops/op.js";
import { definitionDiff } from "./diff.js";
import type { Draft } from "./draft.js";
import { fingerprintOps } from "./fingerprint.js";
import type { Preview } from "./store-types.js";

/** The preview of a drafted write: its ops, the diff of each definition it changes (as shown) and of each control op, its fingerprint. */
export function previewOf(d: Draft, ops: readonly LogOp[], graph: Graph, reader: GraphReader): Preview {
  return {
    ops,
    diff: diffOf(d, ops, graph, reader),
    fingerprint: fingerprintOps(ops),
    ...(d.removed.length > 0 ? { removed: [...d.removed] } : {}),
    ...(d.warnings.length > 0 ? { warnings: [...d.warnings] } : {}),
  };
}

/** The diff of a drafted write: each definition it changes (as shown), then each control op. */
export function diffOf(d: Draft, ops: readonly LogOp[], graph: Graph, reader: GraphReader): string {
  const ids: DefId[] = [];
  const seen = new Set<DefId>();
  const note = (id: DefId) => {
    if (seen.has(id)) return;
    seen.add(id);
    ids.push(id);
  };
  for (const op of ops) if (!isControlOp(op)) note(op.def);
  for (const op of ops) {
    if (isControlOp(op) || (op.op !== "rename" && op.op !== "remove")) continue;
    for (const r of d.fork.referrersOf(op.def)) note(r);
    for (const r of graph.referrersOf(op.def)) note(r);
  }
  const parts: string[] = [];
  for (const id of ids) {
    const before = reader.get(id);
    const after = d.reader.get(id);
    const text = definitionDiff(
      before?.alive === true ? { label: before.qname, text: before.text } : undefined,
      after?.alive === true ? { label: after.qname, text: after.text } : undefined,
    );
    if (text !== "") parts.push(text);
  }
  for (const op of ops) if (isControlOp(op)) parts.push(describeControl(op, graph));
  return parts.join("");
}

/** One line of a preview's diff for a control op. */
function describeControl(op: ControlOp, graph: Graph): string {
  switch (op.op) {
    case "config":
      return `config conflict-policy: ${graph.policy()} -> ${op.value}\n`;
    case "lock":
      return `lock ${op.agent}: ${op.patterns.join(", ")}\n`;
    case "unlock":
      return `unlock ${op.agent}: ${op.patterns === undefined ? "every lock" : op.patterns.join(", ")}\n`;
  }
}
