/**
 * What a drafted write must pass before it is stored: no definition it touches is locked by
 * another agent (§9.8.3), and the gate — the built-in checks and the store's validators — finds
 * no problem in the graph the draft would make.
 */
import type { Conflict, Graph } from "../graph/graph.js";
import { qualified } from "../graph/materialize.js";
import type { GraphReader } from "../graph/reader.js";
import type { RemedyStep } from "../graph/remedy.js";
import type { AuthorId, DefId } from "../ops/ids.js";
import { isControlOp, type LogOp, type Op } from "../ops/op.js";
import type { Draft } from "./draft.js";
import type { Rejection } from "./result.js";
import { builtinGate, type ValidationProblem, type WriteValidator } from "./validate.js";

/**
 * The refusal of a write that touches a definition another agent has locked (§9.8.3): each op's
 * target, by the name it records, a rename's new name, every definition of a cascade.
 */
export function lockRefusal(graph: Graph, author: AuthorId, ops: readonly LogOp[]): Rejection | undefined {
  if (graph.locks().length === 0) return undefined;
  for (const op of ops) {
    if (isControlOp(op)) continue;
    const names = op.op === "rename" ? [op.name, op["new-name"]] : [op.name];
    for (const name of names) {
      const other = graph.locksOn(op.layer, name).find((l) => l.agent !== author);
      if (other === undefined) continue;
      const q = qualified(op.layer, name);
      return {
        code: "locked",
        message: `${q} is locked by ${other.agent} (${other.pattern}); ${author} may not ${op.op} it — ask ${other.agent} to unlock it`,
        details: {
          definition: q,
          agent: other.agent,
          pattern: other.pattern,
          lock: other.opId,
          op: op.op,
          steps: [{ do: "unlock", agent: other.agent, pattern: other.pattern }] satisfies RemedyStep[],
        },
      };
    }
  }
  return undefined;
}

/**
 * The problems the gate finds in a drafted write (the first validator that finds any answers):
 * the built-in gate and the store's validators, run on the graph before and after the draft.
 */
export function gateProblems(
  draft: Draft,
  before: GraphReader,
  validators: readonly WriteValidator[],
): ValidationProblem[] {
  const after = draft.reader;
  const touched = new Set<DefId>();
  const ops: Op[] = [];
  for (const op of draft.ops) {
    if (isControlOp(op)) continue;
    ops.push(op);
    touched.add(op.def);
    // A forced remove leaves its referrers dangling on purpose: they are not the write's to check.
    if (op.op === "remove" && op.force === true && !draft.cascaded.has(op.def)) continue;
    if (op.op === "rename" || op.op === "remove" || op.reverts !== undefined) {
      for (const r of before.graph.referrersOf(op.def)) touched.add(r);
      for (const r of after.graph.referrersOf(op.def)) touched.add(r);
    }
  }
  const write = { ops, before, after, touched: [...touched] };
  // With --force the dangling references are the point: only the built-in gate runs (`kumiki
  // check` lists them). A remove cannot add any other error.
  if (draft.keepErrors) {
    // A faithful import: the text's own errors are the user's to repair (the loop of §9.6.2),
    // not the write's; what would break the graph (a hidden name, a conflict) still refuses.
    // A name the bundle adds twice is the program's own duplicate (the draft refused any name
    // the graph held before): kept, the later definition showing, as upstream reads it.
    return builtinGate
      .validate(write)
      .filter(
        (p) =>
          p.code !== "undefined-reference" &&
          p.code !== "duplicate-name" &&
          p.code !== "parse-error" &&
          !(
            p.code === "would-conflict" &&
            (p.details?.conflict as Conflict | undefined)?.kind === "name-taken"
          ),
      );
  }
  for (const v of draft.forced ? [builtinGate] : validators) {
    const problems = v.validate(write);
    if (problems.length > 0) return [...problems];
  }
  return [];
}
