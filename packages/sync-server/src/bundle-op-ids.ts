/**
 * The op-ids a decoded change carries: the ops in the bundle strings it inserts (an op log's
 * chunk entries). What is not a bundle — a list made, a string that does not parse — carries none.
 */
import type * as A from "@automerge/automerge";

/** The op-ids in `change`'s bundles, in order (a repeat listed again). */
export function bundleOpIds(change: A.DecodedChange): string[] {
  const ids: string[] = [];
  for (const op of change.ops) {
    if (op.action !== "set" || typeof op.value !== "string") continue;
    let bundle: unknown;
    try {
      bundle = JSON.parse(op.value);
    } catch {
      continue; // Not a bundle: nothing to count.
    }
    if (!Array.isArray(bundle)) continue;
    for (const o of bundle) {
      const id = (o as { "op-id"?: unknown } | null)?.["op-id"];
      if (typeof id === "string") ids.push(id);
    }
  }
  return ids;
}
