import { readFileSync } from "node:fs";
import {
  type BundleItem,
  type CheckInput,
  checkProgram,
  createChecker,
  createStore,
  MemoryOpLog,
  openStore,
} from "@kumiki-graph/core";
import { computeHashes, parseProgram, resolveProgram, splitProgram } from "@kumiki-graph/core/lang";
import { generateProgram } from "./generate.js";
import { type BenchRow, measure } from "./harness.js";
import { corpusFile } from "./paths.js";

/** The sizes the table shows cost growing over: the real program, then generated scale-ups of it. */
export const SIZES = [180, 1_000, 5_000] as const;

/** The seed of the generated programs: fixed, so every run measures the same text. */
const SEED = 20261202;

function program(text: string) {
  const parsed = parseProgram(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

/**
 * How cost grows with the size of the program, at 180 (apps/05-project-management as written),
 * 1,000 and 5,000 definitions (bench/generate.ts scales it up, deterministic from a seed):
 *
 * - parse + resolve + hash, against parse alone;
 * - a full check, and the check after one op (the incremental checker the store keeps), against a
 *   full re-check of the same graph — what the public toolchain does after every write;
 * - importing the program into a store (one atomic bundle: parse, resolve, fold, write gate) and
 *   opening a store that holds it (the fold of its ops), against parse + resolve + hash of the text.
 */
export async function benchScale(): Promise<BenchRow[]> {
  const path = corpusFile("apps/05-project-management/app.kumiki");
  if (path === undefined) return [];
  const base = { name: "05-project-management", text: readFileSync(path, "utf8") };
  const rows: BenchRow[] = [];
  for (const size of SIZES) {
    const text = size === SIZES[0] ? base.text : generateProgram(base, size, SEED).text;
    const n = program(text).definitions.length;
    const label = `${n} defs`;
    const runs = n >= 5_000 ? { runs: 5, warmup: 1 } : { runs: 11, warmup: 3 };
    const parse = await measure(() => program(text), runs);
    const front = await measure(() => computeHashes(resolveProgram(program(text))), runs);
    rows.push({
      name: `scale: parse+resolve+hash, ${label}`,
      ours: front,
      baseline: { name: "parse alone", timing: parse },
    });

    const inputs: CheckInput[] = resolveProgram(program(text)).map((r) => ({ ...r, source: text }));
    const full = await measure(() => checkProgram(inputs), runs);
    const graph = new Map(inputs.map((i) => [i.id, i]));
    const checker = createChecker(graph);
    const reducer = inputs.find((i) => i.def.layer === "reducer" && i.id.endsWith(String(n % 7)));
    const target = reducer ?? inputs[Math.floor(inputs.length / 2)];
    if (target === undefined) throw new Error("empty program");
    const one = await measure(
      () => {
        graph.set(target.id, { ...target });
        checker.update([target.id]);
      },
      { runs: 31, warmup: 5 },
    );
    rows.push({
      name: `scale: check after one op, ${label}`,
      ours: one,
      baseline: { name: "full re-check", timing: full },
      note: `re-checked ${checker.rechecked} of ${n}`,
    });

    const pieces = splitProgram(text);
    if (!pieces.ok) throw new Error(pieces.error.message);
    const items: BundleItem[] = pieces.value.flatMap((p) =>
      p.kind === "definition" ? [{ op: "add" as const, source: p.text }] : [],
    );
    let held: readonly unknown[] = [];
    const imported = await measure(
      async () => {
        const log = new MemoryOpLog();
        const store = createStore({ log, author: "agent:bench" });
        if (!store.ok) throw new Error(store.error.message);
        const r = await store.value.apply(items);
        if (!r.ok) throw new Error(r.error.message);
        held = log.all();
      },
      { runs: 5, warmup: 1 },
    );
    rows.push({
      name: `scale: import into a store (one bundle), ${label}`,
      ours: imported,
      baseline: { name: "parse+resolve+hash", timing: front },
      note: `${held.length} ops`,
    });
    const opened = await measure(
      () => {
        const store = openStore({ log: new MemoryOpLog(held as never), author: "agent:bench" });
        if (!store.ok) throw new Error(store.error.message);
        return store.value.list();
      },
      { runs: 5, warmup: 1 },
    );
    rows.push({
      name: `scale: open a store holding it (fold + list), ${label}`,
      ours: opened,
      baseline: { name: "parse+resolve+hash", timing: front },
    });
  }
  return rows;
}
