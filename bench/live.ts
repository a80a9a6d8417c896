/**
 * The live workspace (issue 17): what it costs an open store to stay current with other writers
 * of the same folder, at 5,000 definitions, against the cost of a full reopen measured in the same
 * run (what a store that did not catch up would need to see another process's op).
 *
 * - catching up when nothing changed: one read of the storage's generation token per call;
 * - taking in one op another store (another process, in effect: its own log, storage and lock)
 *   stored: reading its chunk, merging it, folding the op, announcing it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { importProgram } from "@kumiki-graph/core";
import { initWorkspace, openWorkspaceStore, type WorkspaceStore } from "@kumiki-graph/storage-automerge";
import { generateProgram } from "./generate.js";
import { type BenchRow, measure } from "./harness.js";
import { corpusFile } from "./paths.js";

const SIZE = 5_000;
const SEED = 20261202;

async function open(dir: string, author: string): Promise<WorkspaceStore> {
  const ws = await openWorkspaceStore(dir, { author });
  if (!ws.ok) throw new Error(ws.error.message);
  return ws.value;
}

export async function benchLive(): Promise<BenchRow[]> {
  const file = corpusFile("apps/05-project-management/app.kumiki");
  if (file === undefined) return [];
  const text = generateProgram(
    { name: "05-project-management", text: readFileSync(file, "utf8") },
    SIZE,
    SEED,
  ).text;
  const dir = mkdtempSync(path.join(tmpdir(), "kumiki-bench-live-"));
  try {
    const init = await initWorkspace(dir);
    if (!init.ok) throw new Error(init.error.message);
    await init.value.log.close();
    const loader = await openWorkspaceStore(dir, { author: "agent:import", validators: [] });
    if (!loader.ok) throw new Error(loader.error.message);
    const imported = await importProgram(loader.value.store, text);
    if (!imported.ok) throw new Error(imported.error.message);
    await loader.value.close();
    const defs = imported.value.ops.filter((o) => o.op === "add").length;

    const reopen = await measure(
      async () => {
        const s = await open(dir, "agent:reader");
        s.store.status();
        await s.close();
      },
      { runs: 5, warmup: 1 },
    );
    const a = await open(dir, "agent:a");
    const b = await open(dir, "agent:b");
    try {
      const idle = await measure(() => a.store.conflictPolicy(), { runs: 201, warmup: 20 });
      let n = 0;
      let seen = 0;
      a.store.onChange((e) => {
        if (e.source === "remote") seen += e.ops.length;
      });
      const foreign = await measure(() => a.store.conflictPolicy(), {
        runs: 21,
        warmup: 3,
        setup: async () => {
          const r = await b.store.add({ layer: "slot", name: `live${n++}`, body: "Int = 0" });
          if (!r.ok) throw new Error(r.error.message);
        },
      });
      if (seen !== n) throw new Error(`the open store took in ${seen} of the ${n} foreign ops`);
      const baseline = { name: `full reopen, ${defs} defs`, timing: reopen };
      return [
        {
          name: `live store: catch up when nothing changed, ${defs} defs`,
          ours: idle,
          baseline,
          target: "< 0.2 ms",
        },
        {
          name: `live store: take in one op another process stored, ${defs} defs`,
          ours: foreign,
          baseline,
          target: "< 5 ms",
          note: `${seen} ops announced as remote`,
        },
      ];
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
