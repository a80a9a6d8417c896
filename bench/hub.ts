import { Graph } from "@kumiki-graph/core";
import { logLogSlope } from "./export.js";
import { type BenchRow, measure } from "./harness.js";
import { importedStore } from "./stores.js";

/** Sizes of the hub program: one type and this many slots of it. */
const SIZES = [1_000, 5_000, 20_000] as const;

/** One type every slot references: the shape of a program's `Model` or `Msg`. */
function hubProgram(n: number): string {
  const slots = Array.from({ length: n }, (_, i) => `slot   s${i}  : N    = 0\n`);
  return `type   N      = nominal Int where between(0, 999)\n${slots.join("")}`;
}

/**
 * A program whose definitions all reference one type. The fold kept each definition's referrers as
 * a list copied for every new referrer, and a draft kept a mark per op it placed, walked on every
 * item: O(k²) in the referrers of one type — 20,000 slots of one type folded in 4.8 s and 10,000
 * imported in 5.4 s; and the parse cache's LRU walked past its deleted entries at every eviction,
 * so renaming the type 16,000 slots reference took 3.0 s against 0.65 at 8,000 (2026-12-07). Rows:
 * the rename of the type at each size against a replace of its body (each checks every slot again);
 * the fold of the whole program (what every open does) at each
 * size, against the fold of as many slots of `Int` (no definition references another), then the
 * growth of both (target: the hub's no steeper than the plain program's, + 0.1) and the import's
 * time at each size.
 */
export async function benchHub(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const points: { n: number; ms: number }[] = [];
  const basePoints: { n: number; ms: number }[] = [];
  const imports: string[] = [];
  const renames: string[] = [];
  for (const n of SIZES) {
    const t0 = performance.now();
    const store = await importedStore(hubProgram(n));
    imports.push(`${(performance.now() - t0).toFixed(0)} ms at ${n.toLocaleString("en")}`);
    const ops = [...store.read().graph.ops()];
    // The type renamed back and forth: every slot shows the new name, so each is checked again.
    const names = ["N", "M"];
    let flips = 0;
    const rename = async (qname: string, to: string) => {
      const r = await store.rename({ qname, newName: to });
      if (!r.ok) throw new Error(r.error.message);
    };
    // The first write checks the whole program; writes from the second on are what is measured.
    await rename("slot.s0", "t0");
    const renamed = await measure(() => rename(`type.${names[flips % 2]}`, names[++flips % 2]!), {
      runs: 5,
      warmup: 1,
    });
    let bodies = 0;
    const bounds = ["999", "9999"];
    const replaced = await measure(
      async () => {
        const r = await store.replace({
          qname: `type.${names[flips % 2]}`,
          body: ` = nominal Int where between(0, ${bounds[++bodies % 2]})`,
        });
        if (!r.ok) throw new Error(r.error.message);
      },
      { runs: 5, warmup: 1 },
    );
    renames.push(`${((renamed.min * 1000) / n).toFixed(0)} µs at ${n.toLocaleString("en")}`);
    rows.push({
      name: `hub: rename of the type ${n.toLocaleString("en")} slots reference`,
      ours: renamed,
      baseline: { name: "replace of the type's body", timing: replaced },
      target: "",
    });
    await store.close();
    const plain = await importedStore(hubProgram(n).replaceAll(": N ", ": Int "));
    const plainOps = [...plain.read().graph.ops()];
    await plain.close();
    const fold = await measure(() => Graph.fold(ops, { wireChecked: ops.length }), { runs: 7, warmup: 1 });
    const base = await measure(() => Graph.fold(plainOps, { wireChecked: plainOps.length }), {
      runs: 7,
      warmup: 1,
    });
    points.push({ n, ms: fold.min });
    basePoints.push({ n, ms: base.min });
    rows.push({
      name: `hub: fold of ${n.toLocaleString("en")} slots of one type`,
      ours: fold,
      baseline: { name: "as many slots of Int", timing: base },
      target: "",
    });
  }
  const last = points.at(-1)!;
  rows.push({
    name: `hub: growth ${SIZES[0].toLocaleString("en")} → ${last.n.toLocaleString("en")} slots`,
    ours: { median: last.ms, min: last.ms, max: last.ms, runs: 1 },
    target: "log-log slope ≤ the plain program's + 0.1",
    note: `log-log slope ${logLogSlope(points).toFixed(2)}, the slots of Int's ${logLogSlope(basePoints).toFixed(2)} (each size's fastest fold; above 5,000 both grow past linear as the heap outgrows the caches); import of the hub program: ${imports.join(", ")}; the type's rename per slot: ${renames.join(", ")}`,
  });
  return rows;
}
