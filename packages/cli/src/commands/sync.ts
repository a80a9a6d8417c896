/**
 * `kumiki sync [NAME]`: push and pull ops with a remote until both hold the same heads (§9.8);
 * `--files` syncs the project tree.
 */
import { findWorkspace, readConfig } from "@kumiki-graph/storage-automerge";
import {
  fetchGraphDocument,
  pickRemote,
  readRemotes,
  readTokenFile,
  type SyncReport,
  syncWorkspace,
} from "@kumiki-graph/sync-server";
import { flag, stringOption } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { fromRejection, unwrap, usageError } from "../errors.js";
import { withCommands } from "../remedy.js";
import { syncFilesCommand } from "./sync-files.js";

/** `--timeout SECONDS` (default 60) in ms. */
export function timeoutOption(ctx: CommandContext): number {
  const text = stringOption(ctx.options, "timeout");
  if (text === undefined) return 60_000;
  const s = Number(text);
  if (!Number.isFinite(s) || s <= 0)
    throw usageError(`kumiki ${ctx.verb}: --timeout must be a positive number of seconds`);
  return Math.round(s * 1000);
}

/** The token: from the given file, else $KUMIKI_TOKEN, else none. */
export function tokenFrom(ctx: CommandContext, tokenFile: string | undefined): string | undefined {
  if (tokenFile !== undefined) return unwrap(readTokenFile(tokenFile));
  const env = ctx.io.env.KUMIKI_TOKEN;
  return env === undefined || env === "" ? undefined : env;
}

function describe(name: string, r: SyncReport, author: string): string {
  const lines = [
    `synced with ${name} (${r.server}): sent ${r.sent} op${r.sent === 1 ? "" : "s"}, received ${r.received} · ${r.ops} ops · ${r.conflicts.length} new conflict${r.conflicts.length === 1 ? "" : "s"} · ${r.quarantined.length} quarantined · ${r.access === "read" ? "read-only token" : "both sides at the same heads"}`,
  ];
  for (const c of r.conflicts) lines.push(`  conflict ${c.id}: ${c.reason}; decided: ${c.decision}`);
  for (const q of r.quarantined) lines.push(`  quarantined ${q.opId}: ${q.code}: ${q.message}`);
  if (r.unpushed > 0)
    lines.push(
      `  ${r.unpushed} local op${r.unpushed === 1 ? " was" : "s were"} not pushed: the token is read-only for this graph (ask for a read-write token, then kumiki sync again)`,
    );
  for (const x of r.rolledBack)
    lines.push(
      `  ${x.author === author ? "your op" : x.local ? "local op" : "op"} ${x.opId} (${x.author}) was rolled back by the merge: ${x.conflict.reason}; retry: ${withCommands(x.conflict.retry, x.conflict.remedy)}`,
    );
  return lines.join("\n");
}

/**
 * `kumiki sync [NAME]`: pushes this workspace's ops to the remote and pulls the others', until both
 * hold the same heads (ai-edit.md §9.8). Exit 1 when an op written here (by any author) was rolled
 * back by the merge (the report says how to retry, and whose it was), or local ops could not be
 * pushed. `--files` syncs the
 * project.kumiki/ tree instead (ai-edit.md §9.10).
 */
export const sync: Command = {
  name: "sync",
  summary: "push and pull ops with a remote until both have the same heads (--files: the project tree)",
  usage: ["sync [NAME] [--timeout SECONDS]", "sync --files [--dry-run]"],
  examples: [
    "kumiki sync            # the only remote, or origin",
    "kumiki sync origin --json | jq .rolledBack",
    "kumiki sync --files --dry-run",
  ],
  options: {
    files: {
      type: "boolean",
      description: "sync the project.kumiki/ tree with the store instead of a remote",
    },
    "dry-run": { type: "boolean", description: "with --files: say what would change, change nothing" },
    timeout: { type: "string", value: "SECONDS", description: "give up after this long (default 60)" },
  },
  positionals: { min: 0, max: 1, names: "NAME" },
  async run(ctx) {
    if (flag(ctx.options, "files")) {
      if (ctx.positionals.length > 0) throw usageError("kumiki sync --files takes no remote name");
      return syncFilesCommand(ctx);
    }
    if (flag(ctx.options, "dry-run")) throw usageError("kumiki sync: --dry-run goes with --files");
    const { remote, report: r } = await syncRemote(ctx, ctx.positionals[0]);
    // Failed when a write made here lost (whichever agent made it: one syncer may serve several).
    const failed = r.rolledBack.some((x) => x.local) || r.unpushed > 0;
    return {
      json: { remote, ...r },
      text: describe(remote, r, ctx.author),
      ...(failed ? { exit: 1 as const } : {}),
    };
  },
};

/**
 * Syncs the workspace with its remote `name` (the only one, or origin, when undefined): what
 * `kumiki sync` and `kumiki repair` (to fetch what only the server has) do. Throws the CLI error.
 */
export async function syncRemote(
  ctx: CommandContext,
  name: string | undefined,
): Promise<{ remote: string; report: SyncReport }> {
  const paths = unwrap(findWorkspace(ctx.storeDir ?? ctx.io.cwd));
  const remote = unwrap(pickRemote(paths, name));
  const token = tokenFrom(ctx, remote.tokenFile);
  const result = await syncWorkspace(paths.root, {
    url: remote.url,
    ...(remote.alternates === undefined ? {} : { alternates: remote.alternates }),
    author: ctx.author,
    timeoutMs: timeoutOption(ctx),
    onProgress: (m) => ctx.progress(m),
    ...(token === undefined ? {} : { token }),
  });
  if (!result.ok) throw fromRejection(result.error);
  return { remote: remote.name, report: result.value };
}

/**
 * The workspace's graph document as its remote (`name`, or the only one, or origin) holds it, for
 * a repair (core's `fetchDocument`): undefined when the server does not hold the graph; throws,
 * with the reason, when it cannot be fetched.
 */
export async function fetchRemoteDocument(
  ctx: CommandContext,
  name: string | undefined,
): Promise<Uint8Array | undefined> {
  const paths = unwrap(findWorkspace(ctx.storeDir ?? ctx.io.cwd));
  const remote = unwrap(pickRemote(paths, name));
  const graph = unwrap(readConfig(paths)).graph;
  const token = tokenFrom(ctx, remote.tokenFile);
  ctx.progress(`fetching the graph from ${remote.name} (${remote.url})…`);
  const r = await fetchGraphDocument(`${remote.url.replace(/\/+$/, "")}/${graph}`, {
    timeoutMs: timeoutOption(ctx),
    ...(token === undefined ? {} : { token }),
  });
  if (!r.ok) throw new Error(`${remote.name} (${remote.url}): ${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** The names of the workspace's remotes (none when it has none). */
export function remoteNames(ctx: CommandContext): string[] {
  const paths = unwrap(findWorkspace(ctx.storeDir ?? ctx.io.cwd));
  const list = readRemotes(paths);
  return list.ok ? list.value.map((r) => r.name) : [];
}
