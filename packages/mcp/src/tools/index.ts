import type { Tool } from "../tool.js";
import { check, fix } from "./check.js";
import { episode } from "./episode.js";
import { history, list, refs, view } from "./read.js";
import { add, edit, remove, rename, replace } from "./write.js";

/** Every tool, in the order of ai-edit.md §9.7's table. */
export const TOOLS: readonly Tool[] = [
  view,
  list,
  add,
  replace,
  edit,
  rename,
  remove,
  check,
  fix,
  refs,
  history,
  episode,
];
