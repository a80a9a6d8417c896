import path from "node:path";
import { findWorkspace } from "@kumiki-graph/storage-automerge";
import { addRemote, readRemotes, removeRemote } from "@kumiki-graph/sync-server";
import { stringOption } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { fromRejection, unwrap } from "../errors.js";

function workspaceOf(ctx: CommandContext) {
  return unwrap(findWorkspace(ctx.storeDir ?? ctx.io.cwd));
}

/**
 * `kumiki remote add NAME URL [URL…] [--token-file F]`: records a sync server in
 * `.kumiki/remotes.json`; further URLs are other servers of the same service, to fail over to.
 */
export const remoteAdd: Command = {
  name: "remote add",
  summary: "record a sync server this workspace syncs with",
  usage: ["remote add NAME URL [URL…] [--token-file F]"],
  examples: [
    "kumiki remote add origin ws://127.0.0.1:7420 --token-file ~/.kumiki/agent-1.token",
    "kumiki remote add origin ws://127.0.0.1:7420 && kumiki sync",
    "kumiki remote add origin ws://sync-1:7420 ws://sync-2:7420   # servers sharing one database: sync fails over",
  ],
  options: {
    "token-file": {
      type: "string",
      value: "F",
      description: "a file holding this agent's token (its path is recorded, never the token)",
    },
  },
  positionals: { min: 2, max: Number.POSITIVE_INFINITY, names: "NAME URL [URL…]" },
  async run(ctx) {
    const paths = workspaceOf(ctx);
    const tokenFile = stringOption(ctx.options, "token-file");
    const added = addRemote(paths, {
      name: ctx.positionals[0]!,
      url: ctx.positionals[1]!,
      ...(ctx.positionals.length > 2 ? { alternates: ctx.positionals.slice(2) } : {}),
      ...(tokenFile === undefined ? {} : { tokenFile: path.resolve(ctx.io.cwd, tokenFile) }),
    });
    if (!added.ok) throw fromRejection(added.error);
    const others = added.value.alternates ?? [];
    return {
      json: added.value,
      text: `remote ${added.value.name} → ${added.value.url}${others.length > 0 ? ` (then ${others.join(", ")})` : ""}${added.value.tokenFile ? ` (token from ${added.value.tokenFile})` : ""}`,
    };
  },
};

/** `kumiki remote list`: the recorded sync servers. */
export const remoteList: Command = {
  name: "remote list",
  summary: "list the sync servers this workspace syncs with",
  usage: ["remote list"],
  examples: ["kumiki remote list", "kumiki remote list --json"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const remotes = unwrap(readRemotes(workspaceOf(ctx)));
    return {
      json: { remotes },
      text:
        remotes.length === 0
          ? "no remotes (kumiki remote add origin ws://host:port)"
          : remotes
              .map(
                (r) =>
                  `${r.name}\t${r.url}${r.alternates?.length ? ` (then ${r.alternates.join(", ")})` : ""}${r.tokenFile ? `\ttoken ${r.tokenFile}` : ""}`,
              )
              .join("\n"),
    };
  },
};

/** `kumiki remote remove NAME`. */
export const remoteRemove: Command = {
  name: "remote remove",
  summary: "forget a sync server",
  usage: ["remote remove NAME"],
  examples: ["kumiki remote remove origin"],
  options: {},
  positionals: { min: 1, max: 1, names: "NAME" },
  async run(ctx) {
    const removed = unwrap(removeRemote(workspaceOf(ctx), ctx.positionals[0]!));
    return { json: removed, text: `removed remote ${removed.name} (${removed.url})` };
  },
};
