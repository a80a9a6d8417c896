import type { Command } from "../command.js";
import { loadStorageRead } from "../core.js";
import { keptOrStore } from "../kept-or-store.js";

/** `kumiki status`: one line saying where the store stands. */
export const status: Command = {
  name: "status",
  summary: "one line: definitions, ops, heads, pending, quarantined and conflicts",
  usage: ["status"],
  examples: ["kumiki status", "kumiki status --json | jq .conflicts"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const status = await keptOrStore(ctx, ctx.keptStatus(), (store) => store.status());
    const sr = await loadStorageRead();
    const ws = sr.findWorkspace(ctx.storeDir ?? ctx.io.cwd);
    const config = ws.ok ? sr.readConfig(ws.value) : undefined;
    const graph = config?.ok === true ? config.value.graph : undefined;
    // The graph's URL: what `kumiki clone ws://server/<graph>` needs after the server's URL.
    const s = { ...status, ...(graph === undefined ? {} : { graph }) };
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
    if (s.damage === undefined) return { json: s, text };
    const d = s.damage;
    const lines = [
      `${text} · DAMAGED`,
      ...d.chunks.map((c) => `  damaged chunk ${c.name}: ${c.reason}`),
      ...(d.lostChanges.length > 0
        ? [`  ${d.lostChanges.length} change(s) op-log.jsonl was written after are missing from the document`]
        : []),
      `  reads show the sound chunks${d.fromOpLog > 0 ? ` plus ${d.fromOpLog} op(s) from op-log.jsonl` : ""}; writes are refused`,
      "  run `kumiki repair` (or `kumiki repair --dry-run` to see what it would do)",
    ];
    return { json: s, text: lines.join("\n") };
  },
};
