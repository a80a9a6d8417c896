/**
 * A region of source text. `offset`/`end` are UTF-16 code-unit offsets into the text that was
 * parsed (end exclusive); `line`/`column` are 1-based and point at `offset`.
 */
export interface Span {
  readonly offset: number;
  readonly end: number;
  readonly line: number;
  readonly column: number;
}
