/**
 * The write tools: kumiki_add, kumiki_replace, kumiki_edit, kumiki_rename, kumiki_remove. Each is
 * one core store call; a write is reported only once core has stored it durably, and every answer
 * carries the op-ids it wrote.
 */
import {
  LAYERS,
  MAX_IDENTIFIER_LENGTH,
  qualifiedName,
  type WriteReceipt,
  withRemedy,
} from "@kumiki-graph/core";
import { z } from "zod";
import { defineTool, fail, fromCore, type Outcome, type ToolContext } from "../tool.js";
import { limitExceeded } from "../wire-error.js";

/** A task id, as core takes it (declared here so that a bad one is refused by name, up front). */
export const Task = z
  .string()
  .min(1)
  .max(128)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/,
    "a task id is letters, digits and . _ : @ / + -, from a letter or digit",
  )
  .optional();

/**
 * An idempotency key (optional on every single write): a retried call with the same key and
 * arguments is answered with the first call's receipt instead of writing twice (the server wraps
 * the call; see server.ts).
 */
export const IdempotencyKey = z.string().max(128).optional();

/** The most anchors (or body:N lines) one edit takes, as core's edit input does. */
const MAX_ANCHORS = 256;

/** A definition name, as the language takes it: a letter, then letters, digits, _ and -; at most 32. */
export const DefinitionName = z
  .string()
  .max(MAX_IDENTIFIER_LENGTH)
  .regex(/^[a-zA-Z][a-zA-Z0-9_-]*$/, "a name is a letter, then letters, digits, _ and -");

/** One of the ten layers. */
export const LayerArg = z.enum(LAYERS);

/** What every write answers. */
const WriteOutput = z.object({
  opIds: z.array(z.string()).describe("the ops written, in order"),
  def: z.string().optional().describe("kumiki_add: the new definition's identity"),
  removed: z.array(z.string()).optional().describe("kumiki_remove: every definition it took away"),
  warnings: z.array(z.string()).optional(),
  replayed: z
    .boolean()
    .optional()
    .describe("true: the receipt of the first call with this idempotency_key, nothing written again"),
});

type WriteAnswer = z.output<typeof WriteOutput>;

function answerOf(receipt: WriteReceipt): WriteAnswer {
  return {
    opIds: [...receipt.opIds],
    ...(receipt.warnings === undefined || receipt.warnings.length === 0
      ? {}
      : { warnings: [...receipt.warnings] }),
    ...(receipt.replayed === true ? { replayed: true } : {}),
  };
}

/** Refuses texts over bodyBytes, naming the limit. */
export function overBody(bytes: number, ctx: ToolContext, what: string): Outcome<never> | undefined {
  const max = ctx.limits.bodyBytes;
  if (bytes <= max) return undefined;
  return fail(
    limitExceeded(
      "bodyBytes",
      max,
      bytes,
      `the size in bytes of ${what}`,
      "split the change into smaller writes",
    ),
  );
}

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

export const WRITE = { readOnlyHint: false, openWorldHint: false } as const;

export const add = defineTool({
  name: "kumiki_add",
  title: "Add",
  description:
    "Adds a definition: layer, name, body (the text after the name, e.g. ': Int = 0'). Refused if the name is taken, the text does not parse or it adds an error.",
  input: z.strictObject({
    layer: LayerArg,
    name: DefinitionName,
    body: z.string().describe("the text after the name"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: WriteOutput,
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: true },
  async run({ layer, name, body, task }, ctx) {
    const over = overBody(bytes(body), ctx, "body");
    if (over !== undefined) return over;
    const r = await ctx.store.add({ layer, name, body, ...(task === undefined ? {} : { task }) }, ctx.write);
    return fromCore(r, ctx, (receipt) => {
      const def = receipt.ops.find((o) => o.op === "add")?.def;
      return { ...answerOf(receipt), ...(def === undefined ? {} : { def }) };
    });
  },
});

export const replace = defineTool({
  name: "kumiki_replace",
  title: "Replace",
  description:
    "Replaces a definition's body (the text after its name), keeping its identity and references. Refused if the text does not parse or adds an error.",
  input: z.strictObject({
    qname: z.string().describe("layer.name or def_…"),
    body: z.string().describe("the new text after the name"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: WriteOutput,
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: true },
  async run({ qname, body, task }, ctx) {
    const over = overBody(bytes(body), ctx, "body");
    if (over !== undefined) return over;
    const r = await ctx.store.replace({ qname, body, ...(task === undefined ? {} : { task }) }, ctx.write);
    return fromCore(r, ctx, answerOf);
  },
});

export const edit = defineTool({
  name: "kumiki_edit",
  title: "Edit",
  description:
    "Edits a definition's text as kumiki_view shows it: each find must occur once (trailing whitespace tolerated); all apply or none. A kumiki_check auto-patch ({\"body:N\": \"replace 'A' -> 'B'\"}) is taken as it is.",
  input: z.strictObject({
    qname: z.string().describe("layer.name or def_…"),
    patch: z
      .union([
        z
          .array(z.strictObject({ find: z.string(), replace: z.string() }))
          .min(1)
          .max(MAX_ANCHORS),
        // One anchor alone, as kumiki edit and a bundle's edit item take it.
        z.strictObject({ find: z.string(), replace: z.string() }),
        z
          .record(z.string().regex(/^body:[1-9][0-9]*$/), z.string())
          .refine((r) => Object.keys(r).length <= MAX_ANCHORS, `at most ${MAX_ANCHORS} lines`)
          .meta({ maxProperties: MAX_ANCHORS }),
      ])
      .describe("anchors (a list, or one alone), or the body:N lines of an auto-patch"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: WriteOutput,
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: false },
  async run({ qname, patch, task }, ctx) {
    const over = overBody(
      Array.isArray(patch)
        ? patch.reduce((n, a) => n + bytes(a.find) + bytes(a.replace), 0)
        : Object.values(patch).reduce((n, v) => n + bytes(v), 0),
      ctx,
      "the patch's find and replace texts",
    );
    if (over !== undefined) return over;
    const r = await ctx.store.edit({ qname, patch, ...(task === undefined ? {} : { task }) }, ctx.write);
    return fromCore(r, ctx, answerOf);
  },
});

export const rename = defineTool({
  name: "kumiki_rename",
  title: "Rename",
  description: "Renames a definition; dependents show the new name (references are by identity).",
  input: z.strictObject({
    qname: z.string().describe("layer.name or def_…"),
    new_name: z.string().describe("the new name (same layer)"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: WriteOutput,
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: true },
  async run({ qname, new_name, task }, ctx) {
    const r = await ctx.store.rename(
      { qname, newName: new_name, ...(task === undefined ? {} : { task }) },
      ctx.write,
    );
    return fromCore(r, ctx, answerOf);
  },
});

export const remove = defineTool({
  name: "kumiki_remove",
  title: "Remove",
  description:
    "Removes a definition. Refused while live definitions reference it (they are listed); cascade also removes every referrer, transitively, in one write. kumiki_revert brings it back.",
  input: z.strictObject({
    qname: z.string().describe("layer.name or def_…"),
    cascade: z.boolean().optional().describe("also every referrer, transitively"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: WriteOutput,
  annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
  async run({ qname, cascade, task }, ctx) {
    const removed = await ctx.store.remove(
      {
        qname,
        ...(cascade === undefined ? {} : { cascade }),
        ...(task === undefined ? {} : { task }),
      },
      ctx.write,
    );
    // Said in this tool's arguments: there is cascade, and no force (MCP leaves nothing dangling).
    const r = removed.ok
      ? removed
      : {
          ok: false as const,
          error: withRemedy(removed.error, "give cascade: true to remove every dependent too"),
        };
    return fromCore(r, ctx, (receipt) => ({
      ...answerOf(receipt),
      removed: [
        ...(receipt.removed ??
          receipt.ops.filter((o) => o.op === "remove").map((o) => qualifiedName(o.layer, o.name))),
      ],
    }));
  },
});
