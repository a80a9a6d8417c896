import type { Definition, Program } from "./ast.js";
import { tokenize } from "./lexer.js";
import type { ParseError, ParseResult } from "./parse-error.js";
import { DefinitionParser } from "./parser/definitions.js";

/**
 * Parses a whole Kumiki program: every definition in source order. Never throws and never hangs,
 * whatever the input; the first error (lexical or syntactic) is returned with its position, its
 * message ending with ` at L:C`.
 */
export function parseProgram(source: string): ParseResult<Program> {
  return run(source, (p) => p.program());
}

/**
 * Parses exactly one definition. Comments and blank lines may surround it; a second definition
 * (or anything else after it) is an error.
 */
export function parseDefinition(source: string): ParseResult<Definition> {
  return run(source, (p) => p.single());
}

function run<T>(source: string, parse: (p: DefinitionParser) => T | undefined): ParseResult<T> {
  try {
    const lexed = tokenize(source);
    const parser = new DefinitionParser(lexed.tokens);
    const value = parse(parser);
    if (parser.error !== null) return { ok: false, error: parser.error };
    if (lexed.error !== undefined) return { ok: false, error: lexed.error };
    if (value === undefined) return { ok: false, error: internal(source, "no result") };
    return { ok: true, value };
  } catch (e) {
    // Unreachable by design: every failure is a value. This keeps the no-throw promise even
    // against a bug (or an exhausted stack) rather than trusting it.
    return { ok: false, error: internal(source, e instanceof Error ? e.message : String(e)) };
  }
}

function internal(source: string, why: string): ParseError {
  const span = { offset: 0, end: Math.min(1, source.length), line: 1, column: 1 };
  return { message: `internal parser error (${why}) at 1:1`, span };
}
