/**
 * Issue 42, the long-running write path: what one acknowledged write costs a process that keeps a
 * workspace store open — the MCP server's case (`kumiki mcp serve`, `kumiki serve`'s stores) — at
 * 180 definitions (apps/05 as written) and 5,000 (bench/generate.ts). A write is acknowledged when
 * it is durably stored (fsync'd) and took effect, gated by the full checker, as the MCP server's
 * are. Each row gives the wall time per write and, in its note, the CPU per write
 * (`process.cpuUsage`, user + system, over the timed runs); target ≤ 10 ms of CPU at 5,000.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { importProgram } from "@kumiki-graph/core";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { generateProgram } from "./generate.js";
import { type BenchRow, measure } from "./harness.js";
import { corpusFile } from "./paths.js";

const RUNS = 30;

export async function benchWritePath(): Promise<BenchRow[]> {
  const file = corpusFile("apps/05-project-management/app.kumiki");
  if (file === undefined) return [];
  const base = readFileSync(file, "utf8");
  const rows: BenchRow[] = [];
  for (const size of [180, 5_000]) {
    const text =
      size === 180
        ? base
        : generateProgram({ name: "05-project-management", text: base }, size, 20261204).text;
    const dir = mkdtempSync(path.join(tmpdir(), "kumiki-bench-write-"));
    try {
      const init = await initWorkspace(dir);
      if (!init.ok) throw new Error(init.error.message);
      await init.value.log.close();
      const loader = await openWorkspaceStore(dir, { author: "agent:import" });
      if (!loader.ok) throw new Error(loader.error.message);
      const imported = await importProgram(loader.value.store, text);
      if (!imported.ok) throw new Error(imported.error.message);
      await loader.value.close();
      const ws = await openWorkspaceStore(dir, { author: "agent:writer" });
      if (!ws.ok) throw new Error(ws.error.message);
      try {
        let n = 0;
        const write = async () => {
          const r = await ws.value.store.add({ layer: "slot", name: `benchWrite${n++}`, body: "Int = 0" });
          if (!r.ok) throw new Error(r.error.message);
        };
        for (let i = 0; i < 3; i++) await write();
        const before = process.cpuUsage();
        const timing = await measure(write, { runs: RUNS, warmup: 0 });
        const cpu = process.cpuUsage(before);
        const cpuMs = (cpu.user + cpu.system) / 1000 / RUNS;
        rows.push({
          name: `acknowledged write through an open workspace store, ${size.toLocaleString("en")} defs`,
          ours: timing,
          target: size === 5_000 ? "≤ 10 ms CPU" : "",
          note: `CPU ${cpuMs.toFixed(2)} ms per write`,
        });
      } finally {
        await ws.value.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
