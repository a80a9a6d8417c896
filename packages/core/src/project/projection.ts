/**
 * What the store shows as the project.kumiki/ tree: each definition's file path and text.
 */
import type { GraphReader } from "../graph/reader.js";
import type { Layer } from "../lang/layers.js";
import type { DefId } from "../ops/ids.js";
import { fileTextOf } from "./file-text.js";
import { definitionPath } from "./layout.js";
import { programOrder } from "./program.js";

/** One file of the tree as the store shows it. */
export interface ProjectedFile {
  readonly def: DefId;
  readonly layer: Layer;
  readonly name: string;
  /** `slots/todos.kumiki`. */
  readonly path: string;
  /** The definition's text with current names, as the store renders it. */
  readonly text: string;
  /** What its file holds ({@link fileTextOf} of `text`). */
  readonly content: string;
}

/** The tree the store shows: one file per definition that shows under its name. */
export interface TreeProjection {
  readonly byPath: ReadonlyMap<string, ProjectedFile>;
  readonly byDef: ReadonlyMap<DefId, ProjectedFile>;
}

/** The tree of the graph a reader shows (hidden and removed definitions have no file). */
export function projectGraph(reader: GraphReader): TreeProjection {
  const byPath = new Map<string, ProjectedFile>();
  const byDef = new Map<DefId, ProjectedFile>();
  for (const s of programOrder(reader)) {
    const text = reader.materializer.render(s);
    const f: ProjectedFile = {
      def: s.def,
      layer: s.layer,
      name: s.name,
      path: definitionPath(s.layer, s.name),
      text,
      content: fileTextOf(text),
    };
    byPath.set(f.path, f);
    byDef.set(f.def, f);
  }
  return { byPath, byDef };
}
