/** Ops from elsewhere (`Store.ingest`): checked against the graph before any is stored. */
import type { DefinitionState, Graph } from "../graph/graph.js";
import { parseText, qualified, siteTarget } from "../graph/materialize.js";
import { isStandardReference } from "../lang/stdlib.js";
import type { DefId, OpId } from "../ops/ids.js";
import { isControlOp, type LogOp, type Op, parseOp } from "../ops/op.js";
import { bodyLineOf, composeSource } from "../ops/source.js";
import { opContentHash } from "./fingerprint.js";
import { ok, reject, type StoreResult } from "./result.js";

// ---------------------------------------------------------------------------------------------
// Ops from elsewhere
// ---------------------------------------------------------------------------------------------

/** The top-level fields in which two ops differ, by name. */
function differingFields(a: LogOp, b: LogOp): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const get = (o: LogOp, k: string) => (o as unknown as Record<string, unknown>)[k];
  return [...keys]
    .filter((k) => opContentHash(get(a, k) ?? null) !== opContentHash(get(b, k) ?? null))
    .sort();
}

/**
 * The ops of `inputs` the graph does not hold yet, each parsed (a malformed one refused); an op
 * held already is skipped, and another op under a held op-id refused (forged or corrupted).
 */
function freshOps(
  graph: Graph,
  inputs: readonly unknown[],
): StoreResult<{ fresh: LogOp[]; batch: Map<OpId, LogOp> }> {
  const fresh: LogOp[] = [];
  const batch = new Map<OpId, LogOp>();
  for (const [i, input] of inputs.entries()) {
    const r = parseOp(input);
    if (!r.ok)
      return reject(r.error.code, `op ${i + 1}: ${r.error.message}`, { index: i, issues: r.error.issues });
    const op = r.op;
    const id = op["op-id"];
    const held = graph.op(id) ?? batch.get(id);
    // Held, but quarantined (it failed the schema when it came): skipped as before.
    if (held === undefined && graph.holds(id)) continue;
    if (held !== undefined) {
      // An op-id names one op: the same op again is a no-op, another op under it is refused.
      if (opContentHash(held) !== opContentHash(op)) {
        const fields = differingFields(held, op);
        return reject(
          "op-id-reused",
          `op ${i + 1}: ${id} is already held with other content (${fields.join(", ")} differ): an op-id names exactly one op, so this one is forged or corrupted; nothing was stored (a new op needs a new op-id)`,
          { index: i, op: id, fields },
        );
      }
      continue;
    }
    batch.set(id, op);
    fresh.push(op);
  }
  return ok({ fresh, batch });
}

/**
 * The refusal of a text-bearing op (add, replace, edit), or undefined: its text must parse and
 * define what the op says, every binding name a definition the graph (or the batch) holds, and
 * every reference bind something — a replica's op (not in `spec`) is held as written instead.
 */
function checkText(
  op: Extract<Op, { op: "add" | "replace" | "edit" }>,
  where: string,
  spec: ReadonlySet<string>,
  exists: (d: DefId) => DefinitionState | Op | undefined,
  linked: ReadonlySet<string>,
): StoreResult<never> | undefined {
  const text = composeSource({
    layer: op.layer,
    name: op.name,
    body: op.body,
    head: op.head ?? `${op.layer} `,
  });
  const p = parseText(text);
  if (!p.ok) {
    // A replica's text that does not parse is kept as written, binding nothing (E0008).
    if (!spec.has(op["op-id"]) && Object.keys(op.refs).length === 0) return undefined;
    return reject(
      "parse-error",
      `${where}: its text does not parse${spec.has(op["op-id"]) ? "" : ", yet it binds references"} at body:${bodyLineOf(text, p.error.span.line)}, column ${p.error.span.column}: ${p.error.message.replace(/ at \d+:\d+$/, "")}`,
      { op: op["op-id"], text, span: { ...p.error.span, line: bodyLineOf(text, p.error.span.line) } },
    );
  }
  if (p.def.layer !== op.layer || p.def.name.name !== op.name) {
    return reject(
      "definition-mismatch",
      `${where}: its text defines ${qualified(p.def.layer, p.def.name.name)}, the op says ${qualified(op.layer, op.name)}`,
      {
        op: op["op-id"],
      },
    );
  }
  for (const [key, t] of Object.entries(op.refs)) {
    if (exists(t) === undefined) {
      return reject(
        "undefined-reference",
        `${where}: ${key} is bound to ${t}, which the graph does not hold`,
        { op: op["op-id"], key, target: t },
      );
    }
  }
  for (const site of p.sites) {
    if (isStandardReference(site) || siteTarget(site, op.refs) !== null) continue;
    // Validated as a set: a forward reference (import adds the definitions, then links the
    // references to those added after them) or a cycle is bound by a link of the same batch.
    if (site.layers.some((l) => linked.has(`${op.def} ${l}:${site.name}`))) continue;
    // A replica's reference that binds nothing is held unbound, as a faithful import holds it.
    if (!spec.has(op["op-id"])) continue;
    return reject(
      "undefined-reference",
      `${where}: ${site.name} at body:${bodyLineOf(text, site.span.line)}, column ${site.span.column} is bound to no definition (looked for a ${site.layers.join(" or ")})`,
      { op: op["op-id"], name: site.name, layers: site.layers },
    );
  }
  return undefined;
}

/**
 * Checks wire ops from elsewhere against the graph; the new ones, or the first reason to refuse.
 * A replica's op (not in `spec`, the op-ids of ops given in the §9.3.2 form) is taken as a faithful
 * import stored it: a text that does not parse and binds nothing, or a reference site bound to
 * nothing, is held as written (check reports it), as sync would hold it, so that `patch export`
 * of any workspace applies to an empty one and the two paths never disagree.
 */
export function checkIncoming(
  graph: Graph,
  inputs: readonly unknown[],
  spec: ReadonlySet<string>,
): StoreResult<LogOp[]> {
  const parsed = freshOps(graph, inputs);
  if (!parsed.ok) return parsed;
  const { fresh, batch } = parsed.value;
  const added = new Map<DefId, Op>();
  for (const o of fresh) if (o.op === "add" && !added.has(o.def)) added.set(o.def, o);
  const exists = (d: DefId): DefinitionState | Op | undefined => graph.definition(d) ?? added.get(d);
  // "<def> <ref key>" of every link in the batch (its target is checked below like any other).
  const linked = new Set<string>();
  for (const op of fresh) if (op.op === "link") linked.add(`${op.def} ${op.ref}`);
  for (const op of fresh) {
    const where = `${op.op} ${op["op-id"]}`;
    for (const p of op["parent-ops"]) {
      if (!graph.holds(p) && !batch.has(p)) {
        return reject(
          "unknown-parent",
          `${where}: parent op ${p} is not held; send the ops it was written after first`,
          { op: op["op-id"], parent: p },
        );
      }
    }
    if (isControlOp(op)) continue;
    if (op.op !== "add") {
      const target = exists(op.def);
      if (target === undefined)
        return reject("unknown-definition", `${where}: no definition ${op.def}`, {
          op: op["op-id"],
          def: op.def,
        });
      if (target.layer !== op.layer) {
        return reject(
          "definition-mismatch",
          `${where}: ${op.def} is a ${target.layer}, the op says ${op.layer}`,
          { op: op["op-id"] },
        );
      }
    }
    if (op.op === "link" && exists(op.target) === undefined) {
      return reject("undefined-reference", `${where}: links to ${op.target}, which the graph does not hold`, {
        op: op["op-id"],
        target: op.target,
      });
    }
    if (op.op === "add" || op.op === "replace" || op.op === "edit") {
      const refused = checkText(op, where, spec, exists, linked);
      if (refused !== undefined) return refused;
    }
  }
  return ok(fresh);
}
