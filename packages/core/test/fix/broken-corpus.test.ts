/**
 * The repair loop of ai-edit.md §9.6.2 over the whole broken corpus (../shared/kumiki/conformance:
 * every example program with one injected mistake), run as an agent scripts it: `check`, then each
 * auto-patch in turn as it is (`patch apply`), again until a round applies nothing; and, beside
 * it, `fix --apply` (applyFixes). Both must never leave more errors than they found, must remove
 * every error a usable auto-patch was offered for, and must leave a program `check` accepts wherever
 * the injected mistake is one errors.md marks auto-fixable.
 */
import fs from "node:fs";
import path from "node:path";
import {
  type BrokenCase,
  brokenCases,
  conformanceRoot,
  hasConformance,
} from "@kumiki-graph/test-support/corpus";
import { afterAll, describe, expect, it } from "vitest";
import { codeInfo } from "../../src/check/codes.js";
import { applyFixes } from "../../src/fix/apply.js";
import { normalizePatch } from "../../src/fix/normalize.js";
import { checkStore } from "../../src/integrity/store-check.js";
import type { CapabilityManifest } from "../../src/lang/stdlib.js";
import { exportProgram } from "../../src/project/program.js";
import type { Store } from "../../src/store/store.js";
import { brokenStoreOf, capsOf } from "../support/broken-store.js";

const root = conformanceRoot;
const present = hasConformance;
type Case = BrokenCase;
const cases = brokenCases();

async function brokenStore(c: Case): Promise<{ store: Store; caps: CapabilityManifest | undefined }> {
  const caps = capsOf(c);
  return { store: await brokenStoreOf(fs.readFileSync(path.join(root, c.file), "utf8"), caps), caps };
}

const rows: string[] = [];
const summary: Record<string, { programs: number; before: number; after: number; clean: number }> = {};
afterAll(() => {
  if (rows.length === 0) return;
  if (process.env.KUMIKI_LOOP_ROWS === "1") console.log(rows.join("\n"));
  const lines = Object.entries(summary)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(
      ([kind, t]) =>
        `${kind.padEnd(18)} programs ${String(t.programs).padStart(3)}  errors ${String(t.before).padStart(3)} -> ${String(t.after).padStart(3)}  clean after ${t.clean}`,
    );
  const all = Object.values(summary).reduce(
    (a, t) => ({
      programs: a.programs + t.programs,
      before: a.before + t.before,
      after: a.after + t.after,
      clean: a.clean + t.clean,
    }),
    { programs: 0, before: 0, after: 0, clean: 0 },
  );
  lines.push(
    `all                programs ${all.programs}  errors ${all.before} -> ${all.after}  clean after ${all.clean}`,
  );
  console.log(
    `the repair loop over the broken corpus (KUMIKI_LOOP_ROWS=1 for every program):\n${lines.join("\n")}`,
  );
});

describe.skipIf(!present)("the repair loop over the broken corpus", () => {
  it.each(cases.map((c) => [c.file, c] as const))("%s", async (_f, c) => {
    // §9.6.2 as an agent scripts it.
    const { store, caps } = await brokenStore(c);
    const check = caps === undefined ? {} : { capabilities: caps };
    const first = checkStore(store, check);
    let rounds = 0;
    let patches = 0;
    for (; rounds < 20; rounds++) {
      const ds = checkStore(store, check).diagnostics.filter((d) => d["auto-patch"] !== undefined);
      let applied = 0;
      for (const d of ds) {
        const items = normalizePatch(d["auto-patch"]);
        if (!items.ok) continue;
        const r = await store.apply(items.value);
        if (r.ok) applied++;
      }
      patches += applied;
      if (applied === 0) break;
    }
    const last = checkStore(store, check);
    // fix --apply, from the same broken program.
    const again = await brokenStore(c);
    const fixed = await applyFixes(again.store, { check });
    if (!fixed.ok) throw new Error(fixed.error.message);
    const remaining = last.diagnostics.filter((d) => d.severity === "error");
    summary[c.kind] ??= { programs: 0, before: 0, after: 0, clean: 0 };
    const totals = summary[c.kind]!;
    totals.programs++;
    totals.before += first.errors;
    totals.after += last.errors;
    if (last.errors === 0) totals.clean++;
    rows.push(
      `${c.kind.padEnd(18)} ${c.file.padEnd(60)} before ${first.errors} loop ${last.errors} (${patches} patches) fix ${fixed.value.after.errors} left ${last.diagnostics
        .filter((d) => d.severity === "error")
        .map((d) => d.code)
        .join(",")}`,
    );
    // Never more errors than found; the scripted loop and fix --apply end in the same place.
    expect(last.errors).toBeLessThanOrEqual(first.errors);
    expect(fixed.value.after.errors).toBeLessThanOrEqual(fixed.value.before.errors);
    expect(fixed.value.after.errors).toBe(last.errors);
    // Every error an auto-patch was offered for is gone: what is left is a model's to repair.
    expect(remaining.filter((d) => d["auto-patch"] !== undefined).map((d) => d.location)).toEqual([]);
    expect(fixed.value.remaining.filter((d) => d["auto-patch"] !== undefined)).toEqual([]);
    // Where only auto-fixable mistakes were injected (errors.md marks each of the program's errors
    // auto-fixable and offered its patch), the loop leaves a program check accepts, also as text.
    const fixable = first.diagnostics
      .filter((d) => d.severity === "error")
      .every((d) => codeInfo(d.code)?.autoPatch === true && d["auto-patch"] !== undefined);
    if (fixable) {
      expect(remaining.map((d) => `${d.code}@${d.location}`)).toEqual([]);
      const text = exportProgram(store);
      const fresh = await brokenStoreOf(text, caps);
      expect(checkStore(fresh, check).errors).toBe(0);
    }
  });
});
