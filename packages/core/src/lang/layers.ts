/**
 * The definition layers a Kumiki graph holds: the seven core layers of language.md §1.1.1 and the
 * three auxiliary top-level definitions (test, theme, motion).
 */
export const LAYERS = [
  "type",
  "slot",
  "effect",
  "reducer",
  "tile",
  "fn",
  "app",
  "test",
  "theme",
  "motion",
] as const;

/** One of {@link LAYERS}. */
export type Layer = (typeof LAYERS)[number];

const layerSet: ReadonlySet<string> = new Set(LAYERS);

/** True when `s` names a layer (`"slot"`, `"tile"`, …). */
export function isLayer(s: string): s is Layer {
  return layerSet.has(s);
}

/** The `layer.name` form used everywhere a definition is named to a person (`slot.todos`). */
export function qualifiedName(layer: Layer, name: string): string {
  return `${layer}.${name}`;
}

/** Each layer's plural, as messages count definitions ("3 tiles") and the project tree names folders. */
export const LAYER_PLURALS: Readonly<Record<Layer, string>> = {
  type: "types",
  slot: "slots",
  effect: "effects",
  reducer: "reducers",
  tile: "tiles",
  fn: "fns",
  app: "apps",
  test: "tests",
  theme: "themes",
  motion: "motions",
};
