import type { Definition, Field } from "./ast.js";
import type { ReferenceSite } from "./references.js";

/** The names to show a definition with: its own, and per reference site the target's current name. */
export interface RenderNames {
  readonly self: string;
  /** `refs[i]` replaces `sites[i]`; undefined keeps the text as written. */
  readonly refs: readonly (string | undefined)[];
}

/**
 * Renders a definition with the given names for itself and for what it references — how the store
 * shows a definition after a rename (ai-edit.md §9.5.3: hashes turned back into labels). Everything
 * that is not a name (layout, comments, literals) is kept byte for byte, so a definition nobody
 * renamed renders exactly as it was written. `source` is the text `def` was parsed from.
 */
export function renderDefinition(
  source: string,
  def: Definition,
  sites: readonly ReferenceSite[],
  names: RenderNames,
): string {
  const edits: { offset: number; end: number; text: string }[] = [
    { offset: def.name.span.offset, end: def.name.span.end, text: names.self },
  ];
  let separators: Map<number, string> | undefined;
  sites.forEach((site, i) => {
    const name = names.refs[i];
    if (name === undefined) return;
    let text = name;
    // A shorthand field `{todos}` is both the field's name and its value: renaming the slot must
    // keep the field's name, so it becomes `{todos=newName}` (or `todos: newName`).
    if (site.role === "shorthand" && name !== site.name) {
      separators ??= shorthandSeparators(def, source);
      text = `${site.name}${separators.get(site.span.offset) ?? "="}${name}`;
    }
    edits.push({ offset: site.span.offset, end: site.span.end, text });
  });
  edits.sort((a, b) => a.offset - b.offset);
  let out = "";
  let at = 0;
  for (const e of edits) {
    // Sites never overlap; an overlapping edit would mean a bug in reference extraction, and
    // skipping it keeps the text well-formed rather than garbling it.
    if (e.offset < at) continue;
    out += source.slice(at, e.offset) + e.text;
    at = e.end;
  }
  return out + source.slice(at);
}

/**
 * For each shorthand field (keyed by its key's offset), the separator its collection writes between
 * a key and a value: taken from a sibling field that has a value, else `: ` in a props block and
 * `=` elsewhere (record literals and named arguments).
 */
function shorthandSeparators(def: Definition, source: string): Map<number, string> {
  const out = new Map<number, string>();
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const obj = node as { kind?: unknown; fields?: unknown };
    if (Array.isArray(obj.fields)) {
      const fields = obj.fields as Field[];
      const withValue = fields.find((f) => f.value !== undefined);
      let sep = obj.kind === "Props" ? ": " : "=";
      if (withValue?.value !== undefined) {
        const between = source.slice(withValue.key.span.end, withValue.value.span.offset);
        sep = between.includes(":") ? ": " : "=";
      }
      for (const f of fields) if (f.value === undefined) out.set(f.key.span.offset, sep);
    }
    for (const value of Object.values(node)) if (typeof value === "object") visit(value);
  };
  visit(def);
  return out;
}
