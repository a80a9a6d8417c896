/**
 * The benchmark harness: every figure is the median of at least five timed runs after a warm-up,
 * printed beside a baseline measured in the same process and the same run, so a reader compares
 * like with like on whatever machine the table was made.
 */
import { performance } from "node:perf_hooks";

/** Timing of one measured thing, in milliseconds. */
export interface Timing {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

/** One row of the printed table: a figure, its baseline, and the ratio figure / baseline. */
export interface BenchRow {
  /** What is measured, e.g. "parse+resolve+hash 05-project-management (180 defs)". */
  readonly name: string;
  readonly ours: Timing;
  /** What `ours` is compared with, measured in the same run; absent when a row is an absolute figure. */
  readonly baseline?: { readonly name: string; readonly timing: Timing };
  /** The target the issue names, as text (e.g. "< 10 ms", "≤ 1.3×"). */
  readonly target?: string;
  /** Extra figures that are not times (bytes per op, peak RSS). */
  readonly note?: string;
}

export interface MeasureOptions {
  readonly runs?: number;
  readonly warmup?: number;
  /** Called before each run, outside the timed region. */
  readonly setup?: () => unknown | Promise<unknown>;
}

/** Times `fn`: `warmup` untimed calls, then `runs` timed ones (at least 5). */
export async function measure(
  fn: () => unknown | Promise<unknown>,
  options: MeasureOptions = {},
): Promise<Timing> {
  const runs = Math.max(5, options.runs ?? 11);
  const warmup = options.warmup ?? 3;
  for (let i = 0; i < warmup; i++) {
    await options.setup?.();
    await fn();
  }
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    await options.setup?.();
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return summarize(times);
}

/** Median, min and max of a list of samples (ms). */
export function summarize(samples: readonly number[]): Timing {
  const s = [...samples].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, runs: s.length };
}

function ms(t: number): string {
  return t >= 100 ? `${t.toFixed(0)} ms` : t >= 10 ? `${t.toFixed(1)} ms` : `${t.toFixed(2)} ms`;
}

function range(t: Timing): string {
  return `${ms(t.median)} (${ms(t.min)}–${ms(t.max)})`;
}

/** Renders rows as a Markdown table (what README.md's performance table is pasted from). */
export function formatTable(rows: readonly BenchRow[]): string {
  const lines = [
    "| benchmark | ours: median (min–max) | baseline | baseline: median (min–max) | ratio | target | note |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const ratio = r.baseline ? `${(r.ours.median / r.baseline.timing.median).toFixed(2)}×` : "";
    lines.push(
      `| ${r.name} | ${range(r.ours)} | ${r.baseline?.name ?? ""} | ${r.baseline ? range(r.baseline.timing) : ""} | ${ratio} | ${r.target ?? ""} | ${r.note ?? ""} |`,
    );
  }
  return lines.join("\n");
}

/** mulberry32: small, fast, and the same sequence from the same seed on every machine. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
