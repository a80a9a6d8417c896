import type { Layer } from "@kumiki-graph/core";
import type { Command } from "../command.js";
import { unwrap } from "../errors.js";
import { keptOrStore } from "../kept-or-store.js";
import { checkLayer } from "../shape.js";

/** `kumiki list [layer]`: the names of the definitions, in one layer or all (§9.2.1). */
export const list: Command = {
  name: "list",
  summary: "list definition names (layer.name), in one layer or all",
  usage: ["list [layer]"],
  examples: ["kumiki list", "kumiki list slot", "kumiki list tile --json | jq -r '.definitions[].name'"],
  options: {},
  positionals: { min: 0, max: 1, names: "layer" },
  async run(ctx) {
    const layer = ctx.positionals[0];
    if (layer !== undefined) await checkLayer(ctx.verb, layer);
    // A layer as typed, checked above (the store checks it again and names the layers).
    const definitions = await keptOrStore(ctx, ctx.keptList(layer), (store) =>
      unwrap(store.list(layer as Layer | undefined)),
    );
    return {
      json: { layer: layer ?? null, definitions },
      text: definitions.map((d) => d.qname).join("\n"),
    };
  },
};
