/**
 * The `body:N` form of an edit (ai-edit.md §9.6: `{"body:2": "replace 'usres' -> 'users'"}`), the
 * one interpreter of it: `kumiki edit`, `kumiki patch apply`, auto-patches and fixes all reach the
 * store's edit, which turns it into exact-once anchors here, against the definition's text as shown.
 *
 * Line N counts from the line the definition's layer keyword is on (comment and blank lines above
 * it are not counted), the numbering `check` locations use. A must occur exactly once on line N;
 * the anchor is line N itself, widened by whole lines above it until it occurs once in the text.
 */
import type { Anchor } from "../ops/op.js";
import { quoted, type RejectionCode } from "./result.js";

/** A `body:N` patch: line keys (`body:2`) to `replace 'A' -> 'B'` instructions. */
export type LinePatch = Readonly<Record<string, string>>;

/** The key of a line (`body:N`, N from 1). */
export const LINE_KEY = /^body:[1-9][0-9]*$/;
/** The one instruction a line holds. */
export const REPLACE_INSTRUCTION = /^replace '([^']*)' -> '([^']*)'$/;

/** Why a line patch does not apply: a code of the store's, a message, details. */
export interface LinePatchFailure {
  readonly code: RejectionCode;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

function count(hay: string, needle: string): number {
  let n = 0;
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) n++;
  return n;
}

/** The anchors of `patch` against `text` (the definition `qname` as shown), or why there are none. */
export function lineAnchors(
  text: string,
  qname: string,
  patch: LinePatch,
): { ok: true; anchors: Anchor[] } | { ok: false; failure: LinePatchFailure } {
  const fail = (code: RejectionCode, message: string, details: Record<string, unknown>) => ({
    ok: false as const,
    failure: { code, message, details },
  });
  const lines = text.split("\n").map((l) => l.replace(/[ \t\r]+$/, ""));
  const first = lines.findIndex((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  const anchors: Anchor[] = [];
  for (const [key, change] of Object.entries(patch)) {
    if (!LINE_KEY.test(key))
      return fail("invalid-input", `${quoted(key)} is not a line key (body:N, N from 1)`, { key });
    const m = REPLACE_INSTRUCTION.exec(change);
    if (m === null)
      return fail("invalid-input", `${key}: ${quoted(change)} is not replace 'A' -> 'B'`, { key });
    const [, from, to] = m as unknown as [string, string, string];
    const n = Number(key.slice("body:".length));
    const at = first + n - 1;
    const line = lines[at];
    if (first < 0 || line === undefined)
      return fail("anchor-not-found", `${qname} has no line ${n} (${key}); view ${qname} for its text`, {
        key,
        line: n,
      });
    const times = from === "" ? 0 : count(line, from);
    if (times !== 1)
      return fail(
        times === 0 ? "anchor-not-found" : "anchor-ambiguous",
        `${key}: '${from}' occurs ${times} times on line ${n} of ${qname} (${JSON.stringify(line.trim())}); it must occur exactly once; nothing was changed`,
        { key, find: from, line: n },
      );
    let start = at;
    while (count(text, lines.slice(start, at + 1).join("\n")) > 1 && start > 0) start--;
    const find = lines.slice(start, at + 1).join("\n");
    const head = lines.slice(start, at).join("\n");
    const replaced = line.replace(from, () => to);
    anchors.push({ find, replace: head === "" ? replaced : `${head}\n${replaced}` });
  }
  if (anchors.length === 0) return fail("invalid-input", "the patch holds no line", {});
  return { ok: true, anchors };
}

/**
 * The anchors of an edit's patch against `text`: anchors as they are, `body:N` lines through
 * {@link lineAnchors}. What the store's edit and a fix's simulation both apply.
 */
export function patchAnchors(
  text: string,
  qname: string,
  patch: readonly Anchor[] | LinePatch,
): { ok: true; anchors: readonly Anchor[] } | { ok: false; failure: LinePatchFailure } {
  return Array.isArray(patch)
    ? { ok: true, anchors: patch as readonly Anchor[] }
    : lineAnchors(text, qname, patch as LinePatch);
}
