import type { Command } from "../command.js";

/** `kumiki status`: one line saying where the store stands. */
export const status: Command = {
  name: "status",
  summary: "one line: definitions, ops, heads, pending, quarantined and conflicts",
  usage: ["status"],
  examples: ["kumiki status", "kumiki status --json | jq .conflicts"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const store = await ctx.openReadStore();
    const s = store.status();
    const heads =
      s.heads.length === 0 ? "no ops yet" : `head${s.heads.length === 1 ? "" : "s"} ${s.heads.join(", ")}`;
    const text = [
      `${s.definitions} definition${s.definitions === 1 ? "" : "s"}`,
      `${s.ops} op${s.ops === 1 ? "" : "s"}`,
      heads,
      `${s.pending} pending`,
      `${s.quarantined.length} quarantined`,
      `${s.conflicts} conflict${s.conflicts === 1 ? "" : "s"}`,
      `author ${s.author}`,
    ].join(" · ");
    return { json: s, text };
  },
};
