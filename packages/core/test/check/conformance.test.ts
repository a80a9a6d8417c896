/**
 * `check` against the public Kumiki compiler (kumikijs/Kumiki@69e43e9, `kumiki check`): every case
 * of ../shared/kumiki/conformance (mutated example programs, one error each, and the unmutated
 * programs) is checked here and compared with the error codes upstream reported. Until import is
 * faithful (a program with errors cannot enter a store yet), the loose file goes through the same
 * checker the store uses.
 *
 * Verdicts: agree (the same set of error codes; for a case upstream could not parse, any error),
 * miss (upstream reports an error, we none), extra (we report an error, upstream none), different
 * (both report, other codes). Every case must agree, except the deliberate differences that
 * docs/errors.md lists (COMPILER_DIFFERENCES: exactly upstream's codes plus the documented one)
 * and the gaps still open listed below (a ratchet: a listed case that starts to agree fails the
 * test until it is taken off).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkProgram } from "../../src/check/check.js";
import { COMPILER_DIFFERENCES, type CompilerDifference } from "../../src/check/codes.js";
import { parseProgram } from "../../src/lang/parser.js";
import { resolveProgram } from "../../src/lang/resolve.js";
import type { CapabilityManifest } from "../../src/lang/stdlib.js";
import { corpusMissingMessage, kumikiShared } from "../support/corpus.js";

const root = path.join(kumikiShared, "conformance");
const examples = path.join(kumikiShared, "examples");
const present = fs.existsSync(path.join(root, "expected.json"));

interface Case {
  readonly file: string;
  readonly kind: string;
  readonly caps?: string;
  readonly upstream: {
    readonly exit: number;
    readonly errors: readonly string[];
    readonly parseError?: string;
  };
}

type Verdict = "agree" | "miss" | "extra" | "different";

/** Gaps still open (issue 19), by case, with what we get wrong; none today. */
const OPEN: Readonly<Record<string, { verdict: Verdict; why: string }>> = {};

/** The deliberate difference (docs/errors.md, COMPILER_DIFFERENCES) a case falls under, if any. */
function deliberate(c: Case): CompilerDifference | undefined {
  return COMPILER_DIFFERENCES.find((d) => d.mutation === c.kind || d.cases?.includes(c.file) === true);
}

function ourErrors(c: Case): { parsed: boolean; errors: string[] } {
  const file = c.kind === "none" ? path.join(examples, c.file) : path.join(root, c.file);
  const source = fs.readFileSync(file, "utf8");
  const parsed = parseProgram(source);
  if (!parsed.ok) return { parsed: false, errors: [] };
  const capabilities =
    c.caps === undefined
      ? undefined
      : (JSON.parse(fs.readFileSync(path.join(examples, c.caps), "utf8")) as CapabilityManifest);
  const inputs = resolveProgram(parsed.value).map((r) => ({ ...r, source }));
  const ds = checkProgram(inputs, capabilities === undefined ? {} : { capabilities });
  return {
    parsed: true,
    errors: [...new Set(ds.filter((d) => d.severity === "error").map((d) => d.code))].sort(),
  };
}

function verdictOf(c: Case): { verdict: Verdict; ours: string } {
  const o = ourErrors(c);
  const ours = o.parsed ? o.errors.join(",") : "(parse error)";
  if (c.upstream.parseError !== undefined)
    return { verdict: !o.parsed || o.errors.length > 0 ? "agree" : "miss", ours };
  const up = [...c.upstream.errors].sort();
  if (up.join(",") === o.errors.join(",") && o.parsed) return { verdict: "agree", ours };
  if (up.length > 0 && o.errors.length === 0) return { verdict: "miss", ours };
  if (up.length === 0 && o.errors.length > 0) return { verdict: "extra", ours };
  return { verdict: "different", ours };
}

const cases: Case[] = present
  ? (JSON.parse(fs.readFileSync(path.join(root, "expected.json"), "utf8")) as { cases: Case[] }).cases
  : [];
const table = new Map<string, Record<Verdict, number>>();
let agreed = 0;
let deliberateCount = 0;

describe.skipIf(!present)(
  "check conforms to the public Kumiki compiler (../shared/kumiki/conformance)",
  () => {
    if (!present) it.skip(corpusMissingMessage, () => {});
    afterAll(() => {
      const rows = [...table].map(
        ([kind, v]) =>
          `${kind.padEnd(18)} ${Object.entries(v)
            .map(([k, n]) => `${k} ${n}`)
            .join("  ")}`,
      );
      const compared = cases.length - deliberateCount;
      const pct = ((100 * agreed) / Math.max(1, compared)).toFixed(1);
      console.info(
        `conformance by mutation kind (${cases.length} cases):\n${rows.join("\n")}\n` +
          `summary: the same error codes as the public compiler on ${agreed} of ${compared} cases (${pct} %); ${deliberateCount} differ on purpose (docs/errors.md)`,
      );
    });
    it.each(cases.map((c) => [c.file, c] as const))("%s", (_file, c) => {
      const { verdict, ours } = verdictOf(c);
      const row = table.get(c.kind) ?? { agree: 0, miss: 0, extra: 0, different: 0 };
      row[verdict]++;
      table.set(c.kind, row);
      const d = deliberate(c);
      if (d !== undefined) {
        // A deliberate difference is exactly the one documented: upstream's codes plus ours.
        const without = ours.split(",").filter((x) => x !== d.code);
        expect(without.join(","), c.file).toBe([...c.upstream.errors].sort().join(","));
        expect(ours.split(","), c.file).toContain(d.code);
        deliberateCount++;
        return;
      }
      if (verdict === "agree") agreed++;
      expect(
        { verdict, ours },
        `${c.file} (${c.kind}): upstream ${c.upstream.errors.join(",") || "clean"}`,
      ).toEqual({ verdict: OPEN[c.file]?.verdict ?? "agree", ours });
    });
  },
);
