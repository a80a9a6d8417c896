import type { RepairReport } from "@kumiki-graph/storage-automerge";
import { flag } from "../args.js";
import { type Command, withOptionalPart } from "../command.js";
import { loadStorage } from "../core.js";
import { fromRejection } from "../errors.js";

function describe(r: RepairReport, dryRun: boolean, syncing: boolean): string {
  if (!r.damaged) {
    return `nothing to repair: every chunk is sound and op-log.jsonl matches the document (${r.after} ops)`;
  }
  const will = dryRun ? "would " : "";
  const lines: string[] = [dryRun ? "damaged (dry run: nothing changed):" : "repaired:"];
  const contest = r.contested;
  if (contest !== undefined && contest.ops.length > 0) {
    const n = contest.ops.length;
    lines.push(
      `  ${n} op${n === 1 ? "" : "s"} held here under op-ids the remote holds with other content (forged, or a stale copy): ${contest.ops.map((c) => c.opId).join(", ")}`,
      dryRun
        ? "  would take up the remote's copy of the graph, put those ops aside and keep the rest of this workspace's ops"
        : `  took up the remote's copy; those ops were put aside in ${contest.movedTo} (nothing is lost), and ${contest.kept} op${contest.kept === 1 ? "" : "s"} of this workspace the remote lacks ${contest.kept === 1 ? "was" : "were"} kept`,
    );
    return lines.join("\n");
  }
  for (const c of r.chunks) {
    lines.push(
      `  ${c.name}: ${c.reason}; ${c.movedTo === undefined ? `${will}move aside` : `moved to ${c.movedTo}`}` +
        (c.salvagedBytes > 0 ? `, ${c.salvagedBytes} sound bytes kept` : ""),
    );
  }
  if (r.lostChanges.length > 0) {
    lines.push(
      `  ${r.lostChanges.length} change(s) op-log.jsonl was written after were missing from the document`,
    );
  }
  if (r.opLog.unreadableLines > 0 || !r.opLog.verified) {
    lines.push(
      `  op-log.jsonl: ${r.opLog.unreadableLines} unreadable line(s)${r.opLog.verified ? "" : ", changed since kumiki wrote it"}; ${will}write it again from the document` +
        (r.opLog.movedTo === undefined ? "" : ` (the old one moved to ${r.opLog.movedTo})`),
    );
  }
  const remote = r.rootFromRemote ? ` + ${r.fromRemote} from the remote` : "";
  const pending = r.fromPending > 0 ? ` + ${r.fromPending} written beside the document` : "";
  lines.push(
    `  ops: ${r.before} in the sound chunks${remote} + ${r.fromOpLog} from op-log.jsonl${pending} = ${r.after}`,
  );
  if (r.newHistory)
    lines.push("  the document's first change was lost: it was given a new history (see docs/semantics.md)");
  if (r.rootFromRemote)
    lines.push(
      "  the document's first change was lost: the history was taken up again from the remote's copy",
    );
  lines.push(
    r.acknowledged === "all"
      ? "  every op acknowledged before op-log.jsonl's last write is held"
      : "  op-log.jsonl could not vouch for the document: ops only the damaged chunks held may be missing",
  );
  const newer = r.chunks.filter((c) => c.newerThanOpLog);
  if (newer.length > 0 && !syncing) {
    lines.push(
      `  ${newer.length} damaged chunk(s) were written after op-log.jsonl: ops a sync peer sent since may be missing; run \`kumiki sync\` to fetch them from the server`,
    );
  }
  return lines.join("\n");
}

/**
 * `kumiki repair [--dry-run] [--offline]`: checks the stored document and op-log.jsonl, repairs
 * what is damaged from what is local (core's repairWorkspace), then, when the workspace has a
 * remote, syncs with it to fetch what only the server holds. A document that lost its first change
 * takes up the remote's history (fetched before anything changes; unreachable: nothing changes and
 * the repair fails with remote-unavailable); with --offline or no remote it is given a new first
 * change, and a repair that did so does not sync (its history no longer shares the server's root).
 */
export const repair: Command = {
  name: "repair",
  summary: "check the workspace's storage and rebuild what is damaged (damaged files are moved aside)",
  usage: ["repair [--dry-run] [--offline] [--timeout SECONDS]"],
  examples: ["kumiki repair --dry-run", "kumiki repair && kumiki status", "kumiki repair --offline"],
  options: {
    "dry-run": {
      type: "boolean",
      description: "report what is damaged and what a repair would do; change nothing",
    },
    offline: {
      type: "boolean",
      description: "do not reach the remote (no sync after; a lost first change gets a new history)",
    },
    timeout: {
      type: "string",
      value: "SECONDS",
      description: "give up reaching the remote after this long (default 60)",
    },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const dryRun = flag(ctx.options, "dry-run");
    const offline = flag(ctx.options, "offline");
    const dir = ctx.storeDir ?? ctx.io.cwd;
    // Loaded only when asked (a lost first change): the sync client is not part of every start-up.
    const loadSync = () => withOptionalPart("@kumiki-graph/sync-server", "repair", () => import("./sync.js"));
    const fetchDocument = async () => {
      // Without the sync part there is no server client to fetch a lost first change with.
      const s = await loadSync().catch(() => undefined);
      if (s === undefined) return undefined;
      return s.remoteNames(ctx).length === 0 ? undefined : s.fetchRemoteDocument(ctx, undefined);
    };
    const r = await (await loadStorage()).repairWorkspace(dir, {
      dryRun,
      ...(offline ? {} : { fetchDocument }),
    });
    if (!r.ok) throw fromRejection(r.error);
    const report = r.value;
    let server: { remote: string; received: number; sent: number } | undefined;
    // Loaded only after a repair: the sync client is not part of every verb's start-up.
    // Without the sync part installed there is no server to sync with: the repair is reported as done.
    const sync = report.repaired && !offline ? await loadSync().catch(() => undefined) : undefined;
    const remotes = sync?.remoteNames(ctx) ?? [];
    let text = describe(report, dryRun, remotes.length > 0 && !report.newHistory);
    if (sync !== undefined) {
      const { syncRemote } = sync;
      if (remotes.length > 0 && report.newHistory) {
        text += `\n  not synced with ${remotes.join(", ")}: the new history does not share the server's; clone the graph again (kumiki clone <server>/<graph> DIR, the graph from kumiki status --json) and kumiki patch apply this workspace's .kumiki/op-log.jsonl into the clone`;
      } else if (remotes.length > 0) {
        const synced = await syncRemote(ctx, undefined);
        // Ops taken from the remote's copy before the sync (a lost first change) came from the
        // server too: counted as received, so "received 0" never hides them.
        const received = synced.report.received + report.fromRemote;
        server = { remote: synced.remote, received, sent: synced.report.sent };
        text +=
          report.fromRemote > 0
            ? `\n  synced with ${synced.remote}: received ${received} op(s) only the server held (${report.fromRemote} with its copy of the document, ${synced.report.received} by the sync), sent ${synced.report.sent}`
            : `\n  synced with ${synced.remote}: received ${received} op(s) only the server held, sent ${synced.report.sent}`;
      }
    }
    // A dry run that finds damage exits 1, as `check` does with errors: scripts can test for it.
    return {
      json: { ...report, ...(server === undefined ? {} : { server }) },
      text,
      exit: dryRun && report.damaged ? 1 : 0,
    };
  },
};
