import type { Result } from "./result.js";
import type { Span } from "./span.js";

/**
 * Why a source text does not parse. `message` says what was expected and where, and always ends
 * with ` at L:C` (the 1-based line and column of `span`, relative to the parsed text).
 */
export interface ParseError {
  readonly message: string;
  readonly span: Span;
}

/** A parse outcome: the value, or the first error. Parsing never throws. */
export type ParseResult<T> = Result<T, ParseError>;
