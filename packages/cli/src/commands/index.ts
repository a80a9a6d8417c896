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
 * never load that package (`kumiki view` must start fast).
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
  lazy("mcp serve", async () => (await import("./mcp.js")).mcpServe),
  lazy("serve", async () => (await import("./serve.js")).serve),
  lazy("remote add", async () => (await import("./remote.js")).remoteAdd),
  lazy("remote list", async () => (await import("./remote.js")).remoteList),
  lazy("remote remove", async () => (await import("./remote.js")).remoteRemove),
  lazy("sync", async () => (await import("./sync.js")).sync),
  lazy("clone", async () => (await import("./clone.js")).clone),
];
