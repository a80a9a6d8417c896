/**
 * Argument shape checks a verb makes before it opens the store (exit 2 when they fail): the
 * syntax of layer names, qualified names, definition names, op-ids and selectors. Whether what
 * they name exists is the store's answer (exit 1).
 */
import type { Layer } from "@kumiki-graph/core";
import { loadReadCore } from "./core.js";
import { usageError } from "./errors.js";

/** `layer` is one of the layers (returned as one), or a usage error. */
export async function checkLayer(verb: string, layer: string): Promise<Layer> {
  const core = await loadReadCore();
  if (!core.isLayer(layer)) {
    throw usageError(
      `kumiki ${verb}: unknown layer ${JSON.stringify(layer)}: one of ${core.LAYERS.join(", ")}`,
      { layer },
    );
  }
  return layer;
}

/** `name` is a definition name (a letter, then letters, digits, _ and -; not a reserved word). */
export async function checkName(verb: string, name: string): Promise<void> {
  const core = await loadReadCore();
  if (!core.isDefinitionName(name)) {
    throw usageError(
      `kumiki ${verb}: ${JSON.stringify(name)} is not a definition name: a letter, then letters, digits, _ or -, and not a reserved word`,
      { name },
    );
  }
}

/** `qname` is `layer.name` or a definition id (`def_…`). */
export async function checkQname(verb: string, qname: string): Promise<void> {
  const q = (await loadReadCore()).parseQualifiedName(qname);
  if (!("error" in q) && q.kind === "def") return;
  if ("error" in q || !/^[A-Za-z][A-Za-z0-9_-]*$/.test(q.name)) {
    throw usageError(
      `kumiki ${verb}: ${JSON.stringify(qname)} is not layer.name (e.g. slot.todos) or a definition id (def_…)`,
      { qname },
    );
  }
}

/** `selector` parses (`slot.todos`, `slot.*`, `tile.Todo*`, `*.draft`, `def_…`); returns whether it has a `*`. */
export async function checkSelector(verb: string, selector: string): Promise<boolean> {
  const core = await loadReadCore();
  const sel = core.parseSelector(selector);
  if ("error" in sel) throw usageError(`kumiki ${verb}: ${sel.error}`, { selector });
  return sel.kind === "name" && (sel.wildcard || sel.layer === undefined);
}

/** `id` is an op-id (`op_` and a 26-character ULID). */
export async function checkOpId(verb: string, id: string): Promise<void> {
  const core = await loadReadCore();
  if (!core.isOpId(id)) {
    throw usageError(
      `kumiki ${verb}: ${JSON.stringify(id)} is not an op-id (op_ and a 26-character ULID; 'kumiki view --history' lists them)`,
      { opId: id },
    );
  }
}

/** At most one of `flags` is set; returns the one set, if any. */
export function oneOf(
  verb: string,
  options: Readonly<Record<string, unknown>>,
  flags: readonly string[],
): string | undefined {
  const set = flags.filter((f) => options[f] !== undefined && options[f] !== false);
  if (set.length > 1) {
    throw usageError(
      `kumiki ${verb}: ${set.map((f) => `--${f}`).join(" and ")} cannot be given together; give one`,
      { options: set },
    );
  }
  return set[0];
}
