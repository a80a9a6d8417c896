import { isLayer, LAYER_PLURALS, LAYERS, type Layer } from "../lang/layers.js";

/** The folder of each layer in the project.kumiki/ tree (ai-edit.md §9.10). */
export const LAYER_DIRS: Readonly<Record<Layer, string>> = LAYER_PLURALS;

/** The extension of a definition file. */
export const DEFINITION_EXT = ".kumiki";

const LAYER_OF_DIR: ReadonlyMap<string, Layer> = new Map(LAYERS.map((l) => [LAYER_DIRS[l], l]));

/** The tree path of a definition, `/`-separated and relative to the tree root: `slots/todos.kumiki`. */
export function definitionPath(layer: Layer, name: string): string {
  return `${LAYER_DIRS[layer]}/${name}${DEFINITION_EXT}`;
}

/** The layer and name a tree path stands for; undefined for a path outside the layer folders. */
export function parseDefinitionPath(path: string): { layer: Layer; name: string } | undefined {
  const slash = path.indexOf("/");
  if (slash <= 0 || path.indexOf("/", slash + 1) !== -1) return undefined;
  const layer = LAYER_OF_DIR.get(path.slice(0, slash));
  const file = path.slice(slash + 1);
  if (layer === undefined || !isLayer(layer) || !file.endsWith(DEFINITION_EXT)) return undefined;
  const name = file.slice(0, -DEFINITION_EXT.length);
  return name === "" ? undefined : { layer, name };
}
