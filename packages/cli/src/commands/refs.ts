import type { Command } from "../command.js";
import { unwrap } from "../errors.js";
import { refsText } from "../format.js";
import { keptOrStore } from "../kept-or-store.js";
import { checkSelector } from "../shape.js";

/** `kumiki refs <layer.name | pattern>`: the definitions that reference it (as `view --refs`). */
export const refs: Command = {
  name: "refs",
  summary:
    "list the definitions that reference a definition (or any a pattern matches), with the lines that do",
  usage: ["refs <layer.name | def_… | pattern>"],
  examples: ["kumiki refs slot.draft", "kumiki refs type.Todo --json | jq .byLayer", "kumiki refs 'slot.*'"],
  options: {},
  positionals: { min: 1, max: 1, names: "layer.name" },
  async run(ctx) {
    const qname = ctx.positionals[0] as string;
    await checkSelector(ctx.verb, qname);
    const r = await keptOrStore(ctx, ctx.keptRefs(qname), (store) => unwrap(store.refs(qname)));
    return { json: r, text: refsText(r) };
  },
};
