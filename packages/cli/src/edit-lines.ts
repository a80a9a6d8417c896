/**
 * The `body:N` form of an edit (ai-edit.md §9.6: `{"body:2": "replace 'usres' -> 'users'"}`, line N
 * counted from the line the definition's layer keyword is on, A occurring exactly once on that
 * line) turned into the store's exact-once anchors: the anchor is line N itself, widened by whole
 * lines above it until it occurs once in the definition's text.
 */
import type { RejectionCode, Store, StoreResult } from "@kumiki-graph/core";
import type { AnchorInput } from "./patch-input.js";

const REPLACE_RE = /^replace '([^']*)' -> '([^']*)'$/;

function refuse(code: RejectionCode, message: string, details: Record<string, unknown>): StoreResult<never> {
  return { ok: false, error: { code, message, details } };
}

function count(hay: string, needle: string): number {
  let n = 0;
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + 1)) n++;
  return n;
}

/** The anchors of a `body:N` patch against `qname`'s current text, or why there are none. */
export function anchorsOf(
  store: Store,
  qname: string,
  patch: Readonly<Record<string, string>>,
): StoreResult<AnchorInput[]> {
  const v = store.view(qname);
  if (!v.ok) return v;
  const text = v.value.definitions[0]?.text ?? "";
  const lines = text.split("\n").map((l) => l.replace(/[ \t\r]+$/, ""));
  // Line 1 is the keyword's line: comment and blank lines above it are not counted.
  const first = lines.findIndex((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  const anchors: AnchorInput[] = [];
  for (const [key, change] of Object.entries(patch)) {
    const n = Number(key.slice("body:".length));
    const m = REPLACE_RE.exec(change);
    if (m === null) {
      return refuse("invalid-input", `${key}: ${JSON.stringify(change)} is not replace 'A' -> 'B'`, { key });
    }
    const [, from, to] = m as unknown as [string, string, string];
    const at = first + n - 1;
    const line = lines[at];
    if (first < 0 || line === undefined) {
      return refuse("anchor-not-found", `${qname} has no line ${n} (${key}); view ${qname} for its text`, {
        key,
      });
    }
    const times = from === "" ? 0 : count(line, from);
    if (times !== 1) {
      return refuse(
        times === 0 ? "anchor-not-found" : "anchor-ambiguous",
        `${key}: '${from}' occurs ${times} times on line ${n} of ${qname} (${JSON.stringify(line.trim())}); it must occur exactly once; nothing was changed`,
        { key, find: from, line: n },
      );
    }
    let start = at;
    while (count(text, lines.slice(start, at + 1).join("\n")) > 1 && start > 0) start--;
    const find = lines.slice(start, at + 1).join("\n");
    const head = lines.slice(start, at).join("\n");
    const replaced = line.replace(from, () => to);
    anchors.push({ find, replace: head === "" ? replaced : `${head}\n${replaced}` });
  }
  return { ok: true, value: anchors };
}
