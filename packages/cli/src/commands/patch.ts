/**
 * `kumiki patch apply | revert | export`: bundles and wire ops in, an op reverted, the ops out
 * (§9.2.2, §9.3.2).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Conflict, Store, WriteReceipt } from "@kumiki-graph/core";
import { flag, stringOption } from "../args.js";
import type { Command, CommandResult } from "../command.js";
import { loadCore } from "../core.js";
import { failure, unwrap, usageError } from "../errors.js";
import { plural, receiptJson, receiptText, receiptWarnings } from "../format.js";
import { isWireOps, parseJsonOrLines } from "../patch-input.js";
import { checkOpId } from "../shape.js";

/** The conflicts recorded by a write that were not there before it. */
function newConflicts(store: Store, before: readonly Conflict[]): Conflict[] {
  const had = new Set(before.map((c) => c.id));
  return store.conflicts().filter((c) => !had.has(c.id));
}

function withConflicts(
  result: CommandResult,
  receipt: WriteReceipt,
  added: readonly Conflict[],
): CommandResult {
  if (added.length === 0) return result;
  return {
    ...result,
    json: { ...receipt, conflicts: added },
    warnings: [
      ...(result.warnings ?? []),
      ...added.map(
        (c) => `conflict ${c.id}: ${c.reason}; ${c.decision} (kumiki conflicts shows how to retry)`,
      ),
    ],
  };
}

/** `kumiki patch apply <file|->`: applies a bundle atomically, or takes ops exported elsewhere (§9.2.2). */
export const patchApply: Command = {
  name: "patch apply",
  summary:
    "apply an op bundle (all or nothing), a diagnostic's auto-patch, or ops exported from another workspace",
  usage: ["patch apply <file|-> [--dry-run | --expect <fingerprint>]"],
  examples: [
    `echo '{"ops":[{"op":"add","layer":"slot","name":"draft","body":"String = \\"\\""}]}' | kumiki patch apply -`,
    "kumiki patch apply fix.json --dry-run            # prints the diff and its fingerprint, writes nothing",
    "kumiki patch apply fix.json --expect 9217841a…   # the fingerprint the dry run printed: applies exactly that",
    "kumiki check --json | jq '[.diagnostics[] | select(.\"auto-patch\")][0]' | kumiki patch apply -",
    "kumiki --store ../b patch export | kumiki patch apply -   # ops from another workspace",
  ],
  options: {
    "dry-run": { type: "boolean", description: "print the diff and the bundle's fingerprint; write nothing" },
    expect: {
      type: "string",
      value: "FINGERPRINT",
      description: "apply only if the ops written are exactly those a dry run showed with this fingerprint",
    },
  },
  positionals: { min: 1, max: 1, names: "file|-" },
  async run(ctx) {
    const file = ctx.positionals[0] as string;
    oneOfDryExpect(ctx.verb, ctx.options);
    const text = await ctx.readInput(file);
    const from = file === "-" ? "standard input" : file;
    if (text.trim() === "")
      throw usageError(`kumiki ${ctx.verb}: ${from} is empty: give a bundle ({"ops": […]}) or ops`);
    const input = parseJsonOrLines(ctx.verb, text, from);
    const dryRun = flag(ctx.options, "dry-run");
    const expect = stringOption(ctx.options, "expect");
    // Ops written elsewhere: a list (or JSON Lines, as `patch export` writes), or one op alone.
    const alone = [input];
    const wire = isWireOps(input) ? input : isWireOps(alone) ? alone : undefined;
    if (wire !== undefined) {
      if (dryRun || expect !== undefined) {
        throw usageError(
          `kumiki ${ctx.verb}: ${from} holds ops written elsewhere (with op-ids); --dry-run and --expect take a bundle of requests`,
        );
      }
      const store = await ctx.openStore();
      const before = store.conflicts();
      const receipt = unwrap(await store.ingest(wire));
      const result: CommandResult = {
        json: receiptJson(receipt),
        text:
          receipt.opIds.length === 0
            ? `took nothing from ${from}: every op was already held`
            : `took ${plural(receipt.opIds.length, "op")} from ${from}`,
        warnings: receiptWarnings(receipt),
      };
      return withConflicts(result, receipt, newConflicts(store, before));
    }
    const core = await loadCore();
    const bundle = unwrap(core.normalizePatch(input));
    const items = bundle.length;
    const store = await ctx.openStore();
    if (dryRun) {
      const preview = unwrap(store.preview(bundle));
      return {
        json: { fingerprint: preview.fingerprint, diff: preview.diff, ops: preview.ops },
        text: `${preview.diff.endsWith("\n") || preview.diff === "" ? preview.diff : `${preview.diff}\n`}fingerprint ${preview.fingerprint}\napply with: kumiki patch apply ${file === "-" ? "<file>" : file} --expect ${preview.fingerprint}`,
      };
    }
    const before = store.conflicts();
    const receipt = unwrap(await store.apply(bundle, expect === undefined ? {} : { expect }));
    return withConflicts(
      {
        json: receiptJson(receipt),
        text: receiptText(`applied ${plural(items, "item")} from ${from}`, receipt),
        warnings: receiptWarnings(receipt),
      },
      receipt,
      newConflicts(store, before),
    );
  },
};

function oneOfDryExpect(verb: string, options: Readonly<Record<string, unknown>>): void {
  if (options["dry-run"] === true && typeof options.expect === "string") {
    throw usageError(
      `kumiki ${verb}: --dry-run and --expect cannot be given together: dry-run first, then apply with --expect`,
    );
  }
}

/** `kumiki patch revert <op-id>`: reverts one op with a new op, itself revertable (§9.2.2). */
export const patchRevert: Command = {
  name: "patch revert",
  summary: "revert one op with a new op (itself revertable)",
  usage: ["patch revert <op-id>"],
  examples: ["kumiki patch revert op_01JC3Z…", "kumiki view --history slot.todos   # to find the op-id"],
  options: {},
  positionals: { min: 1, max: 1, names: "op-id" },
  async run(ctx) {
    const opId = ctx.positionals[0] as string;
    await checkOpId(ctx.verb, opId);
    const store = await ctx.openStore();
    const receipt = unwrap(await store.revert(opId, ctx.task === undefined ? {} : { task: ctx.task }));
    return {
      json: receiptJson(receipt),
      text: receiptText(`reverted ${opId}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};

/** `kumiki patch export [-o file]`: every op the workspace holds, in the wire format, for `patch apply` elsewhere. */
export const patchExport: Command = {
  name: "patch export",
  summary: "write every op held, in the wire format, for 'kumiki patch apply' in another workspace",
  usage: ["patch export [-o <file>]"],
  examples: [
    "kumiki patch export -o ops.jsonl && kumiki --store ../other patch apply ops.jsonl",
    "kumiki patch export | kumiki --store ../other patch apply -",
  ],
  options: {
    output: { type: "string", short: "o", value: "FILE", description: "write to FILE instead of stdout" },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const out = stringOption(ctx.options, "output");
    const ops = await ctx.heldOps();
    const lines = ops.map((o) => `${JSON.stringify(o)}\n`).join("");
    if (out === undefined) return { json: { ops }, text: lines === "" ? "" : lines };
    const p = path.resolve(ctx.io.cwd, out);
    try {
      await writeFile(p, lines);
    } catch (e) {
      throw failure(
        "file-unwritable",
        `cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        {
          path: p,
        },
      );
    }
    return { json: { file: p, ops: ops.length }, text: `wrote ${plural(ops.length, "op")} to ${out}` };
  },
};
