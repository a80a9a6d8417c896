/**
 * Losses told as they are learned. A write is answered once it is stored and took effect; a
 * concurrent write made elsewhere (another process on the workspace, a peer whose ops a sync
 * brings) can later win the merge against it — a replace that loses to a newer replace, an add that
 * loses the name. The merge records that (docs/semantics.md) and `conflicts` shows it, but a writer
 * who only polls learns it late (a 10-agent soak: median 163 s). This tracks the ops a store wrote
 * and, whenever ops arrive from elsewhere, tells its listeners which of them the merge has now
 * decided against, each op once, with the conflict record and how to retry.
 */
import type { Conflict, Graph } from "../graph/graph.js";
import type { OpId } from "../ops/ids.js";
import type { LogOp } from "../ops/op.js";
import { fatesOf, type OpFate } from "./fate.js";

/** What a store learned about its own writes: ops the merge decided against since they were answered. */
export interface LossNotice {
  /** The ops, each told once: which, what became of it, why, and how to retry. */
  readonly lost: readonly OpFate[];
  /** The conflict records that explain them. */
  readonly conflicts: readonly Conflict[];
  /**
   * Records of writes of ours that won but met a concurrent write the merge kept beside them: a
   * same-name add elsewhere (`name-taken`), which leaves the graph with two definitions of one name
   * (E0007) that neither write made. Each told once.
   */
  readonly met: readonly Conflict[];
}

/** The ops one store wrote, and the listeners to tell when the merge decides against them. */
export class LossWatch {
  /** The ops this store wrote that took effect and have not been told lost. */
  private readonly standing = new Set<OpId>();
  private readonly listeners = new Set<(n: LossNotice) => void>();
  /** The `met` records already told. */
  private readonly metTold = new Set<string>();

  constructor(private readonly graph: () => Graph) {}

  /**
   * Records the ops of a write this store made; `lost` are those its own answer reported lost.
   * Only while someone listens: a store nobody asks about losses (the CLI's) keeps nothing.
   */
  wrote(ops: readonly LogOp[], lost: readonly OpId[] = []): void {
    if (this.listeners.size === 0) return;
    const told = new Set(lost);
    // Config ops (policy, locks) are about no definition and never lose a merge.
    for (const op of ops) if ("def" in op && !told.has(op["op-id"])) this.standing.add(op["op-id"]);
  }

  /** Calls `listener` with every later loss; returns the function that stops it. */
  onLoss(listener: (n: LossNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * After ops arrived from elsewhere: every op of ours still standing is judged again, not only
   * those on the definitions the arriving ops touch (a remove elsewhere can roll back our add that
   * references it, under the strict policy; a policy op can change such decisions); fatesOf reads
   * only the records of the definitions these ops are about. New losses are told.
   */
  changed(): void {
    if (this.listeners.size === 0 || this.standing.size === 0) return;
    const { lost, conflicts } = fatesOf(this.graph(), [...this.standing]);
    const lostIds = new Set<string>(lost.map((f) => f.opId));
    const met = conflicts.filter(
      (c) =>
        c.kind === "name-taken" &&
        !this.metTold.has(c.id) &&
        c.ops[0] !== undefined &&
        !lostIds.has(c.ops[0]) &&
        !this.standing.has(c.ops[0]),
    );
    if (lost.length === 0 && met.length === 0) return;
    for (const f of lost) this.standing.delete(f.opId);
    for (const c of met) this.metTold.add(c.id);
    const notice: LossNotice = {
      lost,
      conflicts: conflicts.filter((c) => lost.some((f) => c.ops.includes(f.opId))),
      met,
    };
    for (const l of this.listeners) l(notice);
  }
}
