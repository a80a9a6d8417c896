/**
 * Unified diffs of definition texts, for previews (`kumiki patch apply --dry-run`) and the
 * divergence an undo would discard: jsdiff's line diff (Myers, so no size makes it fall back to
 * showing one whole side then the other, as the hand-written LCS it replaced did past 4M line
 * pairs), hunks with three lines of context. A text's final newline is not a difference.
 */
// The one module of jsdiff a structured patch needs (and the three it imports), not its index of
// nineteen: every write loads this file.
import { structuredPatch } from "diff/lib/patch/create.js";

/** One side of a diff: a definition's label (`slot.todos`) and its text. */
export interface DiffSide {
  readonly label: string;
  readonly text: string;
}

const CONTEXT = 3;

/**
 * The diff of one definition from `before` to `after` (undefined: it does not exist or is removed
 * on that side), `---`/`+++` headers with the labels (`/dev/null` for a missing side). Empty when
 * both sides are the same.
 */
export function definitionDiff(before: DiffSide | undefined, after: DiffSide | undefined): string {
  if (before === undefined && after === undefined) return "";
  if (
    before !== undefined &&
    after !== undefined &&
    before.text === after.text &&
    before.label === after.label
  )
    return "";
  const head = `--- ${before?.label ?? "/dev/null"}\n+++ ${after?.label ?? "/dev/null"}\n`;
  const patch = structuredPatch("", "", withNewline(before?.text), withNewline(after?.text), "", "", {
    context: CONTEXT,
  });
  let out = head;
  for (const h of patch.hunks) {
    // An empty side of a hunk is numbered by the line before it, as GNU diff (and jsdiff's formatPatch) do.
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    out += `@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@\n`;
    for (const line of h.lines) out += `${line}\n`;
  }
  return out;
}

/** The text with one final newline (none for a missing or empty side), so that only lines differ. */
function withNewline(text: string | undefined): string {
  if (text === undefined || text === "") return "";
  return text.endsWith("\n") ? text : `${text}\n`;
}
