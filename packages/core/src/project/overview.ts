/**
 * The live view's model of a store (`kumiki ui`): the program as a map — every live definition
 * with what it references and its findings — the agents' activity, the conflicts and the locks.
 * What a person overseeing agents reads; computed from the graph as it is now, without rendering
 * a definition's text (5,000 definitions answer in tens of milliseconds).
 */
import type { CheckOptions } from "../check/check.js";
import type { Diagnostic } from "../check/diagnostic.js";
import type { Graph } from "../graph/graph.js";
import { qualified } from "../graph/materialize.js";
import type { Conflict, LockEntry } from "../graph/records.js";
import type { KeptChecks } from "../integrity/check-cache.js";
import { headsKey } from "../integrity/live.js";
import { checkStore } from "../integrity/store-check.js";
import type { Layer } from "../lang/layers.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { LogOpKind } from "../ops/op.js";
import { type OpStatus, statusOf } from "../store/fate.js";
import type { Store } from "../store/store.js";

/** One live definition on the map. */
export interface OverviewDefinition {
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  /** False for a definition a same-name conflict hides. */
  readonly visible: boolean;
  /** The live definitions its text references, by identity (the map's edges), each once. */
  readonly uses: readonly DefId[];
  /** Its error and warning diagnostics (`kumiki check`'s). */
  readonly errors: number;
  readonly warnings: number;
}

/** One op of the activity timeline. */
export interface OverviewOp {
  readonly opId: OpId;
  readonly op: LogOpKind;
  readonly author: string;
  readonly ts: number;
  readonly task?: string;
  /** The definition it is about, and its name now (or when last named). */
  readonly def?: DefId;
  readonly qname?: string;
  /** Whether it took effect; a lost or rolled-back write names the conflict record that says why. */
  readonly status: OpStatus;
  readonly conflict?: string;
}

/** One author's part in the graph. */
export interface OverviewAuthor {
  readonly author: string;
  readonly ops: number;
  /** Its ops that did not take effect (lost, failed, rolled back, orphaned). */
  readonly lost: number;
  /** When it last wrote (the op's timestamp, ms). */
  readonly last: number;
}

/** {@link graphOverview}'s answer. */
export interface GraphOverview {
  /** The graph's heads: equal versions, equal graphs (what a live page compares). */
  readonly version: string;
  readonly definitions: readonly OverviewDefinition[];
  /** Every diagnostic of the graph, as `kumiki check` gives them. */
  readonly diagnostics: readonly Diagnostic[];
  readonly conflicts: readonly Conflict[];
  readonly locks: readonly LockEntry[];
  readonly authors: readonly OverviewAuthor[];
  /** The latest ops, newest first (at most `recent`). */
  readonly activity: readonly OverviewOp[];
  /** How many ops the graph holds. */
  readonly ops: number;
}

/** Options of {@link graphOverview}. */
export interface OverviewOptions {
  /** The check the findings come from (a workspace's capability manifest). */
  readonly check?: CheckOptions;
  /** How many of the latest ops the activity lists; default 500. */
  readonly recent?: number;
  /**
   * Checks another process kept (the CLI's `.kumiki/cache/live-check.jsonl`): the first overview
   * of a graph at a kept state goes on from it instead of checking every definition.
   */
  readonly kept?: KeptChecks;
}

/**
 * The store's graph as the live view shows it (see the module comment). The findings are
 * `checkStore`'s, incremental across calls on one store, so a page following a busy graph pays for
 * what changed.
 */
export function graphOverview(store: Store, options: OverviewOptions = {}): GraphOverview {
  const reader = store.read();
  const g = reader.graph;
  const report = checkStore(store, options.check ?? {}, undefined, options.kept);
  const counts = new Map<string, { errors: number; warnings: number }>();
  for (const d of report.diagnostics) {
    if (d.definition === undefined) continue;
    const c = counts.get(d.definition) ?? { errors: 0, warnings: 0 };
    if (d.severity === "error") c.errors++;
    else c.warnings++;
    counts.set(d.definition, c);
  }
  const definitions: OverviewDefinition[] = [];
  for (const s of g.definitions()) {
    if (!s.alive) continue;
    const uses = new Set<DefId>();
    for (const target of Object.values(s.body.refs)) {
      if (typeof target === "string" && target !== s.def && g.definition(target as DefId)?.alive === true)
        uses.add(target as DefId);
    }
    const c = counts.get(s.def);
    definitions.push({
      def: s.def,
      layer: s.layer,
      name: s.name,
      visible: g.isVisible(s.def),
      uses: [...uses],
      errors: c?.errors ?? 0,
      warnings: c?.warnings ?? 0,
    });
  }
  const conflicts = g.conflicts();
  const { authors, activity, ops } = activityOf(g, conflicts, options.recent ?? 500);
  return {
    version: headsKey(g),
    definitions,
    diagnostics: report.diagnostics,
    conflicts,
    locks: g.locks(),
    authors,
    activity,
    ops,
  };
}

/** Every op's author and fate, the latest `recent` in full. */
function activityOf(
  g: Graph,
  conflicts: readonly Conflict[],
  recent: number,
): { authors: OverviewAuthor[]; activity: OverviewOp[]; ops: number } {
  const byOp = new Map<string, Conflict>();
  for (const c of conflicts) if (!byOp.has(c.ops[0]!)) byOp.set(c.ops[0]!, c);
  const all = [...g.ops()];
  const authors = new Map<string, { ops: number; lost: number; last: number }>();
  const activity: OverviewOp[] = [];
  for (let i = all.length - 1; i >= 0; i--) {
    const op = all[i]!;
    const id = op["op-id"];
    const conflict = byOp.get(id);
    const status = statusOf(g, id, conflict);
    const a = authors.get(op.author) ?? { ops: 0, lost: 0, last: 0 };
    a.ops++;
    if (status !== "applied") a.lost++;
    a.last = Math.max(a.last, op.ts);
    authors.set(op.author, a);
    if (activity.length >= recent) continue;
    const def = (op as { def?: DefId }).def;
    const named = def === undefined ? undefined : g.definition(def);
    const layer = (op as { layer?: Layer }).layer;
    const name = named?.name ?? (op as { name?: string }).name;
    const why = g.isRolledBack(id) ? g.rollbackConflictId(id) : conflict?.id;
    activity.push({
      opId: id,
      op: op.op,
      author: op.author,
      ts: op.ts,
      ...(op.task === undefined ? {} : { task: op.task }),
      ...(def === undefined ? {} : { def }),
      ...(layer === undefined || name === undefined ? {} : { qname: qualified(layer, name) }),
      status,
      ...(status === "applied" || why === undefined ? {} : { conflict: why }),
    });
  }
  return {
    authors: [...authors]
      .map(([author, a]) => ({ author, ...a }))
      .sort((x, y) => y.last - x.last || (x.author < y.author ? -1 : 1)),
    activity,
    ops: all.length,
  };
}
