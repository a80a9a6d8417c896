/**
 * One position convention (docs/errors.md, Positions): a refusal's line, a diagnostic's location
 * and `span.line`, and the `body:N` of an edit all count from the line of the definition's layer
 * keyword, the comment lines kept above it not counted. Was: refusals and `span.line` counted those
 * comment lines (`body:4` reported as line 5), so an agent that turned a refusal's line into an
 * edit edited the wrong line. Over every reference of every definition of a corpus program (many
 * with comment blocks above them): an edit made at `body:N` that breaks that reference is refused
 * at exactly line N and the column of the name, and one that breaks the syntax there likewise; each
 * check diagnostic's `span.line` is its location's N, and its column points into that line.
 */
import fs from "node:fs";
import path from "node:path";
import {
  brokenCases,
  conformanceRoot,
  corpusProgram,
  hasConformance,
  hasCorpus,
} from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/check/diagnostic.js";
import { parseText } from "../../src/graph/materialize.js";
import { checkStore } from "../../src/integrity/store-check.js";
import type { Store } from "../../src/store/store.js";
import { brokenStoreOf, capsOf } from "../support/broken-store.js";

/** The definition's lines as `body:N` numbers them, written out here on their own (line 1 first). */
function bodyLines(text: string): string[] {
  const lines = text.split("\n");
  const first = lines.findIndex((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  return lines.slice(first);
}

/** The text of a definition as the store shows it. */
function textOf(store: Store, qname: string): string {
  const v = store.view(qname);
  if (!v.ok) throw new Error(v.error.message);
  return v.value.definitions[0]!.text;
}

/** Each line of `qname` that holds a reference, with the first such name on it and its column. */
function referenceLines(text: string): { line: number; name: string; column: number }[] {
  const p = parseText(text);
  if (!p.ok) return [];
  const lines = text.split("\n");
  const offset = lines.length - bodyLines(text).length;
  const out = new Map<number, { line: number; name: string; column: number }>();
  for (const site of p.sites) {
    const line = site.span.line - offset;
    const shown = bodyLines(text)[line - 1]!;
    // Only a name that occurs once on its line can be the anchor of a body:N edit; a name held in
    // a string would take the stray character below into the string.
    if (out.has(line) || shown.split(site.name).length !== 2 || text[site.span.offset - 1] === '"') continue;
    out.set(line, { line, name: site.name, column: site.span.column });
  }
  return [...out.values()];
}

const program = hasCorpus ? corpusProgram("apps/05-project-management/app.kumiki") : undefined;

describe.skipIf(program === undefined)(
  "a refusal's position is the line an edit names",
  { timeout: 120_000 },
  () => {
    it("over every reference line of apps/05: an undefined name and a syntax error, each refused at body:N", async () => {
      const store = await brokenStoreOf(program!.source, undefined);
      const listed = store.list();
      if (!listed.ok) throw new Error(listed.error.message);
      const qnames = listed.value.map((e) => e.qname);
      let tried = 0;
      let underComments = 0;
      let gated = 0;
      for (const qname of qnames) {
        const text = textOf(store, qname);
        const commented = bodyLines(text).length !== text.split("\n").length;
        for (const { line, name, column } of referenceLines(text)) {
          tried++;
          if (commented) underComments++;
          const key = `body:${line}`;
          // A name no definition has, at the reference's place on line N.
          const unknown = await store.edit({ qname, patch: { [key]: `replace '${name}' -> '${name}Zq'` } });
          if (unknown.ok) {
            // A variant pattern (`| None ->`) renamed is a catch-all binding: a sound program. Put
            // back, and not counted.
            const back = await store.edit({ qname, patch: { [key]: `replace '${name}Zq' -> '${name}'` } });
            expect(back.ok && textOf(store, qname) === text, `${qname} ${key}`).toBe(true);
            tried--;
            continue;
          }
          if (unknown.error.code === "validation-failed") {
            // A name the checker resolves (a variant of a type, a field): the gate's diagnostic.
            const ds = unknown.error.details?.diagnostics as Diagnostic[];
            expect(
              ds.some((d) => d.location === `${qname}.${key}` && d.span?.line === line),
              `${qname} ${key}: ${unknown.error.message}`,
            ).toBe(true);
            gated++;
          } else {
            expect(unknown.error.code, `${qname} ${key}: ${unknown.error.message}`).toBe(
              "undefined-reference",
            );
            const missing = (
              unknown.error.details!.missing as { name: string; line: number; column: number }[]
            )[0]!;
            expect({ qname, key, name: missing.name, line: missing.line, column: missing.column }).toEqual({
              qname,
              key,
              name: `${name}Zq`,
              line,
              column,
            });
            expect(unknown.error.message).toContain(`${name}Zq at body:${line}, column ${column}`);
          }
          // A stray character after the name: the lexer stops at it, on line N.
          const broken = await store.edit({ qname, patch: { [key]: `replace '${name}' -> '${name} \`'` } });
          expect(broken.ok, `${qname} ${key}`).toBe(false);
          if (broken.ok) continue;
          expect(broken.error.code).toBe("parse-error");
          const at = broken.error.details as { line: number; column: number };
          expect({ qname, key, line: at.line }).toEqual({ qname, key, line });
          // At the stray character, or (an event's parser reports its whole clause) at the name.
          expect(at.column, `${qname} ${key}`).toBeGreaterThanOrEqual(column);
          expect(at.column, `${qname} ${key}`).toBeLessThanOrEqual(column + name.length + 1);
          expect(broken.error.message).toContain(`does not parse at body:${line}, column ${at.column}: `);
        }
      }
      // The program's reference lines, a good share of them under comment blocks.
      expect(tried).toBeGreaterThan(300);
      expect(underComments).toBeGreaterThan(50);
      expect(gated).toBeGreaterThan(0);
      // Every other edit was refused: the graph checks as imported.
      expect(checkStore(store).diagnostics).toEqual([]);
    });
  },
);

describe.skipIf(!hasConformance)("a diagnostic's span is its location's line", () => {
  it("over every broken program of the conformance corpus: span.line is body:N, the column inside that line", async () => {
    let seen = 0;
    for (const c of brokenCases()) {
      const store = await brokenStoreOf(
        fs.readFileSync(path.join(conformanceRoot, c.file), "utf8"),
        capsOf(c),
      );
      for (const d of checkStore(store).diagnostics) {
        const m = /^([a-z]+\.[A-Za-z0-9_-]+)\.body:(\d+)$/.exec(d.location);
        if (m === null || d.span === undefined) continue;
        seen++;
        const line = Number(m[2]);
        expect({ case: c.file, location: d.location, line: d.span.line }).toEqual({
          case: c.file,
          location: d.location,
          line,
        });
        const shown = bodyLines(textOf(store, m[1]!))[line - 1];
        expect(shown, `${c.file} ${d.location}`).toBeDefined();
        expect(d.span.column, `${c.file} ${d.location} ${d.code}`).toBeLessThanOrEqual(shown!.length + 1);
      }
    }
    expect(seen).toBeGreaterThan(100);
  });
});
