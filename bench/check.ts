import { readFileSync } from "node:fs";
import {
  type CheckInput,
  checkProgram,
  createChecker,
  parseProgram,
  resolveProgram,
} from "@kumiki-graph/core";
import { type BenchRow, measure } from "./harness.js";
import { corpusFile } from "./paths.js";

function inputsOf(source: string): CheckInput[] {
  const parsed = parseProgram(source);
  if (!parsed.ok) throw new Error(`parse error: ${parsed.error.message}`);
  return resolveProgram(parsed.value).map((r) => ({ ...r, source }));
}

/**
 * `copies` copies of one program in one graph, as a store holds them: opaque identities, every name
 * made unique per copy (references follow identity), and only the first copy's app.
 */
function bigGraph(base: readonly CheckInput[], copies: number): Map<string, CheckInput> {
  const graph = new Map<string, CheckInput>();
  for (let c = 0; c < copies; c++) {
    for (const n of base) {
      if (c > 0 && n.def.layer === "app") continue;
      const id = `c${c}:${n.id}`;
      const name = c === 0 ? n.def.name.name : `${n.def.name.name}${c}`;
      graph.set(id, {
        ...n,
        id,
        def: { ...n.def, name: { ...n.def.name, name } },
        targets: n.targets.map((t) => (t === null ? null : `c${c}:${t}`)),
      });
    }
  }
  return graph;
}

/**
 * `check`: a full check of the 180-definition example (target < 10 ms warm), and the incremental
 * check after one changed definition in a 5,000-definition graph (target < 2 ms), each against a
 * full re-check of the same graph in the same run — what the public toolchain does after every
 * write.
 */
export async function benchCheck(): Promise<BenchRow[]> {
  const path = corpusFile("apps/05-project-management/app.kumiki");
  if (path === undefined) return [];
  const inputs = inputsOf(readFileSync(path, "utf8"));
  const full = await measure(() => checkProgram(inputs), { runs: 31, warmup: 10 });
  const rows: BenchRow[] = [
    { name: `check: full, 05-project-management (${inputs.length} defs)`, ours: full, target: "< 10 ms" },
  ];
  const graph = bigGraph(inputs, Math.ceil(5000 / inputs.length));
  const all = [...graph.values()];
  const fullBig = await measure(() => checkProgram(all), { runs: 5, warmup: 1 });
  const checker = createChecker(graph);
  const mid = `c${Math.floor(graph.size / inputs.length / 2)}:`;
  for (const layer of ["reducer", "tile", "slot", "type"]) {
    const id = [...graph.keys()].find((i) => i.startsWith(mid) && i.includes(`:${layer}.`));
    if (id === undefined) continue;
    const node = graph.get(id)!;
    const one = await measure(
      () => {
        graph.set(id, { ...node });
        checker.update([id]);
      },
      { runs: 31, warmup: 5 },
    );
    rows.push({
      name: `check: after one ${layer} op, ${graph.size} defs`,
      ours: one,
      baseline: { name: "full re-check", timing: fullBig },
      target: "< 2 ms",
      note: `re-checked ${checker.rechecked} definitions`,
    });
  }
  return rows;
}
