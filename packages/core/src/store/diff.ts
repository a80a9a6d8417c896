/**
 * Unified-style diffs of definition texts, for previews (`kumiki patch apply --dry-run`) and the
 * divergence an undo would discard. Line-based: the longest common subsequence of lines, hunks
 * with three lines of context.
 */

/** One side of a diff: a definition's label (`slot.todos`) and its text. */
export interface DiffSide {
  readonly label: string;
  readonly text: string;
}

const CONTEXT = 3;
/** Beyond this many line pairs the LCS table is not built: the diff shows all of one side then the other. */
const MAX_CELLS = 4_000_000;

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
  const a = before === undefined ? [] : lines(before.text);
  const b = after === undefined ? [] : lines(after.text);
  const head = `--- ${before?.label ?? "/dev/null"}\n+++ ${after?.label ?? "/dev/null"}\n`;
  return head + hunks(a, b);
}

function lines(text: string): string[] {
  const l = text.split("\n");
  if (l[l.length - 1] === "") l.pop();
  return l;
}

type Edit = { readonly kind: " " | "-" | "+"; readonly line: string };

function edits(a: readonly string[], b: readonly string[]): Edit[] {
  // Common prefix and suffix first: most edits touch a few lines of a definition.
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let q = 0;
  while (q < a.length - p && q < b.length - p && a[a.length - 1 - q] === b[b.length - 1 - q]) q++;
  const mid: Edit[] = [];
  const am = a.slice(p, a.length - q);
  const bm = b.slice(p, b.length - q);
  if (am.length * bm.length > MAX_CELLS) {
    for (const line of am) mid.push({ kind: "-", line });
    for (const line of bm) mid.push({ kind: "+", line });
  } else {
    const n = am.length;
    const m = bm.length;
    const w = m + 1;
    const t = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        t[i * w + j] =
          am[i] === bm[j] ? t[(i + 1) * w + j + 1]! + 1 : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        mid.push({ kind: " ", line: am[i]! });
        i++;
        j++;
      } else if (i < n && (j === m || t[(i + 1) * w + j]! >= t[i * w + j + 1]!)) {
        // Deletions before insertions, as unified diffs show them.
        mid.push({ kind: "-", line: am[i]! });
        i++;
      } else {
        mid.push({ kind: "+", line: bm[j]! });
        j++;
      }
    }
  }
  return [
    ...a.slice(0, p).map((line): Edit => ({ kind: " ", line })),
    ...mid,
    ...a.slice(a.length - q).map((line): Edit => ({ kind: " ", line })),
  ];
}

function hunks(a: readonly string[], b: readonly string[]): string {
  const es = edits(a, b);
  const changed = es.map((e, i) => (e.kind === " " ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return "";
  let out = "";
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - CONTEXT);
    let end = Math.min(es.length, changed[k]! + CONTEXT + 1);
    while (k + 1 < changed.length && changed[k + 1]! - CONTEXT <= end) {
      k++;
      end = Math.min(es.length, changed[k]! + CONTEXT + 1);
    }
    k++;
    let oldLine = 1;
    let newLine = 1;
    for (let i = 0; i < start; i++) {
      if (es[i]!.kind !== "+") oldLine++;
      if (es[i]!.kind !== "-") newLine++;
    }
    const body = es.slice(start, end);
    const oldCount = body.filter((e) => e.kind !== "+").length;
    const newCount = body.filter((e) => e.kind !== "-").length;
    out += `@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@\n`;
    for (const e of body) out += `${e.kind}${e.line}\n`;
  }
  return out;
}
