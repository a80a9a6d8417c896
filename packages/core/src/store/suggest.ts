/** Edit distance between two names (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** A near name: the did-you-mean of an error. */
export interface Suggestion {
  readonly name: string;
  /** 1 − distance / longer length, rounded to two decimals. */
  readonly similarity: number;
}

/** The names among `candidates` closest to `name` (similarity at least 0.5), best first, at most three. */
export function suggest(name: string, candidates: Iterable<string>): Suggestion[] {
  const out: Suggestion[] = [];
  for (const c of new Set(candidates)) {
    if (c === name) continue;
    const d = distance(name.toLowerCase(), c.toLowerCase());
    const similarity = Math.round((1 - d / Math.max(name.length, c.length)) * 100) / 100;
    if (similarity >= 0.5) out.push({ name: c, similarity });
  }
  return out.sort((a, b) => b.similarity - a.similarity || (a.name < b.name ? -1 : 1)).slice(0, 3);
}
