/**
 * A diagnostic as ai-edit.md §9.6 writes it: code, severity, location, message, suggestion and
 * auto-patch.
 */
import type { Layer } from "../lang/layers.js";
import type { Span } from "../lang/span.js";
import { type CodeInfo, requireCode, type Severity } from "./codes.js";

/** `{kind: "did-you-mean", name, similarity}` of ai-edit.md §9.6. */
export interface Suggestion {
  readonly kind: "did-you-mean";
  readonly name: string;
  /** Normalized similarity (see similarity.ts), two decimals. */
  readonly similarity: number;
}

/**
 * One op of an auto-patch, as data (the op model validates and applies it). `edit` patches are
 * keyed `body:N` — line N of the definition, counted from the line its layer keyword is on — and
 * say `replace 'A' -> 'B'`, where A occurs exactly once on that line.
 */
export type AutoPatchOp =
  | {
      readonly op: "edit";
      readonly layer: Layer;
      readonly name: string;
      readonly patch: Readonly<Record<string, string>>;
    }
  | {
      /** A new definition; `body` is what follows `<layer> <name>` as `kumiki add` takes it. */
      readonly op: "add";
      readonly layer: Layer;
      readonly name: string;
      readonly body: string;
    }
  /*
   * E0007's repair (duplicate-patch.ts) names definitions a duplicate hides, which have no name to
   * go by, so these take the store's bundle-item form: `qname` is `layer.name` or a definition id.
   */
  | {
      /** The definition's text after its name becomes `body` (its comment lines kept). */
      readonly op: "replace";
      readonly qname: string;
      readonly body: string;
    }
  | {
      /** The reference `ref` (`layer:name` as shown) in `qname`'s text is bound to `to`. */
      readonly op: "link";
      readonly qname: string;
      readonly ref: string;
      readonly to: string;
    }
  | { readonly op: "remove"; readonly qname: string };

/** An auto-patch: one op, or several applied together (all or nothing). */
export type AutoPatch = AutoPatchOp | { readonly op: "bundle"; readonly ops: readonly AutoPatchOp[] };

/**
 * A structured diagnostic (ai-edit.md §9.6). Serialises as the §9.6 JSON (`check --json` is
 * `JSON.stringify` of the list).
 */
export interface Diagnostic {
  readonly code: string;
  readonly kind: string;
  readonly severity: Severity;
  /**
   * Where: `tile.TodoRow.body:2` (line 2 of the definition, counted from its first line), or
   * `program` for a diagnostic about the whole program (E0003).
   */
  readonly location: string;
  /** What is wrong, where, and what to do. */
  readonly message: string;
  readonly suggestion?: Suggestion;
  readonly "auto-patch"?: AutoPatch;
  /**
   * The location of the diagnostic whose auto-patch repairs this one too (every E0301 of an app
   * shares one repair, carried by the first): apply that one; this diagnostic has none of its own.
   */
  readonly "shares-patch-of"?: string;
  /** The identity of the definition it is about (absent for `program`). */
  readonly definition?: string;
  /** The offending source range, in the coordinates of the definition's AST. */
  readonly span?: Span;
}

/** The auto-patch a diagnostic carries, or undefined: what `fix --auto-patch` proposes for it. */
export function autoPatchFor(d: Diagnostic): AutoPatch | undefined {
  return d["auto-patch"];
}

/** True when any diagnostic is an error; warnings never count (they change no exit status). */
export function hasErrors(diagnostics: Iterable<Diagnostic>): boolean {
  for (const d of diagnostics) if (d.severity === "error") return true;
  return false;
}

/** The registry entry a diagnostic's code stands for. */
export function infoOf(d: Diagnostic): CodeInfo {
  return requireCode(d.code);
}

/**
 * The key a regression gate compares diagnostic sets by: code and kind at a definition, line and
 * column (like the public toolchain's `code@line:col`). The message is left out: it may name a
 * suggestion, which changes when an unrelated name is added.
 */
export function diagnosticKey(d: Diagnostic): string {
  return `${d.code}|${d.kind}|${d.definition ?? ""}|${d.location}|${d.span?.column ?? ""}`;
}

/**
 * The diagnostics of `after` that `before` did not have (by {@link diagnosticKey}), errors only
 * unless `warnings`: the write gate's question, "does this write add an error?".
 */
export function newDiagnostics(
  before: Iterable<Diagnostic>,
  after: Iterable<Diagnostic>,
  options: { readonly warnings?: boolean; readonly ignore?: readonly string[] } = {},
): Diagnostic[] {
  const had = new Set<string>();
  for (const d of before) had.add(diagnosticKey(d));
  const out: Diagnostic[] = [];
  for (const d of after) {
    if (d.severity === "warning" && options.warnings !== true) continue;
    if (options.ignore?.includes(d.code)) continue;
    if (!had.has(diagnosticKey(d))) out.push(d);
  }
  return out;
}
