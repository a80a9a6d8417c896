/**
 * Resolving a qualified name to a definition of a graph (the store's reads and writes, and a
 * draft's fork, all resolve through this one function), with the hints a caller needs when it
 * does not: the names it might have meant, and a removed definition that had the name.
 */
import type { DefinitionState, Graph } from "../graph/graph.js";
import { clip, ok, reject, type StoreResult } from "./result.js";
import { parseQualifiedName } from "./selector.js";
import { suggest } from "./suggest.js";

/**
 * The definition `qname` (`layer.name`, or `def_…`) names in `graph`: with `live`, a removed one
 * is refused (`not-found`, saying how to bring it back). `invalid-selector` when `qname` is neither
 * form; `not-found` with `details.suggestions` (close names) and `details.removed` otherwise.
 */
export function resolveTarget(
  graph: Graph,
  qname: string,
  opts: { readonly live: boolean },
): StoreResult<DefinitionState> {
  const q = parseQualifiedName(qname);
  if ("error" in q) return reject("invalid-selector", q.error);
  if (q.kind === "def") {
    const s = graph.definition(q.def);
    if (s === undefined) return reject("not-found", `no definition ${q.def}`);
    if (opts.live && !s.alive) {
      return reject(
        "not-found",
        `${graph.label(q.def)} is removed; revert its removal to bring it back (see history ${q.def})`,
        { def: q.def },
      );
    }
    return ok(s);
  }
  const { layer, name } = q;
  const id = graph.lookup(layer, name);
  if (id !== undefined) return ok(graph.definition(id)!);
  const removed = graph.everNamed(layer, name).filter((d) => graph.definition(d)?.alive === false);
  const near = suggest(
    name,
    [...graph.definitions()].filter((s) => s.layer === layer && s.alive).map((s) => s.name),
  );
  const hints = [
    ...(removed.length > 0
      ? [`it was removed (${removed.join(", ")}); history ${layer}.${name} shows how to bring it back`]
      : []),
    ...(near.length > 0 ? [`did you mean ${near.map((n) => `${layer}.${n.name}`).join(", ")}?`] : []),
  ];
  return reject(
    "not-found",
    `no ${layer} named ${clip(name)}${hints.length > 0 ? `: ${hints.join("; ")}` : ""}`,
    {
      layer,
      name,
      suggestions: near,
      removed,
    },
  );
}
