/**
 * kumiki_apply (several ops in one all-or-nothing write, with a dry run that returns the diff and
 * a fingerprint, and `expect` to apply exactly what was previewed) and kumiki_revert (revert one op,
 * or undo a whole task). Each is one core call: `normalizePatch` + `store.preview` / `store.apply`,
 * `store.revert`, `store.undoTask`.
 */
import { normalizePatch } from "@kumiki-graph/core";
import { z } from "zod";
import { defineTool, fromCore } from "../tool.js";
import { IdempotencyKey, overBody, Task, WRITE } from "./write.js";

export const apply = defineTool({
  name: "kumiki_apply",
  title: "Apply a bundle",
  description:
    "One atomic write of several items, all or nothing: {op: add|replace|edit|rename|remove|link|unlink, …} with a qname or layer and name; a kumiki_check auto-patch or diagnostic is taken as an item. Items see earlier ones. dry_run answers a diff and fingerprint; expect applies exactly those ops.",
  input: z.strictObject({
    ops: z.array(z.record(z.string(), z.unknown())).min(1).describe("the items, in order"),
    dry_run: z.boolean().optional().describe("only preview: the diff and a fingerprint"),
    expect: z.string().optional().describe("a dry run's fingerprint: apply exactly its ops, or fail"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: z.object({
    opIds: z.array(z.string()).describe("the ops written, in order (none for a dry run)"),
    dryRun: z.boolean(),
    diff: z.string().optional().describe("dry run: per definition, its text now → after the write"),
    fingerprint: z.string().optional().describe("dry run: pass as expect to apply exactly these ops"),
    warnings: z.array(z.string()).optional(),
  }),
  annotations: { ...WRITE, destructiveHint: true, idempotentHint: false },
  async run({ ops, dry_run, expect, task }, ctx) {
    const over = overBody(Buffer.byteLength(JSON.stringify(ops), "utf8"), ctx, "the ops");
    if (over !== undefined) return over;
    const normalized = normalizePatch(ops);
    if (!normalized.ok) return fromCore(normalized, ctx, () => ({ opIds: [], dryRun: dry_run === true }));
    const bundle = task === undefined ? normalized.value : normalized.value.map((i) => ({ ...i, task }));
    if (dry_run === true) {
      const as = ctx.write.author === undefined ? {} : { author: ctx.write.author };
      return fromCore(ctx.store.preview(bundle, as), ctx, (p) => ({
        opIds: [],
        dryRun: true,
        diff: p.diff,
        fingerprint: p.fingerprint,
        ...(p.warnings === undefined || p.warnings.length === 0 ? {} : { warnings: [...p.warnings] }),
      }));
    }
    // Progress as the items are read (core's onProgress), at most about 20 notifications; the
    // check and the durable write follow the last. A cancellation is looked at before the append.
    const report = ctx.progress;
    const step = Math.max(1, Math.ceil(bundle.length / 20));
    const r = await ctx.store.apply(bundle, {
      ...ctx.write,
      ...(expect === undefined ? {} : { expect }),
      ...(report === undefined
        ? {}
        : {
            onProgress: (done: number, total: number) => {
              if (done % step === 0 || done === total) report(done, total, `${done} of ${total} items read`);
            },
          }),
    });
    return fromCore(r, ctx, (receipt) => ({
      opIds: [...receipt.opIds],
      dryRun: false,
      ...(receipt.warnings === undefined || receipt.warnings.length === 0
        ? {}
        : { warnings: [...receipt.warnings] }),
    }));
  },
});

export const revert = defineTool({
  name: "kumiki_revert",
  title: "Revert or undo",
  description:
    "Reverts one op (op_id) with a new, revertable op, or undoes a task (task_id; refused if others changed it since, unless confirm).",
  input: z.strictObject({
    op_id: z.string().optional().describe("op_… (a write's opIds, kumiki_history)"),
    task_id: z.string().optional().describe("or undo every op of this task"),
    confirm: z.boolean().optional().describe("undo even what others changed since"),
    task: Task,
    idempotency_key: IdempotencyKey,
  }),
  output: z.object({ opIds: z.array(z.string()).describe("the new ops written") }),
  annotations: { ...WRITE, destructiveHint: false, idempotentHint: false },
  async run({ op_id, task_id, confirm, task }, ctx) {
    if ((op_id === undefined) === (task_id === undefined)) {
      return {
        ok: false,
        error: {
          kind: "invalid-argument",
          argument: op_id === undefined ? "op_id" : "task_id",
          message:
            "kumiki_revert: give op_id (revert one op) or task_id (undo a task), not both; nothing was done",
        },
      };
    }
    const opts = { ...ctx.write, ...(task === undefined ? {} : { task }) };
    const r =
      op_id !== undefined
        ? await ctx.store.revert(op_id, opts)
        : await ctx.store.undoTask(task_id!, { ...opts, ...(confirm === true ? { confirm: true } : {}) });
    return fromCore(r, ctx, (receipt) => ({ opIds: [...receipt.opIds] }));
  },
});
