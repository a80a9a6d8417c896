/**
 * kumiki_episode. ai-edit.md §9.9 keeps runtime episodes (reducer runs, effect results) in the
 * episode store of a build, apart from the op log; a graph store holds no runtime episode log. What
 * it does hold is the op log of the source graph, so an episode here is the ops written under one
 * task id (or one op), and every answer says so in `source` and `note`.
 */
import { quoted } from "@kumiki-graph/core";
import { z } from "zod";
import { answer, defineTool, fail, fromCore } from "../tool.js";
import { entryOf, HistoryEntry, READ_ONLY } from "./read.js";

/** Why an episode comes from the op log: sent with every answer. */
export const EPISODE_NOTE =
  "this store records no runtime episode log (ai-edit.md §9.9: runtime episodes belong to a build's episode store); this is the op log of the source graph: the ops written under this task id, or the one op with this id";

const EpisodeOutput = z.object({
  episode: z.string(),
  source: z.literal("op-log"),
  note: z.string(),
  entries: z.array(HistoryEntry.extend({ qname: z.string(), def: z.string() })),
});

export const episode = defineTool({
  name: "kumiki_episode",
  title: "Episode log",
  description:
    "The ops of a task id (the writes' task argument) or one op-id, oldest first: the source graph's op log (no runtime episode log is kept).",
  input: z.strictObject({
    episode_id: z.string().min(1).describe("a task id, or an op-id (op_…)"),
  }),
  output: EpisodeOutput,
  annotations: READ_ONLY,
  run({ episode_id }, ctx) {
    const entries: z.output<typeof EpisodeOutput>["entries"] = [];
    for (const s of ctx.store.read().graph.definitions()) {
      const h = ctx.store.history(s.def);
      if (!h.ok) return fromCore(h, ctx, () => undefined as never);
      for (const d of h.value)
        for (const e of d.entries)
          if (e.task === episode_id || e.opId === episode_id)
            entries.push({ ...entryOf(e), qname: d.qname, def: d.def });
    }
    if (entries.length === 0) {
      return fail({
        kind: "not-found",
        message: `no op in this store has task or op-id ${quoted(episode_id)}; ${EPISODE_NOTE}`,
      });
    }
    // Op-ids are ULIDs: their order is the order the ops were written in.
    entries.sort((a, b) => (a.opId < b.opId ? -1 : a.opId > b.opId ? 1 : 0));
    return answer({ episode: episode_id, source: "op-log" as const, note: EPISODE_NOTE, entries });
  },
});
