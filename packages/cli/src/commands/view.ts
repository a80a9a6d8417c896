import type { DefinitionHistory } from "@kumiki-graph/core";
import { flag } from "../args.js";
import type { Command } from "../command.js";
import { failure, unwrap, usageError } from "../errors.js";
import { refsText, when } from "../format.js";
import { keptOrStore } from "../kept-or-store.js";
import { checkSelector, oneOf } from "../shape.js";

function historyText(hs: readonly DefinitionHistory[]): string {
  return hs
    .map((h) => {
      const state = h.alive ? (h.visible ? "live" : "live, hidden by a name conflict") : "removed";
      const names = h.names.length > 1 ? `; names ${h.names.join(" → ")}` : "";
      const head = `${h.qname} (${h.def}): ${state}${names}`;
      const rows = h.entries.map((e) => {
        const what = e.op === "rename" && e.newName !== undefined ? `rename → ${e.newName}` : e.op;
        const extra = [
          e.task === undefined ? undefined : `task ${e.task}`,
          e.reverts === undefined ? undefined : `reverts ${e.reverts}`,
          e.status === "applied"
            ? undefined
            : `${e.status}${e.conflict === undefined ? "" : ` (${e.conflict})`}`,
        ].filter((x) => x !== undefined);
        return `  ${e.opId}  ${when(e.ts)}  ${e.author}  ${what}${extra.length > 0 ? `  [${extra.join("; ")}]` : ""}`;
      });
      return [head, ...rows].join("\n");
    })
    .join("\n\n");
}

/** `kumiki view <selector>`: definitions as text, their hash, history or referrers (§9.2.1). */
export const view: Command = {
  name: "view",
  summary: "show definitions as text (a name, a pattern, or def_…); or their hash, history, referrers",
  usage: [
    "view <selector> [--with-deps]",
    "view --hash <layer.name>",
    "view --history <layer.name | def_…>",
    "view --refs <layer.name>",
  ],
  examples: [
    "kumiki view slot.todos",
    "kumiki view 'slot.*'",
    "kumiki view --with-deps reducer.add",
    "kumiki view --hash slot.todos",
    "kumiki view --history slot.todos",
    "kumiki view --refs slot.draft --json | jq '.referrers[].qname'",
  ],
  options: {
    "with-deps": { type: "boolean", description: "also show every definition they reference, transitively" },
    hash: { type: "boolean", description: "print the definition's content hash (h:…)" },
    history: { type: "boolean", description: "print the definition's ops: who, when, what became of each" },
    refs: { type: "boolean", description: "list the definitions that reference it, with the lines" },
  },
  positionals: { min: 1, max: 1, names: "selector" },
  async run(ctx) {
    const selector = ctx.positionals[0] as string;
    const mode = oneOf(ctx.verb, ctx.options, ["with-deps", "hash", "history", "refs"]);
    const many = await checkSelector(ctx.verb, selector);
    if (many && (mode === "hash" || mode === "history")) {
      throw usageError(`kumiki view: --${mode} takes one definition (layer.name or def_…), not a pattern`, {
        selector,
      });
    }
    const store = await ctx.openReadStore();
    switch (mode) {
      case "hash": {
        const hash = unwrap(store.hash(selector));
        return { json: { selector, hash }, text: hash };
      }
      case "history": {
        const histories = unwrap(store.history(selector));
        return { json: { selector, histories }, text: historyText(histories) };
      }
      case "refs": {
        const r = await keptOrStore(ctx, ctx.keptRefs(selector), (s) => unwrap(s.refs(selector)));
        return { json: r, text: refsText(r) };
      }
      default: {
        const withDeps = flag(ctx.options, "with-deps");
        // A read kept the table for this state, or a write appended to it.
        const v = await keptOrStore(ctx, ctx.keptView(selector, withDeps), (s) =>
          unwrap(s.view(selector, { withDeps })),
        );
        if (v.definitions.length === 0) {
          throw failure(
            "not-found",
            `no definition matches ${selector} ('kumiki list' shows what there is)`,
            {
              selector,
            },
          );
        }
        const definitions = v.definitions.map((d) => ({
          def: d.def,
          qname: d.qname,
          layer: d.layer,
          name: d.name,
          alive: d.alive,
          visible: d.visible,
          version: d.version,
          text: d.text,
        }));
        return { json: { selector, definitions }, text: v.text };
      }
    }
  },
};
