/**
 * Checks of a tree file before it is taken into the store: its layer folder, its name, its text.
 */
import { parseText } from "../graph/materialize.js";
import { canonicalForm } from "../lang/canonical.js";
import type { Layer } from "../lang/layers.js";
import { isDefinitionName } from "../ops/op.js";
import { parseDefinitionPath } from "./layout.js";

/** Why a file of the tree cannot be taken: where, and what to do. */
export interface FileProblem {
  readonly path: string;
  readonly code: "parse-error" | "definition-mismatch" | "invalid-name";
  readonly message: string;
  /** 1-based position in the file, for a parse error. */
  readonly line?: number;
  readonly column?: number;
}

/** A file of the tree that parses: the definition it declares and the one its path names. */
export interface CheckedFile {
  readonly path: string;
  readonly layer: Layer;
  /** The name its path gives (`types/Todo.kumiki` → `Todo`). */
  readonly name: string;
  /** The name its text declares. */
  readonly declared: string;
  /** The layer its text declares. */
  readonly declaredLayer: Layer;
}

/** Parses a file of the tree: its text must hold one definition, in the layer of its folder. */
export function checkFile(path: string, content: string): CheckedFile | FileProblem {
  const at = parseDefinitionPath(path);
  if (at === undefined) throw new Error(`not a tree path: ${path}`);
  if (!isDefinitionName(at.name)) {
    return {
      path,
      code: "invalid-name",
      message: `${path}: ${JSON.stringify(at.name)} is not a definition name (a letter, then letters, digits, _ or -, at most 32 characters); rename the file`,
    };
  }
  const p = parseText(content);
  if (!p.ok) {
    const { span, message } = p.error;
    return {
      path,
      code: "parse-error",
      message: `${path}:${span.line}:${span.column}: ${message}; fix the file and sync again (nothing from it was applied)`,
      line: span.line,
      column: span.column,
    };
  }
  if (p.def.layer !== at.layer) {
    return {
      path,
      code: "definition-mismatch",
      message: `${path} defines a ${p.def.layer} (${p.def.name.name}); a file in ${path.slice(0, path.indexOf("/"))}/ must define a ${at.layer}: move it to the folder of its layer`,
    };
  }
  return { path, layer: at.layer, name: at.name, declared: p.def.name.name, declaredLayer: p.def.layer };
}

/**
 * What stays of a definition text when its own name and its layout are left out: its canonical
 * form with references by name (a reference to itself by a placeholder). Two texts with the same
 * key are the same definition under another name, however they are laid out or commented: a file
 * moved to a new name with this key unchanged is a rename.
 */
export function moveKey(content: string): string | undefined {
  const p = parseText(content);
  if (!p.ok) return undefined;
  const layer = p.def.layer;
  const ownName = p.def.name.name;
  const tokens = p.sites.map((s) =>
    s.name === ownName && s.layers.includes(layer) ? "\u0000self" : `${s.layers.join("|")}:${s.name}`,
  );
  return `${layer}\n${canonicalForm(p.def, p.sites, tokens)}`;
}
