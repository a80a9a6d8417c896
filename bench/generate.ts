import type { Definition } from "@kumiki-graph/core";
import { parseProgram, type ReferenceSite, renderDefinition, resolveProgram } from "@kumiki-graph/core/lang";
import { prng } from "./harness.js";

/** A real program to scale: its name (for messages) and its text. */
export interface SourceProgram {
  readonly name: string;
  readonly text: string;
}

/** What {@link generateProgram} made. */
export interface GeneratedProgram {
  readonly text: string;
  /** How many definitions `text` holds (exactly the number asked for). */
  readonly definitions: number;
  /**
   * Which programs were copied, in order, with the suffix each copy's names got, its text and how
   * many definitions it holds (a copy references only itself: `text` is the copies' texts joined).
   */
  readonly copies: readonly {
    readonly program: string;
    readonly suffix: string;
    readonly text: string;
    readonly definitions: number;
  }[];
}

interface Parsed {
  readonly name: string;
  readonly text: string;
  readonly defs: readonly {
    readonly id: string;
    readonly def: Definition;
    readonly sites: readonly ReferenceSite[];
    readonly targets: readonly (string | null)[];
  }[];
}

function parse(p: SourceProgram): Parsed {
  const r = parseProgram(p.text);
  if (!r.ok) throw new Error(`${p.name}: ${r.error.message}`);
  return { name: p.name, text: p.text, defs: resolveProgram(r.value) };
}

/**
 * apps/05-project-management's text (`base`) scaled to `size` definitions with the benches' one
 * seed: the program the scale, export, write-path and CLI benches measure at each size.
 */
export function atSize(base: string, size: number): string {
  return generateProgram({ name: "05-project-management", text: base }, size, 20261204).text;
}

/**
 * {@link atSize}'s program cut between copies into programs of at most `most` definitions each
 * (a store takes at most 10,000 items in one bundle, so a larger program is imported in parts):
 * imported one after another, they are the program `atSize` gives, definition for definition.
 */
export function atSizeInParts(base: string, size: number, most: number): string[] {
  const { copies } = generateProgram({ name: "05-project-management", text: base }, size, 20261204);
  const out: string[] = [];
  let part: string[] = [];
  let count = 0;
  for (const copy of copies) {
    if (count + copy.definitions > most && part.length > 0) {
      out.push(`${part.join("\n\n")}\n`);
      part = [];
      count = 0;
    }
    part.push(copy.text);
    count += copy.definitions;
  }
  out.push(`${part.join("\n\n")}\n`);
  return out;
}

/**
 * Scales a real program up to exactly `size` definitions that form one valid program: copies of
 * `base` whose every name gets a copy suffix (references follow, as a store rename would), so the
 * copies never collide and every reference stays bound. Only the first copy keeps the `app` (a
 * program has one), and every copy's effects run under that app's capabilities, which is why the
 * copies are of one program. The seed decides the suffixes and, for the last partial copy, which
 * definitions it takes (always closed under references, so nothing dangles): the same seed gives
 * the same text on every machine.
 *
 * Copies are structurally identical, so apart from nominal types (salted with their identity) a
 * copy's content hashes equal the original's: content addressing at work, and what the store
 * dedupes nothing of, since definitions are identities, not hashes.
 */
export function generateProgram(base: SourceProgram, size: number, seed: number): GeneratedProgram {
  const program = parse(base);
  const rnd = prng(seed);
  const byId = new Map(program.defs.map((d) => [d.id, d]));
  const copies: { program: string; suffix: string; text: string; definitions: number }[] = [];
  let count = 0;
  const used = new Set<string>();
  for (let c = 0; count < size; c++) {
    let suffix = "";
    if (c > 0) {
      do suffix = `X${Math.floor(rnd() * 36 ** 3).toString(36)}`;
      while (used.has(suffix));
      used.add(suffix);
    }
    const candidates = program.defs.filter((d) => c === 0 || d.def.layer !== "app");
    let chosen: Parsed["defs"] = candidates;
    if (count + candidates.length > size) chosen = closedSubset(candidates, size - count, byId, rnd);
    const names = (id: string) => `${(byId.get(id) as Parsed["defs"][number]).def.name.name}${suffix}`;
    const parts: string[] = [];
    for (const d of chosen) {
      const end = d.def.span.end;
      const rendered = renderDefinition(program.text.slice(0, end), d.def, d.sites, {
        self: names(d.id),
        refs: d.targets.map((t) => (t === null || suffix === "" ? undefined : names(t))),
      });
      parts.push(rendered.slice(d.def.span.offset));
    }
    copies.push({ program: base.name, suffix, text: parts.join("\n\n"), definitions: chosen.length });
    count += chosen.length;
  }
  return { text: `${copies.map((c) => c.text).join("\n\n")}\n`, definitions: count, copies };
}

/** `n` definitions of `defs` picked at random, each with everything it references (transitively). */
function closedSubset(
  defs: Parsed["defs"],
  n: number,
  byId: ReadonlyMap<string, Parsed["defs"][number]>,
  rnd: () => number,
): Parsed["defs"] {
  const order = [...defs];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j] as (typeof order)[number], order[i] as (typeof order)[number]];
  }
  const allowed = new Set(defs.map((d) => d.id));
  const taken = new Set<string>();
  const closure = (id: string, into: Set<string>) => {
    const stack = [id];
    while (stack.length > 0) {
      const x = stack.pop() as string;
      if (taken.has(x) || into.has(x) || !allowed.has(x)) continue;
      into.add(x);
      for (const t of byId.get(x)?.targets ?? []) if (t !== null) stack.push(t);
    }
  };
  for (const d of order) {
    if (taken.size >= n) break;
    const add = new Set<string>();
    closure(d.id, add);
    if (taken.size + add.size <= n) for (const x of add) taken.add(x);
  }
  // Leaves (definitions nothing else needs) fill what the closures could not reach exactly.
  for (const d of order) {
    if (taken.size >= n) break;
    const add = new Set<string>();
    closure(d.id, add);
    if (add.size === 1) taken.add(d.id);
  }
  return defs.filter((d) => taken.has(d.id));
}
