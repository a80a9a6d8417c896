/**
 * The write gate's seam: `WriteValidator`, and the built-in gate every write passes (integrity,
 * readable names, no new conflict).
 */
import { parseText } from "../graph/materialize.js";
import type { BrokenSite, GraphReader } from "../graph/reader.js";
import type { Layer } from "../lang/layers.js";
import type { DefId } from "../ops/ids.js";
import type { Op } from "../ops/op.js";
import { bodyLineOf } from "../ops/source.js";
import type { RejectionCode } from "./result.js";

/** A write as the gate sees it: its ops, and the graph before and after them. */
export interface ProposedWrite {
  readonly ops: readonly Op[];
  readonly before: GraphReader;
  readonly after: GraphReader;
  /**
   * The definitions whose text or references the write changes: the ops' targets, and the
   * definitions that reference a renamed, removed or restored one (their shown text changes).
   */
  readonly touched: readonly DefId[];
}

/** Why the gate refuses a write. */
export interface ValidationProblem {
  readonly code: RejectionCode;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * The write gate: every write (a single op or a bundle) passes every validator before anything is
 * stored; one problem refuses the whole write. The principle (BRIEF.md, 4) is "no new errors": a
 * validator compares the graph after the write with the graph before it, so a problem that was
 * already there never blocks an unrelated write. The checker (`kumiki check`) plugs in here.
 */
export interface WriteValidator {
  /** What is wrong with the write (`after` against `before`); empty when it may be stored. */
  validate(write: ProposedWrite): readonly ValidationProblem[];
}

function brokenKey(b: BrokenSite): string {
  return `${b.kind}:${b.key}`;
}

/**
 * The built-in gate, until the checker plugs in: a write may not make a definition's text stop
 * parsing, leave a reference pointing at nothing (layer-aware, naming the candidate layers), hide
 * a definition behind another of the same name, or make the text a person reads say something
 * else than the graph holds (a name that now resolves to a different definition, e.g. after a
 * rename into a name a local variable or a preferred layer already uses). Nor may it produce a
 * merge conflict: a local write always goes after everything it has seen.
 */
export const builtinGate: WriteValidator = {
  validate({ before, after, touched }: ProposedWrite): ValidationProblem[] {
    const problems: ValidationProblem[] = [];
    for (const id of touched) {
      const now = after.get(id);
      if (now === undefined || !now.alive) continue;
      const was = before.get(id);
      const wasLive = was?.alive === true;
      const parsedNow = parseText(now.text);
      if (!parsedNow.ok) {
        if (wasLive && !parseText(was.text).ok) continue;
        problems.push({
          code: "parse-error",
          message: `${now.qname} would no longer parse at body:${bodyLineOf(now.text, parsedNow.error.span.line)}, column ${parsedNow.error.span.column}: ${parsedNow.error.message.replace(/ at \d+:\d+$/, "")}`,
          details: {
            definition: now.qname,
            text: now.text,
            span: { ...parsedNow.error.span, line: bodyLineOf(now.text, parsedNow.error.span.line) },
          },
        });
        continue;
      }
      const pre = new Set((wasLive ? before.brokenSites(id) : []).map(brokenKey));
      for (const b of after.brokenSites(id)) {
        if (pre.has(brokenKey(b))) continue;
        const where = `${now.qname} at body:${b.line}, column ${b.column}`;
        const layers = b.layers.join(" or ");
        problems.push({
          code: "undefined-reference",
          message:
            b.kind === "unresolved"
              ? `${where}: ${b.name} is not defined (looked for a ${layers} named ${b.name}); add it first, or fix the name`
              : `${where}: ${b.name} refers to ${after.label(b.target!)}, which is removed; restore it or point the reference elsewhere`,
          details: {
            definition: now.qname,
            name: b.name,
            layers: b.layers,
            line: b.line,
            column: b.column,
            kind: b.kind,
          },
        });
      }
      if (!now.visible && (was === undefined || was.visible)) {
        const holder = after.lookup(now.layer, now.name);
        problems.push({
          code: "duplicate-name",
          message: `${now.qname} is already taken${holder === undefined ? "" : ` by ${holder.def}`}; rename one of them first`,
          details: { definition: now.qname, holder: holder?.def },
        });
      }
      const mismatch = projectionMismatch(after, id);
      if (mismatch !== undefined && (!wasLive || projectionMismatch(before, id) === undefined)) {
        problems.push({
          code: "projection-mismatch",
          message: `${now.qname}: ${mismatch}`,
          details: { definition: now.qname },
        });
      }
    }
    const scope = new Set(touched);
    const known = new Set(before.graph.conflicts(scope).map((c) => c.id));
    for (const c of after.graph.conflicts(scope)) {
      if (known.has(c.id)) continue;
      problems.push({
        code: "would-conflict",
        message: `the write would produce a conflict: ${c.reason}`,
        details: { conflict: c },
      });
    }
    return problems;
  },
};

/**
 * Why a definition's shown text would read differently from the graph: re-read by name (as anyone
 * parsing the projected text would), some reference resolves to another definition than the one it
 * is bound to. Undefined when the text says what the graph holds.
 */
function projectionMismatch(reader: GraphReader, id: DefId): string | undefined {
  const view = reader.get(id);
  if (view === undefined) return undefined;
  const bound = reader.sites(id);
  const shown = parseText(view.text);
  if (bound === undefined || !shown.ok) return undefined;
  if (shown.sites.length !== bound.length) {
    return `shown with the current names, its text has ${shown.sites.length} references instead of ${bound.length} (a name now reads as something else)`;
  }
  const resolve = (layers: readonly Layer[], name: string): DefId | null => {
    for (const layer of layers) {
      const d = reader.graph.lookup(layer, name);
      if (d !== undefined) return d;
    }
    return null;
  };
  for (let i = 0; i < bound.length; i++) {
    const b = bound[i]!;
    if (b.target === null || reader.graph.definition(b.target)?.alive !== true) continue;
    const site = shown.sites[i]!;
    const byName = resolve(site.layers, site.name);
    if (byName !== b.target) {
      return `${site.name} at body:${bodyLineOf(view.text, site.span.line)}, column ${site.span.column} is bound to ${reader.label(b.target)} but reads as ${byName === null ? "nothing" : reader.label(byName)}`;
    }
  }
  return undefined;
}
