import { type Command, type LazyCommand, lazy } from "../command.js";
import { add, replace } from "./add.js";
import { check } from "./check.js";
import { configConflictPolicy } from "./config.js";
import { conflicts } from "./conflicts.js";
import { edit } from "./edit.js";
import { exportCommand } from "./export.js";
import { fix } from "./fix.js";
import { importCommand } from "./import.js";
import { init } from "./init.js";
import { list } from "./list.js";
import { lock, locks, unlock } from "./lock.js";
import { patchApply, patchExport, patchRevert } from "./patch.js";
import { refs } from "./refs.js";
import { remove } from "./remove.js";
import { rename } from "./rename.js";
import { repair } from "./repair.js";
import { status } from "./status.js";
import { undo } from "./undo.js";
import { view } from "./view.js";

/**
 * Every verb, in the order `kumiki --help` lists them. One file a verb (or a verb family);
 * add a verb by importing it here. A verb whose module imports a heavy package at its top (the
 * MCP SDK, the sync server) is registered with `lazy(name, loader)` instead, so other verbs
 * never load that package (`kumiki view` must start fast); a verb of an optional part names its
 * package, so that its absence is said plainly (`withOptionalPart`).
 */
export const COMMANDS: readonly (Command | LazyCommand)[] = [
  init,
  status,
  view,
  list,
  refs,
  add,
  replace,
  edit,
  rename,
  remove,
  patchApply,
  patchRevert,
  patchExport,
  undo,
  check,
  fix,
  lock,
  unlock,
  locks,
  configConflictPolicy,
  conflicts,
  importCommand,
  exportCommand,
  repair,
  lazy(
    "mcp serve",
    "serve the store to AI agents over MCP on stdio, or over HTTP (the tools of ai-edit.md §9.7)",
    // The MCP server is in the bin's bundle (scripts/bundle-cli.mjs): always there.
    async () => (await import("./mcp.js")).mcpServe,
  ),
  lazy(
    "serve",
    "run the sync server agents push to and pull from (127.0.0.1 by default)",
    async () => (await import("./serve.js")).serve,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "ui",
    "watch the graph live in a browser: map, definitions, agents, conflicts (127.0.0.1)",
    async () => (await import("./ui.js")).ui,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "remote add",
    "record a sync server this workspace syncs with",
    async () => (await import("./remote.js")).remoteAdd,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "remote list",
    "list the sync servers this workspace syncs with",
    async () => (await import("./remote.js")).remoteList,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "remote remove",
    "forget a sync server",
    async () => (await import("./remote.js")).remoteRemove,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "sync",
    "push and pull ops with a remote until both have the same heads (--files: the project tree)",
    async () => (await import("./sync.js")).sync,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "clone",
    "make a workspace in DIR from a graph on a sync server (recorded as remote origin)",
    async () => (await import("./clone.js")).clone,
    "@kumiki-graph/sync-server",
  ),
  lazy(
    "daemon start",
    "keep this workspace's store open in a background process: every later call runs there, fast",
    async () => (await import("./daemon.js")).daemonStart,
  ),
  lazy(
    "daemon stop",
    "stop this workspace's daemon (calls then run in their own process again)",
    async () => (await import("./daemon.js")).daemonStop,
  ),
  lazy(
    "daemon status",
    "say whether this workspace's daemon runs, its calls, CPU and memory",
    async () => (await import("./daemon.js")).daemonStatus,
  ),
  lazy(
    "daemon run",
    "run this workspace's daemon in the foreground until stopped or idle",
    async () => (await import("./daemon.js")).daemonRun,
  ),
];
