/**
 * The store's did-you-mean: up to three names that could be typos of a name that resolved to
 * nothing.
 */
import { suggestNames } from "../lang/similarity.js";

/** A near name: the did-you-mean of a store's not-found answer. */
export interface Suggestion {
  readonly name: string;
  /** 1 − distance / longer length, rounded to two decimals. */
  readonly similarity: number;
}

/** The names among `candidates` that could be typos of `name` (lang/similarity.ts), closest first, at most three. */
export function suggest(name: string, candidates: Iterable<string>): Suggestion[] {
  return suggestNames(name, candidates, 3).map(({ name: n, similarity }) => ({ name: n, similarity }));
}
