/**
 * What became of a write's ops in the merged graph: applied, or not (lost to a concurrent op,
 * failed to rebase, rolled back, orphaned), each with the conflict record that says why, by which
 * rule of docs/semantics.md, and how to retry. The same decision on every replica: it is read from
 * the fold, which is a function of the op set.
 */
import type { Conflict, Graph } from "../graph/graph.js";
import type { RemedyStep } from "../graph/remedy.js";
import type { OpId } from "../ops/ids.js";
import { reject, type StoreResult } from "./result.js";
import type { WriteReceipt } from "./store-types.js";

/** What became of an op in the merged graph. */
export type OpStatus = "applied" | "lost" | "failed" | "rolled-back" | "orphaned";

/** The fate of one op of a write that did not take effect. */
export interface OpFate {
  readonly opId: OpId;
  readonly status: Exclude<OpStatus, "applied">;
  /** The conflict record that explains it (see `conflicts`). */
  readonly conflict: string;
  /** Why, and what the merge decided instead. */
  readonly reason: string;
  /** How to retry (in the words of docs/semantics.md; no edge's commands). */
  readonly retry: string;
  /** The steps `retry` describes, for an edge to name in its own terms. */
  readonly remedy: readonly RemedyStep[];
}

/**
 * The status of op `id` as a definition's history shows it; `conflict` is the record whose first
 * op is `id`, if any. A same-name add that lost the name is "applied" here (the definition exists,
 * reachable by identity); {@link fatesOf} calls it lost, from the writer's point of view.
 */
export function statusOf(g: Graph, id: OpId, conflict: Conflict | undefined): OpStatus {
  if (g.isRolledBack(id)) return "rolled-back";
  if (g.orphanReason(id) !== undefined) return "orphaned";
  if (conflict?.kind === "edit-rebase-failed" || conflict?.kind === "link-site-missing") return "failed";
  if (conflict?.kind === "replace-lost" || conflict?.kind === "rename-lost") return "lost";
  return "applied";
}

/**
 * The ops of `opIds` that did not take effect in `g`, and every conflict record that involves any
 * of them (including those where they won: the other side lost).
 */
export function fatesOf(g: Graph, opIds: readonly OpId[]): { lost: OpFate[]; conflicts: Conflict[] } {
  const mine = new Set<string>(opIds);
  const defs = new Set(opIds.flatMap((o) => g.defOp(o)?.def ?? []));
  const conflicts = g.conflicts(defs).filter((c) => c.ops.some((o) => mine.has(o)));
  const byLoser = new Map<string, Conflict>();
  for (const c of conflicts) if (c.ops[0] !== undefined && !byLoser.has(c.ops[0])) byLoser.set(c.ops[0], c);
  const lost: OpFate[] = [];
  for (const id of opIds) {
    const c = byLoser.get(id);
    let status = statusOf(g, id, c);
    // Lost from the writer's point of view: its add or rename did not get the name, its remove
    // was overridden by a write it had not seen.
    // Two adds of one name in the same write (a faithful import of a program that defines a name
    // twice) contend with each other, not with another writer: both stand as written.
    const ownContest = c?.kind === "name-taken" && c.ops.every((o) => mine.has(o));
    if (status === "applied" && !ownContest && (c?.kind === "name-taken" || c?.kind === "remove-overridden"))
      status = "lost";
    if (status === "applied") continue;
    const recordId = status === "rolled-back" ? g.rollbackConflictId(id) : `orphaned:${id}`;
    const record = c ?? conflicts.find((x) => x.id === recordId) ?? conflicts.find((x) => x.ops.includes(id));
    lost.push({
      opId: id,
      status,
      conflict: record?.id ?? `${status}:${id}`,
      reason:
        record === undefined
          ? `${id} did not take effect (${status})`
          : `${record.reason}; ${record.decision}`,
      retry: record?.retry ?? "view the definition and write again",
      remedy: record?.remedy ?? [],
    });
  }
  return { lost, conflicts };
}

/** The receipt's `lost` and `conflicts`, each only when not empty. */
export function receiptFates(g: Graph, opIds: readonly OpId[]): { lost?: OpFate[]; conflicts?: Conflict[] } {
  if (opIds.length === 0) return {};
  const { lost, conflicts } = fatesOf(g, opIds);
  return { ...(lost.length > 0 ? { lost } : {}), ...(conflicts.length > 0 ? { conflicts } : {}) };
}

/**
 * A write that was stored but did not (wholly) take effect: another writer's op won the merge. Not a
 * success: the rejection says which ops lost, to what, and how to retry; `details.receipt` is the
 * receipt (the ops are in the log, and `history` and `conflicts` show them).
 */
export function lostWrite(receipt: WriteReceipt, lost: readonly OpFate[]): StoreResult<WriteReceipt> {
  const [first] = lost as [OpFate];
  return reject(
    "write-lost",
    `the write was stored but ${lost.length === 1 ? `its op ${first.opId} was` : `${lost.length} of its ${receipt.opIds.length} ops were`} ${first.status} in the merge with a concurrent write: ${first.reason}; to retry: ${first.retry}`,
    { stored: true, lost, conflicts: receipt.conflicts ?? [], opIds: receipt.opIds, receipt },
  );
}
