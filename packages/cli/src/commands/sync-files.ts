import { type FileSyncReport, syncFiles } from "@kumiki-graph/core";
import { findWorkspace } from "@kumiki-graph/storage-automerge";
import { flag } from "../args.js";
import type { CommandContext, CommandResult } from "../command.js";
import { fromRejection, unwrap } from "../errors.js";

/**
 * `kumiki sync --files [--dry-run]`: syncs the workspace's project.kumiki/ tree (the folder that
 * holds `.kumiki/`) with its store, both ways. Called by the `sync` verb, which owns the option
 * parsing (`--files`, `--dry-run`). Exit 1 when a file was left alone (a conflict, or a file that
 * could not be taken); the JSON is the core's {@link FileSyncReport}.
 */
export async function syncFilesCommand(ctx: CommandContext): Promise<CommandResult> {
  const found = findWorkspace(ctx.storeDir ?? ctx.io.cwd);
  if (!found.ok) throw fromRejection(found.error);
  const store = await ctx.openStore();
  const dryRun = flag(ctx.options, "dry-run");
  ctx.progress(`syncing ${found.value.root} …`);
  const report = unwrap(
    await syncFiles(store, found.value.root, {
      dryRun,
      ...(ctx.task === undefined ? {} : { task: ctx.task }),
    }),
  );
  return {
    json: report,
    text: describeReport(report),
    ...(report.conflicts.length > 0 || report.errors.length > 0 ? { exit: 1 as const } : {}),
  };
}

/** The report for a person: a summary line, then one line per change, conflict and error. */
export function describeReport(r: FileSyncReport): string {
  const would = r.dryRun ? "would " : "";
  const lines = [
    `${r.dryRun ? "dry run: " : ""}${r.items.length} file edit${r.items.length === 1 ? "" : "s"} ${would}${r.dryRun ? "become" : "became"} ${r.applied.length} op${r.applied.length === 1 ? "" : "s"} · ${r.written.length} file${r.written.length === 1 ? "" : "s"} ${would}${r.dryRun ? "be " : ""}written · ${r.removed.length} ${would}${r.dryRun ? "be " : ""}removed · ${r.conflicts.length} conflict${r.conflicts.length === 1 ? "" : "s"} · ${r.errors.length} error${r.errors.length === 1 ? "" : "s"} · ${r.files} file${r.files === 1 ? "" : "s"} in step`,
  ];
  for (const i of r.items) {
    const what = i.item.op === "rename" ? `rename → ${i.item.newName}` : i.item.op;
    lines.push(`  ${what}: ${i.paths.join(" → ")}`);
  }
  for (const p of r.written) lines.push(`  write ${p}`);
  for (const p of r.removed) lines.push(`  remove ${p}`);
  for (const c of r.conflicts) lines.push(`  conflict ${c.path}: ${c.reason}; ${c.hint}`);
  for (const e of r.errors) lines.push(`  error ${e.message}`);
  return lines.join("\n");
}
