import type { Layer } from "@kumiki-graph/core";
import type { Command } from "../command.js";
import { unwrap } from "../errors.js";
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
    // From the table of every definition kept for this state (no fold); else from the store,
    // keeping the table for the next list or view.
    let definitions = await ctx.keptList(layer);
    if (definitions === undefined) {
      const store = await ctx.openReadStore();
      // A layer as typed, checked above (the store checks it again and names the layers).
      definitions = unwrap(store.list(layer as Layer | undefined));
      await ctx.keepDefinitions();
    }
    return {
      json: { layer: layer ?? null, definitions },
      text: definitions.map((d) => d.qname).join("\n"),
    };
  },
};
