import type { Diagnostic } from "./diagnostic.js";

/**
 * Which errors one set of diagnostics has that another has not, and the other way round: the
 * question both the store's write gate ("does this write add an error?") and `fix`'s regression
 * gate ("does this fix add none and remove at least one?") ask.
 *
 * Errors are compared as a multiset of keys: code, kind, definition and the text the diagnostic
 * points at (`usres`), or the message for one about the whole program. Lines and columns are left
 * out on purpose — a write that adds a line above a pre-existing error, or fixes the first of two
 * typos on one line, moves the other error without making it a new one. The message is left out
 * for the same reason: it may name a did-you-mean, which changes when an unrelated name is added.
 */
export interface ErrorDelta {
  /** Errors of `after` that `before` did not have. */
  readonly added: readonly Diagnostic[];
  /** Errors of `before` that `after` no longer has. */
  readonly resolved: readonly Diagnostic[];
}

/** The text `d` points at, read from its definition's text (`textOf`). */
function regressionKey(d: Diagnostic, textOf: (id: string) => string | undefined): string {
  if (d.definition === undefined) return `${d.code}|${d.kind}||${d.message}`;
  const text = textOf(d.definition);
  const at = d.span === undefined || text === undefined ? "" : text.slice(d.span.offset, d.span.end);
  return `${d.code}|${d.kind}|${d.definition}|${at}`;
}

/** The error keys of a diagnostic list, computed while the texts it points into are at hand. */
export function errorKeys(
  diagnostics: readonly Diagnostic[],
  textOf: (id: string) => string | undefined,
): { readonly diagnostic: Diagnostic; readonly key: string }[] {
  return diagnostics
    .filter((d) => d.severity === "error")
    .map((diagnostic) => ({ diagnostic, key: regressionKey(diagnostic, textOf) }));
}

/** Compares two keyed error lists (see {@link errorKeys}). */
export function errorDelta(
  before: readonly { readonly diagnostic: Diagnostic; readonly key: string }[],
  after: readonly { readonly diagnostic: Diagnostic; readonly key: string }[],
  options: { readonly ignore?: readonly string[] } = {},
): ErrorDelta {
  const count = new Map<string, number>();
  for (const b of before) count.set(b.key, (count.get(b.key) ?? 0) + 1);
  const added: Diagnostic[] = [];
  for (const a of after) {
    if (options.ignore?.includes(a.diagnostic.code)) continue;
    const n = count.get(a.key) ?? 0;
    if (n > 0) count.set(a.key, n - 1);
    else added.push(a.diagnostic);
  }
  const left = new Map<string, number>();
  for (const a of after) left.set(a.key, (left.get(a.key) ?? 0) + 1);
  const resolved: Diagnostic[] = [];
  for (const b of before) {
    const n = left.get(b.key) ?? 0;
    if (n > 0) left.set(b.key, n - 1);
    else resolved.push(b.diagnostic);
  }
  return { added, resolved };
}

/** One line per diagnostic for a refusal message: `E0201 at slot.ready.body:1: Expected Bool …`. */
export function describeDiagnostics(ds: readonly Diagnostic[], limit = 5): string {
  const shown = ds.slice(0, limit).map((d) => `${d.code} at ${d.location}: ${d.message}`);
  if (ds.length > limit) shown.push(`and ${ds.length - limit} more`);
  return shown.join("; ");
}
