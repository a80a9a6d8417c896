import { type CheckOptions, checkProgram } from "../../src/check/check.js";
import type { Diagnostic } from "../../src/check/diagnostic.js";
import type { CheckInput } from "../../src/check/graph.js";
import { parseProgram } from "../../src/lang/parser.js";
import { resolveProgram } from "../../src/lang/resolve.js";

/** The check inputs of a source text: parsed, resolved by name, each with the source attached. */
export function inputsOf(source: string): CheckInput[] {
  const parsed = parseProgram(source);
  if (!parsed.ok) throw new Error(`parse error: ${parsed.error.message}`);
  return resolveProgram(parsed.value).map((r) => ({ ...r, source }));
}

/** Checks a source text. */
export function check(source: string, options: CheckOptions = {}): Diagnostic[] {
  return checkProgram(inputsOf(source), options);
}

/** The errors among `diags`. */
export function errorsOf(diags: readonly Diagnostic[]): Diagnostic[] {
  return diags.filter((d) => d.severity === "error");
}

/** `E0103@tile.TodoRow.body:2` for each diagnostic: a compact view for assertions. */
export function brief(diags: readonly Diagnostic[]): string[] {
  return diags.map((d) => `${d.code}@${d.location}`);
}
