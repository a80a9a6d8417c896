/**
 * Edit anchors: each anchor's text must occur exactly once (trailing whitespace tolerated),
 * applied in order.
 */
import type { Anchor } from "./op.js";

/** Why a patch does not apply. */
export type PatchFailure =
  | { readonly code: "anchor-empty"; readonly anchor: number }
  | { readonly code: "anchor-not-found"; readonly anchor: number; readonly find: string }
  | {
      readonly code: "anchor-ambiguous";
      readonly anchor: number;
      readonly find: string;
      readonly matches: number;
      readonly lines: readonly number[];
    }
  | { readonly code: "anchors-overlap"; readonly anchor: number; readonly other: number };

/** The result of {@link applyPatch}. */
export type PatchResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly failure: PatchFailure };

/**
 * Text with the whitespace at the end of each line removed, and for each of its characters the
 * offset of the same character in the original.
 */
interface Stripped {
  readonly text: string;
  readonly origin: readonly number[];
}

function strip(source: string): Stripped {
  let text = "";
  const origin: number[] = [];
  let lineStart = 0;
  while (lineStart <= source.length) {
    const nl = source.indexOf("\n", lineStart);
    const lineEnd = nl === -1 ? source.length : nl;
    let contentEnd = lineEnd;
    while (contentEnd > lineStart) {
      const c = source.charCodeAt(contentEnd - 1);
      if (c !== 32 && c !== 9 && c !== 13) break;
      contentEnd--;
    }
    for (let i = lineStart; i < contentEnd; i++) origin.push(i);
    text += source.slice(lineStart, contentEnd);
    if (nl === -1) break;
    origin.push(nl);
    text += "\n";
    lineStart = nl + 1;
  }
  return { text, origin };
}

function stripAnchor(find: string): string {
  return find
    .split("\n")
    .map((line) => line.replace(/[ \t\r]+$/, ""))
    .join("\n");
}

/** Every offset where `needle` starts in `hay`, overlapping occurrences included. */
function occurrences(hay: string, needle: string): number[] {
  const out: number[] = [];
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) out.push(at);
  return out;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Applies an edit's anchors to `text`, all or nothing. Every anchor's `find` must occur exactly
 * once in `text` as it is (not after the other anchors' replacements), whitespace at the end of a
 * line being ignored on both sides and nothing else; the matched regions must not overlap; each is
 * then replaced by its `replace`. Whitespace that ends the last matched line is kept.
 */
export function applyPatch(text: string, patch: readonly Anchor[]): PatchResult {
  const stripped = strip(text);
  const ranges: { start: number; end: number; replace: string; anchor: number }[] = [];
  for (let i = 0; i < patch.length; i++) {
    const anchor = patch[i]!;
    const needle = stripAnchor(anchor.find);
    if (needle.length === 0) return { ok: false, failure: { code: "anchor-empty", anchor: i } };
    const found = occurrences(stripped.text, needle);
    if (found.length === 0)
      return { ok: false, failure: { code: "anchor-not-found", anchor: i, find: anchor.find } };
    if (found.length > 1) {
      return {
        ok: false,
        failure: {
          code: "anchor-ambiguous",
          anchor: i,
          find: anchor.find,
          matches: found.length,
          lines: found.map((at) => lineAt(text, stripped.origin[at]!)),
        },
      };
    }
    const at = found[0]!;
    const start = stripped.origin[at]!;
    const end = stripped.origin[at + needle.length - 1]! + 1;
    ranges.push({ start, end, replace: anchor.replace, anchor: i });
  }
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.start < prev.end) {
      return {
        ok: false,
        failure: {
          code: "anchors-overlap",
          anchor: Math.max(prev.anchor, cur.anchor),
          other: Math.min(prev.anchor, cur.anchor),
        },
      };
    }
  }
  let out = "";
  let at = 0;
  for (const r of sorted) {
    out += text.slice(at, r.start) + r.replace;
    at = r.end;
  }
  return { ok: true, text: out + text.slice(at) };
}

/** A one-line description of a patch failure, for messages and conflict records. */
export function describePatchFailure(f: PatchFailure): string {
  switch (f.code) {
    case "anchor-empty":
      return `anchor ${f.anchor + 1} has an empty find text`;
    case "anchor-not-found":
      return `anchor ${f.anchor + 1} (${JSON.stringify(short(f.find))}) matches nothing`;
    case "anchor-ambiguous":
      return `anchor ${f.anchor + 1} (${JSON.stringify(short(f.find))}) matches ${f.matches} times (lines ${f.lines.join(", ")}); it must match exactly once`;
    case "anchors-overlap":
      return `anchors ${f.other + 1} and ${f.anchor + 1} match overlapping text`;
  }
}

function short(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
