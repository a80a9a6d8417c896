/**
 * The auto-patches of one check compose: for every broken program of ../shared/kumiki/conformance,
 * every auto-patch `check` offers, applied in any order and split into bundles any way (all in one
 * bundle, one by one as the §9.6.2 loop applies them, anything between), ends in the program
 * `fix --apply` (applyFixes) leaves. Was: apps-02 with storage.write dropped offered the same
 * "add storage.write" 4 times (apps-05: 21) and all of them at once gave `caps = [storage.read,
 * storage.write, storage.write, storage.write, storage.write]`, which checked clean.
 */
import fs from "node:fs";
import path from "node:path";
import { brokenCases, conformanceRoot, hasConformance } from "@kumiki-graph/test-support/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CheckOptions } from "../../src/check/check.js";
import { applyFixes } from "../../src/fix/apply.js";
import { normalizePatch } from "../../src/fix/normalize.js";
import { checkStore } from "../../src/integrity/store-check.js";
import { exportProgram } from "../../src/project/program.js";
import type { BundleItem } from "../../src/store/inputs.js";
import type { Store } from "../../src/store/store.js";
import { brokenStoreOf, capsOf } from "../support/broken-store.js";

/** The bundles each offered auto-patch normalizes to, in diagnostic order. */
function offered(store: Store, check: CheckOptions): (readonly BundleItem[])[] {
  return checkStore(store, check).diagnostics.flatMap((d) => {
    if (d["auto-patch"] === undefined) return [];
    const n = normalizePatch(d["auto-patch"]);
    if (!n.ok) throw new Error(`an offered patch does not normalize: ${n.error.message}`);
    return [n.value];
  });
}

/** `order` permutes the patches; a true in `cuts` after position i starts a new bundle there. */
async function applyAs(
  store: Store,
  patches: readonly (readonly BundleItem[])[],
  order: readonly number[],
  cuts: readonly boolean[],
): Promise<string> {
  const bundles: BundleItem[][] = [[]];
  order.forEach((i, k) => {
    if (k > 0 && cuts[k - 1] === true) bundles.push([]);
    bundles[bundles.length - 1]!.push(...patches[i]!);
  });
  for (const b of bundles) {
    const r = await store.apply(b);
    if (!r.ok) return `refused: ${r.error.code}: ${r.error.message}`;
  }
  return exportProgram(store);
}

const cases = hasConformance ? brokenCases() : [];

describe.skipIf(!hasConformance)("the auto-patches of one check compose", { timeout: 300_000 }, () => {
  it("over every broken program: any order, any split into bundles, equals fix --apply", async () => {
    let programs = 0;
    let several = 0;
    for (const c of cases) {
      const caps = capsOf(c);
      const check = caps === undefined ? {} : { capabilities: caps };
      const source = fs.readFileSync(path.join(conformanceRoot, c.file), "utf8");
      const first = await brokenStoreOf(source, caps);
      const patches = offered(first, check);
      if (patches.length === 0) continue;
      programs++;
      const fixed = await brokenStoreOf(source, caps);
      const report = await applyFixes(fixed, { check });
      if (!report.ok) throw new Error(report.error.message);
      const want = exportProgram(fixed);
      // The same repair is never offered twice.
      const keys = patches.map((p) => JSON.stringify(p));
      expect(new Set(keys).size, c.file).toBe(keys.length);
      const n = patches.length;
      if (n > 1) several++;
      await fc.assert(
        fc.asyncProperty(
          fc.shuffledSubarray(
            [...Array(n).keys()].map((i) => i),
            { minLength: n, maxLength: n },
          ),
          fc.array(fc.boolean(), { minLength: n, maxLength: n }),
          async (order, cuts) => {
            // Offered by the store they are applied to: E0007's repair names definitions by id,
            // and two imports of one text make different ids.
            const store = await brokenStoreOf(source, caps);
            const own = offered(store, check);
            expect(
              own.map((p) => p.map((i) => i.op)),
              c.file,
            ).toEqual(patches.map((p) => p.map((i) => i.op)));
            const got = await applyAs(store, own, order, cuts);
            expect(got, `${c.file}: order ${order.join(",")} cuts ${cuts.map(Number).join("")}`).toBe(want);
          },
        ),
        { numRuns: n > 1 ? 12 : 1, seed: 36 },
      );
    }
    // The corpus has patches to compose: a run that found none would prove nothing.
    expect(programs).toBeGreaterThan(90);
    expect(several).toBeGreaterThan(0);
  });

  it("an app missing capabilities gets one repair adding each once; the other diagnostics point to it", async () => {
    for (const file of [
      "apps-02-todomvc--undeclared-cap.kumiki",
      "apps-05-project-management--undeclared-cap.kumiki",
    ]) {
      const c = cases.find((x) => x.file === file);
      if (c === undefined) throw new Error(`${file} is not in the conformance corpus`);
      const caps = capsOf(c);
      const check = caps === undefined ? {} : { capabilities: caps };
      const store = await brokenStoreOf(fs.readFileSync(path.join(conformanceRoot, file), "utf8"), caps);
      const e0301 = checkStore(store, check).diagnostics.filter((d) => d.code === "E0301");
      expect(e0301.length, file).toBeGreaterThan(1);
      const [carrier, ...rest] = e0301;
      expect(carrier!["auto-patch"], file).toBeDefined();
      for (const d of rest) {
        expect(d["auto-patch"], file).toBeUndefined();
        expect(d["shares-patch-of"], file).toBe(carrier!.location);
      }
      const r = await store.apply(offered(store, check).flat());
      expect(r.ok, file).toBe(true);
      const after = checkStore(store, check);
      expect(after.errors, file).toBe(0);
      expect(
        after.diagnostics.filter((d) => d.code === "W0230"),
        file,
      ).toEqual([]);
      const app = exportProgram(store).match(/caps\s*=\s*\[([^\]]*)\]/);
      const listed = app![1]!.split(",").map((s) => s.trim());
      expect(new Set(listed).size, `${file}: ${listed.join(", ")}`).toBe(listed.length);
    }
  });

  it("check reports a capability declared twice (W0230), which it called clean", async () => {
    const c = cases.find((x) => x.file === "apps-02-todomvc--undeclared-cap.kumiki")!;
    const store = await brokenStoreOf(fs.readFileSync(path.join(conformanceRoot, c.file), "utf8"), undefined);
    // What applying the old per-diagnostic patches twice wrote.
    const r = await store.apply([
      {
        op: "edit",
        qname: "app.TodoApp",
        patch: [{ find: "[storage.read]", replace: "[storage.read, storage.write, storage.write]" }],
      },
    ]);
    expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
    const report = checkStore(store);
    expect(report.errors).toBe(0);
    const w = report.diagnostics.filter((d) => d.code === "W0230");
    expect(w.map((d) => [d.severity, d.kind, d.location])).toEqual([
      ["warning", "duplicate-capability", w[0]?.location],
    ]);
    expect(w[0]!.message).toContain('"storage.write" is declared more than once');
  });
});
