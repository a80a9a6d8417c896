import type { RefsResult } from "@kumiki-graph/core";
import type { Command, CommandContext } from "../command.js";
import { unwrap } from "../errors.js";
import { refsText } from "../format.js";
import { checkSelector } from "../shape.js";

/**
 * `refs` of `qname` from the table of every definition kept for this state (no fold); else from
 * the store, keeping the table for the next read. `view --refs` answers the same way.
 */
export async function keptOrStoreRefs(ctx: CommandContext, qname: string): Promise<RefsResult> {
  const kept = await ctx.keptRefs(qname);
  if (kept !== undefined) return kept;
  const r = unwrap((await ctx.openReadStore()).refs(qname));
  await ctx.keepDefinitions();
  return r;
}

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
    const r = await keptOrStoreRefs(ctx, qname);
    return { json: r, text: refsText(r) };
  },
};
