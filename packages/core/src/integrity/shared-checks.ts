/**
 * The live checks of a store's graph, one per checker configuration, shared by the write gate and
 * `checkStore`: the check a write's gate brought to the graph it made is the next check's answer,
 * and a check the store ran is the next write's starting point.
 */
import type { CheckOptions } from "../check/check.js";
import type { Graph as OpGraph } from "../graph/graph.js";
import { graphAt } from "../graph/past.js";
import type { KeptChecks } from "./check-cache.js";
import { LiveCheck } from "./live.js";

/** At most this many differently configured checks are kept per graph (oldest dropped first). */
const CHECKS_PER_GRAPH = 4;

const byGraph = new WeakMap<OpGraph, Map<string, LiveCheck>>();

/**
 * The options a checker is built with, as a key: narrowing (`types`, `refs`, `effects`) is a
 * filter over its result, not a checker of its own, and of a manifest only the names count.
 */
export function checkerKey(options: CheckOptions): string {
  const caps = options.capabilities;
  const names =
    caps === undefined
      ? []
      : (Array.isArray(caps)
          ? (caps as readonly string[])
          : (caps as { capabilities: readonly unknown[] }).capabilities
        )
          .map((c) => (typeof c === "string" ? c : String((c as { name?: unknown }).name)))
          .sort();
  return JSON.stringify([options.a11y === true, options.requireApp !== false, names]);
}

/** The check of `graph` for `options` kept here, if any (wherever it was last synced to: see {@link LiveCheck.at}). */
export function sharedCheck(graph: OpGraph, options: CheckOptions): LiveCheck | undefined {
  return byGraph.get(graph)?.get(checkerKey(options));
}

/** Keeps `check` as `graph`'s check for `options`; returns it. */
export function shareCheck(graph: OpGraph, options: CheckOptions, check: LiveCheck): LiveCheck {
  let checks = byGraph.get(graph);
  if (checks === undefined) {
    checks = new Map();
    byGraph.set(graph, checks);
  }
  checks.set(checkerKey(options), check);
  if (checks.size > CHECKS_PER_GRAPH) checks.delete(checks.keys().next().value!);
  return check;
}

/**
 * Where a check of the graph at `heads` ({@link headsKey}) with `options` is kept across
 * processes: the heads, the checker, and the whole manifest (another process may have read
 * another kumiki.caps.json with the same names).
 */
export function keptCheckKey(heads: string, options: CheckOptions): string {
  return JSON.stringify(["live", heads, checkerKey(options), options.capabilities ?? null]);
}

/**
 * The first check of `graph` for `options` (shared, as {@link shareCheck}): going on from the one
 * `kept` holds for the graph at `heads` when it holds one, else from one it holds for a state the
 * graph has moved past (re-checking what changed since), else checked in full. `heads`: the
 * graph's state when its own heads are not it (the write gate's); unknown, nothing is looked up.
 */
export function startCheck(
  graph: OpGraph,
  options: CheckOptions,
  kept: KeptChecks | undefined,
  heads: string | undefined,
): LiveCheck {
  const state = heads === undefined ? undefined : kept?.get(keptCheckKey(heads, options));
  const check =
    state !== undefined
      ? LiveCheck.resume(graph, options, state, heads)
      : ((heads === undefined ? undefined : fromPast(graph, options, kept, heads)) ??
        new LiveCheck(graph, options, heads));
  return shareCheck(graph, options, check);
}

/**
 * The check of `graph` (at `heads`) gone on from a state `kept` holds for `options` at earlier
 * heads the graph descends from; undefined when it holds none. The past is the graph with the
 * later ops' definitions undone ({@link OpGraph.asOf}) when they changed nothing else, else a
 * fold of its ops. At 5,000 definitions a `kumiki check` after a sync that took in a peer's write
 * costs about 720 ms of CPU, 876 with the past folded (about 90 ms of it), where a full check
 * cost 1,550 (bench/cli-scale.ts, "check, first after a write that kept no check").
 */
function fromPast(
  graph: OpGraph,
  options: CheckOptions,
  kept: KeptChecks | undefined,
  heads: string,
): LiveCheck | undefined {
  if (kept?.entries === undefined) return undefined;
  let foldable: boolean | undefined;
  for (const [key, state] of kept.entries()) {
    // Of these options (the key names them), of other heads, and not of an empty graph.
    if (typeof state?.at !== "string" || state.at === "" || state.at === heads) continue;
    if (key !== keptCheckKey(state.at, options)) continue;
    const at = state.at.split(",");
    // The ops since only changed what they target: that state is this graph with those undone.
    const undone = graph.asOf(at);
    if (undone !== undefined) {
      try {
        return LiveCheck.resumeBehind(graph, options, state, undone, heads);
      } finally {
        undone.discard();
      }
    }
    foldable ??= pastCheaperThanFull(graph);
    const past = foldable ? graphAt(graph, at) : undefined;
    if (past !== undefined) return LiveCheck.resumeBehind(graph, options, state, past, heads);
  }
  return undefined;
}

/**
 * Going on from a past state that {@link OpGraph.asOf} cannot give folds the past's ops again, a
 * cost per op; a full check costs per live definition. `kumiki check` one write behind, the past
 * folded (bench/cli-scale.ts, CPU): at 5,000 definitions and about 6,000 ops 641 ms against 1,470
 * in full; at 10,012 ops of 180 definitions 391 against 364; at 100,012 ops of 180, 961 against
 * 652. Past this many ops per live definition, check in full.
 */
const PAST_OPS_PER_DEFINITION = 40;

function pastCheaperThanFull(graph: OpGraph): boolean {
  const live = graph.liveCount();
  // The last op placed is a head: the placed ops are its position and those before it.
  let ops = 0;
  for (const h of graph.heads()) ops = Math.max(ops, (graph.positionOf(h) ?? -1) + 1);
  return ops <= PAST_OPS_PER_DEFINITION * Math.max(live, 1);
}
