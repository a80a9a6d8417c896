import type { Tool } from "../tool.js";
import { apply, revert } from "./bundle.js";
import { check, fix, fixApply } from "./check.js";
import { episode } from "./episode.js";
import { conflicts, history, list, refs, view } from "./read.js";
import { add, edit, remove, rename, replace } from "./write.js";

/** Every tool: those of ai-edit.md §9.7's table in its order, then ours (kumiki_fix_apply, kumiki_conflicts, kumiki_apply, kumiki_revert). */
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
  fixApply,
  conflicts,
  apply,
  revert,
];
