/**
 * Damage and repair at 10,000 ops (issue 24): what checking every chunk file costs at open, and how
 * long `repairWorkspace` takes for two kinds of damage, each beside a full open of the sound
 * workspace measured in the same run.
 *
 * - chunk check: `chunkDamage` over every chunk file of the document, against `Automerge.load` of
 *   the same bytes (the part of an open the check adds to).
 * - repair, newest chunk truncated: before each run one op is appended and its chunk cut by 7
 *   bytes; the repair moves it aside and takes the op back from op-log.jsonl.
 * - repair, every chunk deleted: the repair writes a new first change and takes all 10,000 ops back
 *   from op-log.jsonl, in one change.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import {
  chunkDamage,
  openWorkspace,
  type RepairReport,
  repairWorkspace,
} from "@kumiki-graph/storage-automerge";
import { type BenchRow, measure } from "./harness.js";
import { chunkFiles, seedWorkspace } from "./store.js";

const N = 10_000;

function newest(storage: string): string {
  const files = chunkFiles(storage).filter((f) => /[/\\]incremental[/\\]/.test(f));
  files.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (files[0] === undefined) throw new Error("no incremental chunk to damage");
  return files[0];
}

function must<T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

export async function benchDamage(): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-damage-"));
  const dir = path.join(root, "ws");
  try {
    const seed = await seedWorkspace(dir, N, 1);
    const openClose = async () => {
      const ws = must(await openWorkspace(dir));
      await ws.log.close();
    };
    // One more op through a normal append, so that the newest chunk is one op's.
    let k = 0;
    const appendOne = async () => {
      const ws = must(await openWorkspace(dir));
      await ws.log.append([
        { "op-id": `op_01ZZZZZZZZZZZZZZZZZZZZZ${String(k++).padStart(3, "0")}`, op: "add" } as never,
      ]);
      await ws.log.close();
    };
    const open = await measure(openClose, { runs: 7, warmup: 1 });
    const rows: BenchRow[] = [];

    const files = chunkFiles(seed.storage).map((f) => ({
      kind: /[/\\]snapshot[/\\]/.test(f) ? ("snapshot" as const) : ("incremental" as const),
      name: path.basename(f),
      data: new Uint8Array(fs.readFileSync(f)),
    }));
    const bytes = files.reduce((n, f) => n + f.data.length, 0);
    const ordered = [...files].sort((a, b) => Number(b.kind === "snapshot") - Number(a.kind === "snapshot"));
    const joined = Buffer.concat(ordered.map((f) => f.data));
    rows.push({
      name: `chunk check at open, ${N / 1000}k ops (${files.length} files, ${(bytes / 1e6).toFixed(1)} MB)`,
      ours: await measure(() => {
        for (const f of files)
          if (chunkDamage(f.kind, f.name, f.data) !== undefined) throw new Error("damaged");
      }),
      baseline: {
        name: "Automerge.load of the same bytes",
        timing: await measure(() => A.load(joined), { runs: 7 }),
      },
      target: "a small fraction",
    });

    // Each kind of damage, made again before every timed repair.
    const kinds: [string, () => Promise<void> | void][] = [
      [
        "newest chunk truncated",
        async () => {
          await appendOne();
          const f = newest(seed.storage);
          fs.truncateSync(f, fs.statSync(f).size - 7);
        },
      ],
      [
        "every chunk deleted",
        () => {
          for (const f of chunkFiles(seed.storage)) fs.rmSync(f);
        },
      ],
    ];
    for (const [kind, damage] of kinds) {
      let last: RepairReport | undefined;
      const timing = await measure(
        async () => {
          last = must(await repairWorkspace(dir));
        },
        { runs: 5, warmup: 1, setup: damage },
      );
      rows.push({
        name: `repair at ${N / 1000}k ops: ${kind}`,
        ours: timing,
        baseline: { name: "a full open of the sound workspace", timing: open },
        note:
          last === undefined
            ? ""
            : `ops ${last.before} + ${last.fromOpLog} from op-log.jsonl = ${last.after}`,
      });
    }
    return rows;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
