/**
 * @kumiki-graph/core: the Kumiki definition language front-end, the op model and its deterministic
 * merge, and the graph store on Automerge. Named exports only; test/exports.test.ts pins the list.
 */
export { isLayer, LAYERS, type Layer, qualifiedName } from "./lang/layers.js";
export type { Span } from "./lang/span.js";
