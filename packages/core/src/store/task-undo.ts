/**
 * The plan of a task undo: each touched definition's state before the task, and who changed it
 * since.
 */
import type { DefinitionState, Graph } from "../graph/graph.js";
import type { GraphReader } from "../graph/reader.js";
import type { DefId, OpId } from "../ops/ids.js";
import { isControlOp, type Op, type RefBindings } from "../ops/op.js";
import { definitionDiff } from "./diff.js";
import { ok, reject, type StoreResult } from "./result.js";

/** What one definition looked like, for an undo. */
export interface DefinitionSnapshot {
  readonly alive: boolean;
  readonly name: string;
  /** The stored text. */
  readonly text: string;
  readonly refs: RefBindings;
}

/** One definition a task touched. */
export interface TaskDefinitionPlan {
  readonly def: DefId;
  /** How a person names it now. */
  readonly label: string;
  /** Its state before the task (as the task's first op on it saw it); undefined: the task added it. */
  readonly before: DefinitionSnapshot | undefined;
  /** True when it must come back (it lived before the task and is removed now). */
  readonly revive: boolean;
  /** True when it differs now from `before`. */
  readonly changed: boolean;
  /** Ops on it that are not the task's and that the task's first op on it had not seen. */
  readonly foreign: readonly Op[];
}

/** What undoing a task involves. */
export interface TaskUndoPlan {
  readonly task: string;
  readonly definitions: readonly TaskDefinitionPlan[];
  /** Labels of the definitions others changed since the task. */
  readonly diverged: readonly string[];
  /** One line: who changed what since. */
  readonly divergedSummary: string;
  /**
   * The divergence as text: per definition, the ops since and a diff from the text as the task left
   * it to the text now (what the undo would discard). Undefined when nobody else changed them.
   */
  readonly divergence?: string;
}

function snapshot(s: DefinitionState): DefinitionSnapshot {
  return { alive: s.alive, name: s.name, text: s.body.text, refs: s.body.refs };
}

function same(a: DefinitionSnapshot | undefined, b: DefinitionState): boolean {
  if (a === undefined) return !b.alive;
  if (a.alive !== b.alive) return false;
  if (!a.alive) return true;
  if (a.name !== b.name || a.text !== b.body.text) return false;
  const ka = Object.keys(a.refs);
  return (
    ka.length === Object.keys(b.body.refs).length &&
    ka.every((k) => a.refs[k as keyof RefBindings] === b.body.refs[k as keyof RefBindings])
  );
}

/**
 * Plans the undo of a task (seed 001): the definitions its ops touched, each one's state just
 * before the task, and whether anyone changed them since. In doubt — ops of the task still waiting
 * for parents — it refuses rather than claim anything; it reports "no change" only when every
 * definition is exactly as it was before the task and nobody else touched it.
 */
export function planTaskUndo(graph: Graph, reader: GraphReader, task: string): StoreResult<TaskUndoPlan> {
  const order: DefId[] = [];
  const seen = new Set<DefId>();
  let pending = 0;
  let control = 0;
  for (const op of graph.ops()) {
    if (op.task !== task) continue;
    if (graph.positionOf(op["op-id"]) === undefined) pending++;
    if (isControlOp(op)) {
      control++;
      continue;
    }
    if (!seen.has(op.def)) {
      seen.add(op.def);
      order.push(op.def);
    }
  }
  if (order.length === 0 && pending === 0) {
    return reject(
      "not-found",
      control > 0
        ? `task ${task} changed no definition (only ${control} policy or lock op${control === 1 ? "" : "s"}, which an undo leaves alone)`
        : `no op carries the task ${task}`,
      { task },
    );
  }
  if (pending > 0) {
    return reject(
      "undo-diverged",
      `cannot undo task ${task} yet: ${pending} of its ops wait for ops this replica has not received; sync, then undo`,
      {
        task,
        diff: `${pending} op(s) of task ${task} are pending (their parents have not arrived)\n`,
        pending,
      },
    );
  }
  const definitions: TaskDefinitionPlan[] = [];
  const notes: string[] = [];
  const diverged: string[] = [];
  for (const def of order) {
    const s = graph.definition(def);
    // Its add was rolled back: the definition never existed in the merged graph; nothing to undo.
    if (s === undefined) continue;
    const mine = s.ops.filter((o) => o.task === task);
    const first = mine[0];
    // Every op of the task on it was left out (rolled back): it had no effect to undo.
    if (first === undefined) continue;
    const last = mine[mine.length - 1]!;
    const firstId: OpId = first["op-id"];
    const prior = first.op === "add" ? undefined : graph.stateSeenBy(def, firstId, false);
    const before = prior === undefined ? undefined : snapshot(prior);
    const foreign = s.ops.filter(
      (o) => o.task !== task && o !== first && !graph.happenedBefore(o["op-id"], firstId),
    );
    const label = graph.label(def);
    definitions.push({
      def,
      label,
      before,
      revive: before?.alive === true && !s.alive,
      changed: !same(before, s),
      foreign,
    });
    if (foreign.length === 0) continue;
    diverged.push(label);
    const left = graph.stateSeenBy(def, last["op-id"], true);
    const shown = (x: DefinitionState | undefined) =>
      x === undefined || !x.alive
        ? undefined
        : { label: `${x.layer}.${x.name}`, text: reader.materializer.render(x) };
    notes.push(
      `# ${label}: changed since task ${task} by ${foreign.map((o) => `${o.op} ${o["op-id"]} (${o.author})`).join(", ")}\n` +
        (definitionDiff(shown(left), shown(s)) || "# (the same text now as the task left it)\n"),
    );
  }
  if (diverged.length === 0 && definitions.every((d) => !d.changed)) {
    return reject(
      "no-change",
      `every definition task ${task} touched is exactly as it was before the task, and nobody else changed them`,
      { task },
    );
  }
  return ok({
    task,
    definitions,
    diverged,
    divergedSummary:
      diverged.length === 0
        ? "nobody else changed its definitions"
        : `${diverged.join(", ")} changed since, by ops outside the task`,
    ...(notes.length > 0 ? { divergence: notes.join("") } : {}),
  });
}
