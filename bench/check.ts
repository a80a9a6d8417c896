import { readFileSync } from "node:fs";
import {
  type CheckInput,
  checkProgram,
  checkStore,
  createChecker,
  createStore,
  MemoryOpLog,
  type Store,
} from "@kumiki-graph/core";
import { parseProgram, resolveProgram } from "@kumiki-graph/core/lang";
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
  rows.push(...(await benchStoreCheck()));
  return rows;
}

/** A program of `groups` × 5 definitions: a slot, the reducer and button that bump it, a view, a fn. */
function syntheticProgram(groups: number): string {
  const out: string[] = [];
  for (let i = 0; i < groups; i++) {
    out.push(
      `slot s${i} : Int = 0`,
      `reducer inc${i} on=ui.click(Btn${i})\n    do= s${i} := f${i}(s${i})`,
      `tile Btn${i} = button(text="+", onClick=inc${i})`,
      `tile View${i} = page(text(s${i}.show), Btn${i})`,
      `fn f${i}(x: Int) -> Int = x + ${i}`,
    );
  }
  out.push(
    'tile NotFound = page(text("404"))',
    'app Big\n    caps   = []\n    routes = {"/" -> View0, "/404" -> NotFound}\n    init   = []',
  );
  return `${out.join("\n")}\n`;
}

async function storeOf(source: string, gate: boolean): Promise<Store> {
  const created = createStore({
    log: new MemoryOpLog(),
    author: "agent:bench",
    ...(gate ? {} : { validators: [] }),
  });
  if (!created.ok) throw new Error(created.error.message);
  const parsed = parseProgram(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const items = source
    .split(/\n(?=\S)/)
    .map((text) => ({ op: "add" as const, source: text.endsWith("\n") ? text : `${text}\n` }));
  const r = await created.value.apply(items);
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return created.value;
}

/**
 * The checker on the store: a write at 5,000 definitions through the store's default gate (the
 * full checker, incremental) against the same write through the built-in gate alone, and
 * `checkStore` after one op.
 */
async function benchStoreCheck(): Promise<BenchRow[]> {
  const source = syntheticProgram(1000);
  const gated = await storeOf(source, true);
  const plain = await storeOf(source, false);
  const defs = gated.read().definitions().length;
  let n = 0;
  const write = (store: Store) => () => store.replace({ qname: "slot.s500", body: `Int = ${++n}` });
  // The first write builds the gate's checker for the graph; measure the steady state.
  await write(gated)();
  await write(plain)();
  const withGate = await measure(write(gated), { runs: 31, warmup: 5 });
  const without = await measure(write(plain), { runs: 31, warmup: 5 });
  checkStore(gated);
  const afterOne = await measure(
    async () => {
      await write(plain)();
      checkStore(plain);
    },
    {
      runs: 31,
      warmup: 5,
    },
  );
  return [
    {
      name: `store write through the checker gate, ${defs} defs`,
      ours: withGate,
      baseline: { name: "built-in gate only", timing: without },
      target: "< 2 ms over the baseline",
    },
    {
      name: `checkStore after one write, ${defs} defs`,
      ours: afterOne,
      baseline: { name: "the write alone", timing: without },
      target: "< 2 ms over the baseline",
    },
  ];
}
