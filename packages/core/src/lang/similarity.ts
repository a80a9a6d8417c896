/**
 * Did-you-mean: the closest candidate to a name that resolved to nothing.
 *
 * Distance is the optimal-string-alignment edit distance (Levenshtein plus adjacent transposition,
 * so `usres` → `users` is one edit, not two); similarity is the normalized form
 * `1 - distance / max(length)`. A candidate is close enough under errors.md's rule — at most two
 * edits, or at most a quarter of the name — and, so that two unrelated short names never pass for
 * a typo, strictly fewer edits than half the longer name.
 */

/** A suggestion for a name that resolved to nothing. */
export interface NameSuggestion {
  readonly name: string;
  /** Normalized similarity in (0, 1], rounded to two decimals. */
  readonly similarity: number;
  readonly distance: number;
}

/** Optimal-string-alignment distance between `a` and `b`, or `limit + 1` once it exceeds `limit`. */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > limit) return limit + 1;
  if (n === 0) return m;
  if (m === 0) return n;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const bj = b.charCodeAt(j - 1);
      const cost = ai === bj ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) {
        v = Math.min(v, prev2[j - 2]! + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    const spent = prev2;
    prev2 = prev;
    prev = cur;
    cur = spent;
  }
  return prev[m]!;
}

/** The most edits a candidate may be from `name` and still count as a typo of it. */
export function typoBudget(name: string, candidate: string): number {
  const longest = Math.max(name.length, candidate.length);
  const budget = Math.max(2, Math.floor(longest / 4));
  // Strictly fewer than half the longer name: `ab` is not a typo of `xy`.
  return Math.min(budget, Math.ceil(longest / 2) - 1);
}

/**
 * The candidates close enough to `name` to be a typo of it (within {@link typoBudget}), closest
 * first — fewer edits, then higher similarity, then the name that sorts first, so the answer never
 * depends on the order the candidates come in — at most `max` of them. `name` itself is never
 * suggested. The one did-you-mean of core: the checker's diagnostics take the first, the store's
 * not-found answers up to three.
 */
export function suggestNames(name: string, candidates: Iterable<string>, max = 3): NameSuggestion[] {
  const out: NameSuggestion[] = [];
  const lower = name.toLowerCase();
  for (const candidate of new Set(candidates)) {
    if (candidate === name || candidate.length === 0) continue;
    const budget = typoBudget(name, candidate);
    if (budget < 1) continue;
    // A difference in case alone is one edit whatever the length.
    const d = candidate.toLowerCase() === lower ? 1 : editDistance(name, candidate, budget);
    if (d > budget) continue;
    const similarity = Math.round((1 - d / Math.max(name.length, candidate.length)) * 100) / 100;
    out.push({ name: candidate, similarity, distance: d });
  }
  out.sort(
    (x, y) =>
      x.distance - y.distance ||
      y.similarity - x.similarity ||
      (x.name < y.name ? -1 : x.name > y.name ? 1 : 0),
  );
  return out.slice(0, max);
}

/** The closest of `candidates` to `name` (`suggestNames`' first), or undefined when none is close enough. */
export function nearestName(name: string, candidates: Iterable<string>): NameSuggestion | undefined {
  return suggestNames(name, candidates, 1)[0];
}
