import { readFileSync } from "node:fs";
import { exportProgram } from "@kumiki-graph/core";
import { generateProgram } from "./generate.js";
import { type BenchRow, measure } from "./harness.js";
import { corpusFile } from "./paths.js";
import { importedStore } from "./stores.js";

/** The sizes export's growth is measured over. */
const SIZES = [500, 1_000, 2_000, 5_000] as const;

/**
 * Issue 42: `export` linear in the program. At each size (apps/05 scaled up by bench/generate.ts),
 * exporting the whole program against `view` of every definition in the same store; the last row
 * gives the log-log slope of export's time over the sizes (target ≤ 1.1: linear), and the
 * 5,000-definition row export's cost against view's (target ≤ 2×). Was quadratic: 4 s at 5,000
 * definitions (the growing output string was flattened at every definition).
 */
export async function benchExport(): Promise<BenchRow[]> {
  const file = corpusFile("apps/05-project-management/app.kumiki");
  if (file === undefined) return [];
  const base = readFileSync(file, "utf8");
  const rows: BenchRow[] = [];
  const points: { n: number; ms: number }[] = [];
  for (const n of SIZES) {
    const text = generateProgram({ name: "05-project-management", text: base }, n, 20261204).text;
    const store = await importedStore(text);
    if (exportProgram(store) !== text) throw new Error(`export at ${n} definitions is not the imported text`);
    const exported = await measure(() => exportProgram(store), { runs: 9, warmup: 2 });
    const viewed = await measure(() => store.view("*.*"), { runs: 9, warmup: 2 });
    points.push({ n, ms: exported.median });
    rows.push({
      name: `export: ${n.toLocaleString("en")} defs`,
      ours: exported,
      baseline: { name: "view of every definition", timing: viewed },
      target: n === 5_000 ? "≤ 2×" : "",
    });
    await store.close();
  }
  const first = points[0]!;
  const last = points.at(-1)!;
  const slope = Math.log(last.ms / first.ms) / Math.log(last.n / first.n);
  rows.push({
    name: `export: growth ${first.n.toLocaleString("en")} → ${last.n.toLocaleString("en")} defs`,
    ours: { median: last.ms, min: last.ms, max: last.ms, runs: 1 },
    target: "log-log slope ≤ 1.1",
    note: `log-log slope ${slope.toFixed(2)}`,
  });
  return rows;
}
