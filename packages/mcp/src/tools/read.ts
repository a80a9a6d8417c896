/** The read-only tools: kumiki_view, kumiki_list, kumiki_refs, kumiki_history, kumiki_conflicts. */
import { LAYERS, parseSelector } from "@kumiki-graph/core";
import { z } from "zod";
import { withToolCalls } from "../remedy.js";
import { answer, answerWithText, defineTool, fail, fromCore } from "../tool.js";
import { limitExceeded } from "../wire-error.js";

/** Annotations of a tool that only reads. */
export const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

const DefinitionRef = z.object({
  qname: z.string().describe("layer.name, as shown"),
  def: z.string().describe("the definition's identity (def_…), stable across renames"),
});

export const view = defineTool({
  name: "kumiki_view",
  title: "View",
  description:
    "A definition's text (slot.todos; def_… if hidden or removed) or a pattern's matches (slot.*, tile.Todo*); with_deps adds what they reference. The first text item is the Kumiki text; kumiki_edit anchors match it.",
  input: z.strictObject({
    selector: z.string().describe("layer.name, a pattern with *, or a definition id def_…"),
    with_deps: z.boolean().optional().describe("also what they reference, transitively"),
  }),
  output: z.object({
    definitions: z.array(
      DefinitionRef.extend({
        line: z.number().describe("the line (from 1) of the first text item at which it starts"),
      }),
    ),
  }),
  annotations: READ_ONLY,
  run({ selector, with_deps }, ctx) {
    const sel = parseSelector(selector);
    if (!("error" in sel) && sel.kind === "name" && (sel.wildcard || sel.layer === undefined)) {
      // Counted without dependencies: the limit bounds what a pattern matches.
      const matches = ctx.store.view(selector);
      const n = matches.ok ? matches.value.definitions.length : 0;
      const max = ctx.limits.wildcardResults;
      if (n > max)
        return fail(
          limitExceeded(
            "wildcardResults",
            max,
            n,
            `the number of definitions ${JSON.stringify(selector)} matches`,
            "narrow the pattern (a layer, a longer prefix), or list the names with kumiki_list first",
          ),
        );
    }
    const viewed = ctx.store.view(selector, { withDeps: with_deps === true });
    if (!viewed.ok) return fromCore(viewed, ctx, () => ({ definitions: [] }));
    const v = viewed.value;
    // The text is sent once, as it is (no JSON escaping), as the first text item: as JSON in the
    // structured result too it made an answer 2.0-2.8x its text, and 4x with its escapes.
    return answerWithText(
      { definitions: v.definitions.map((d, i) => ({ qname: d.qname, def: d.def, line: v.lines[i]! })) },
      v.text,
    );
  },
});

export const list = defineTool({
  name: "kumiki_list",
  title: "List",
  description: "The names that show, in one layer or in all.",
  input: z.strictObject({
    layer: z.enum(LAYERS).optional().describe("one layer; all layers when omitted"),
  }),
  output: z.object({ definitions: z.array(DefinitionRef) }),
  annotations: READ_ONLY,
  run({ layer }, ctx) {
    return fromCore(ctx.store.list(layer), ctx, (entries) => ({
      definitions: entries.map((e) => ({ qname: e.qname, def: e.def })),
    }));
  },
});

export const refs = defineTool({
  name: "kumiki_refs",
  title: "Referrers",
  description:
    "The live definitions referencing one (or any a pattern matches), with their referencing lines and counts per layer.",
  input: z.strictObject({ qname: z.string().describe("layer.name, def_… or a pattern (slot.*)") }),
  output: z.object({
    target: z.string(),
    referrers: z.array(
      DefinitionRef.extend({
        layer: z.string(),
        lines: z.array(z.number()).describe("lines of its text (from 1) that reference the target"),
        refersTo: z
          .array(z.string())
          .optional()
          .describe("with a pattern: which matched definitions it references"),
      }),
    ),
    byLayer: z.record(z.string(), z.number()),
    matched: z.array(z.string()).optional().describe("with a pattern: the definitions it matched"),
  }),
  annotations: READ_ONLY,
  run({ qname }, ctx) {
    return fromCore(ctx.store.refs(qname), ctx, (r) => ({
      target: r.target,
      referrers: r.referrers.map((x) => ({
        qname: x.qname,
        def: x.def,
        layer: x.layer,
        lines: [...x.lines],
        ...(x.refersTo === undefined ? {} : { refersTo: [...x.refersTo] }),
      })),
      byLayer: { ...r.byLayer },
      ...(r.matched === undefined ? {} : { matched: [...r.matched] }),
    }));
  },
});

/** One op of a history or an episode, as sent. */
const HistoryEntry = z.object({
  opId: z.string(),
  op: z.string().describe("add, replace, edit, rename, remove, link, unlink"),
  author: z.string(),
  ts: z.number().describe("milliseconds since the epoch"),
  name: z.string().describe("the definition's name when the op was written"),
  newName: z.string().optional(),
  task: z.string().optional(),
  reverts: z.string().optional(),
  status: z.string().describe("applied, lost, failed, rolled-back or orphaned"),
  conflict: z.string().optional().describe("the conflict record explaining a status other than applied"),
});

export const history = defineTool({
  name: "kumiki_history",
  title: "History",
  description:
    "The ops of every definition that has had a name (shown, renamed away, removed, or beaten to it), across renames; or of one def_….",
  input: z.strictObject({ qname: z.string().describe("layer.name (no pattern) or def_…") }),
  output: z.object({
    definitions: z.array(
      DefinitionRef.extend({
        alive: z.boolean(),
        visible: z.boolean(),
        names: z.array(z.string()).describe("every name it had, in order"),
        entries: z.array(HistoryEntry),
      }),
    ),
  }),
  annotations: READ_ONLY,
  run({ qname }, ctx) {
    return fromCore(ctx.store.history(qname), ctx, (hs) => ({
      definitions: hs.map((h) => ({
        qname: h.qname,
        def: h.def,
        alive: h.alive,
        visible: h.visible,
        names: [...h.names],
        entries: h.entries.map(entryOf),
      })),
    }));
  },
});

/** A core history entry with only the fields it has (no `undefined` values on the wire). */
export function entryOf(e: {
  readonly opId: string;
  readonly op: string;
  readonly author: string;
  readonly ts: number;
  readonly name: string;
  readonly newName?: string;
  readonly task?: string;
  readonly reverts?: string;
  readonly status: string;
  readonly conflict?: string;
}): z.output<typeof HistoryEntry> {
  return {
    opId: e.opId,
    op: e.op,
    author: e.author,
    ts: e.ts,
    name: e.name,
    ...(e.newName === undefined ? {} : { newName: e.newName }),
    ...(e.task === undefined ? {} : { task: e.task }),
    ...(e.reverts === undefined ? {} : { reverts: e.reverts }),
    status: e.status,
    ...(e.conflict === undefined ? {} : { conflict: e.conflict }),
  };
}

export { HistoryEntry };

export const conflicts = defineTool({
  name: "kumiki_conflicts",
  title: "Conflicts",
  description:
    "Every conflict record: where concurrent writes met and an op did not take effect (same-name add, losing replace or rename, overridden remove, rolled-back reference), with the decision and how to retry.",
  input: z.strictObject({}),
  output: z.object({
    policy: z.string().describe("the conflict policy in force: strict, heal or warn"),
    conflicts: z.array(
      z.object({
        id: z.string().describe("stable: <kind>:<the op whose intent was lost>"),
        kind: z.string(),
        ops: z.array(z.string()).describe("the ops involved, the one that lost first"),
        definitions: z.array(z.string()).describe("the definitions involved, by identity (def_…)"),
        reason: z.string(),
        decision: z.string(),
        retry: z.string().describe("how to retry, with the tool calls that do it"),
        remedy: z
          .array(z.record(z.string(), z.string()))
          .describe(
            "the steps of retry as data: {do: revert|unlock|refs|view|rename|remove|edit|link|list, …}",
          ),
      }),
    ),
  }),
  annotations: READ_ONLY,
  run(_args, ctx) {
    return answer({
      policy: ctx.store.conflictPolicy(),
      conflicts: ctx.store.conflicts().map((c) => ({
        id: c.id,
        kind: c.kind,
        ops: [...c.ops],
        definitions: [...c.definitions],
        reason: c.reason,
        decision: c.decision,
        retry: withToolCalls(c.retry, c.remedy),
        remedy: c.remedy.map((step) => ({ ...step })),
      })),
    });
  },
});
