/**
 * Ops as ai-edit.md §9.3.2 writes them: `op`, `layer`, `name`, `body`, `author`, `ts`, `op-id`,
 * `parent-ops`, `depends-on`, without the identity fields this store's own ops also carry (`def`,
 * the definition's identity, and `refs`, what each name in the text is bound to). Before ingest
 * checks a batch, such an op is completed the way every replica completes it alike: an add's
 * identity is its op-id's (`def_` + the ULID); any other op targets the definition that shows
 * under `layer.name` in the batch or the graph; each reference is bound by name, layer by layer in
 * the site's preference order, to a definition the batch adds or the graph shows; and a body in a
 * form a person types (`Map(TodoId, Todo) = {}` for a slot) gets the separator its layer needs.
 * An op that carries `def` is taken as it is.
 */

import type { Graph } from "../graph/graph.js";
import { parseText } from "../graph/materialize.js";
import { isLayer, type Layer } from "../lang/layers.js";
import { isStandardReference } from "../lang/stdlib.js";
import { type DefId, defIdOf, isOpId } from "../ops/ids.js";
import { OP_KINDS } from "../ops/op.js";
import { composeSource, normalizeBody } from "../ops/source.js";
import { ok, reject, type StoreResult } from "./result.js";

type Raw = Record<string, unknown>;

/** True when `v` is an op in the §9.3.2 form (layer and name, no def): written by hand or a model. */
export function isSpecOp(v: unknown): v is Raw {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const o = v as Raw;
  return (
    (OP_KINDS as readonly unknown[]).includes(o.op) &&
    o.def === undefined &&
    typeof o.layer === "string" &&
    isLayer(o.layer) &&
    typeof o.name === "string"
  );
}

/**
 * `inputs` with every §9.3.2-form op completed (see the module comment), others unchanged; or the
 * refusal of an op whose target nothing shows under its name.
 */
export function completeSpecOps(graph: Graph, inputs: readonly unknown[]): StoreResult<unknown[]> {
  if (!inputs.some(isSpecOp)) return ok([...inputs]);
  // The definitions the batch adds, by layer and name (what a reference or a target can name).
  const added = new Map<string, DefId>();
  for (const v of inputs) {
    if (typeof v !== "object" || v === null) continue;
    const o = v as Raw;
    if (o.op !== "add" || typeof o.layer !== "string" || typeof o.name !== "string") continue;
    const def =
      typeof o.def === "string" ? (o.def as DefId) : isOpId(o["op-id"]) ? defIdOf(o["op-id"]) : undefined;
    if (def !== undefined && !added.has(`${o.layer}:${o.name}`)) added.set(`${o.layer}:${o.name}`, def);
  }
  const find = (layer: string, name: string): DefId | undefined =>
    added.get(`${layer}:${name}`) ?? (isLayer(layer) ? graph.lookup(layer, name) : undefined);
  const out: unknown[] = [];
  for (const [i, v] of inputs.entries()) {
    if (!isSpecOp(v)) {
      out.push(v);
      continue;
    }
    const layer = v.layer as Layer;
    const name = v.name as string;
    const op: Raw = { ...v };
    if (v.op === "add") {
      if (isOpId(v["op-id"])) op.def = defIdOf(v["op-id"]);
    } else {
      const target = find(layer, name);
      if (target === undefined)
        return reject(
          "unknown-definition",
          `op ${i + 1} (${String(v.op)} ${String(v["op-id"])}): no definition shows as ${layer}.${name} in the graph or the batch; add it first, or give the op its def`,
          { index: i, layer, name },
        );
      op.def = target;
    }
    if ((v.op === "add" || v.op === "replace") && typeof v.body === "string" && v.head === undefined)
      op.body = normalizeBody(layer, v.body);
    if ((v.op === "add" || v.op === "replace" || v.op === "edit") && v.refs === undefined) {
      const body = op.body;
      if (typeof body === "string") {
        const p = parseText(
          composeSource({ layer, name, body, ...(typeof v.head === "string" ? { head: v.head } : {}) }),
        );
        const refs: Record<string, DefId> = {};
        if (p.ok) {
          for (const site of p.sites) {
            if (isStandardReference(site)) continue;
            for (const l of site.layers) {
              const t = find(l, site.name);
              if (t === undefined) continue;
              refs[`${l}:${site.name}`] = t;
              break;
            }
          }
        }
        op.refs = refs;
      }
    }
    if (op["depends-on"] === undefined) op["depends-on"] = [];
    out.push(op);
  }
  return ok(out);
}
