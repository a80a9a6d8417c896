import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import { type AutomergeUrl, Repo } from "@automerge/automerge-repo";
import { NodeFSStorageAdapter } from "@automerge/automerge-repo-storage-nodefs";
import type { StoredOp } from "@kumiki-graph/core";
import {
  initWorkspace,
  type OpLogDocument,
  openWorkspace,
  openWorkspaceReader,
  pushBundle,
  type Workspace,
} from "@kumiki-graph/storage-automerge";
import { type BenchRow, measure, prng } from "./harness.js";

/**
 * The store on disk: one more op durably stored, and opening a workspace, at 1k, 10k and 100k ops,
 * each against the raw Automerge operations it performs, measured in the same run:
 *
 * - append: ours is `OpLog.append([op])` on an open workspace (lock, merge of other processes'
 *   chunks, one Automerge change through automerge-repo, flush = write + fsync + rename + fsync of
 *   the directory, the readable op log). Baseline: `Automerge.change` of the same bundle on a copy
 *   of the same document + `Automerge.saveIncremental` + the same durable write (temp file, fsync,
 *   rename, directory fsync), so both sides pay the same disk flushes.
 * - open: ours is `openWorkspace` until `all()` holds every op (lock, Repo, automerge-repo's load,
 *   parsing the ops). Baseline: `Automerge.load` of the very bytes on disk.
 *
 * Histories: one op per change (every op its own command: the worst case for Automerge, which
 * pays per change at load) at every size, and at 100k also bundles of 10 ops per change (imports
 * and multi-op edits). Ops are ~300-byte JSON objects in the §9.3.2 wire format with varied
 * names, bodies and hashes, so compression is not flattered.
 */
export async function benchStore(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-store-"));
  try {
    for (const [n, perChange] of [
      [1_000, 1],
      [10_000, 1],
      [100_000, 1],
      [100_000, 10],
    ] as const) {
      const label = perChange === 1 ? `${n / 1000}k ops` : `${n / 1000}k ops in bundles of ${perChange}`;
      process.stderr.write(`bench: store ${label}: seeding…\n`);
      const dir = path.join(root, `${n}-${perChange}`);
      const seed = await seedWorkspace(dir, n, perChange);
      rows.push(...(await benchAppend(dir, seed, label, n)));
      rows.push(...(await benchOpen(dir, seed, label, n)));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

interface Seed {
  readonly url: string;
  /** The ids of the ops held. */
  readonly count: number;
  readonly storage: string;
}

async function benchAppend(dir: string, seed: Seed, label: string, n: number): Promise<BenchRow[]> {
  const ws = must(await openWorkspace(dir));
  const gen = opFactory(n + 7);
  // The baseline works on a copy of the same document, writing to its own directory.
  let copy = A.load<OpLogDocument>(concatChunks(seed.storage));
  const rawDir = path.join(dir, "raw");
  fs.mkdirSync(rawDir);
  let k = 0;
  const opts = { runs: n >= 100_000 ? 31 : 51, warmup: 5 };
  const ours = await measure(async () => {
    await ws.log.append([gen()]);
  }, opts);
  const raw = await measure(() => {
    const op = gen();
    copy = A.change(copy, (d) => pushBundle(d, [op]));
    durableWrite(path.join(rawDir, `c${k++}`), A.saveIncremental(copy));
  }, opts);
  // The readable log's slow path: an op that sorts before the last line forces a rewrite.
  const early = { ...gen(), "op-id": "op_00000000000000000000000000" };
  const t0 = performance.now();
  await ws.log.append([early]);
  const rewrite = performance.now() - t0;
  await ws.log.close();
  const jsonl = fs.statSync(ws.paths.opLog).size;
  return [
    {
      name: `append 1 op, durable, at ${label}`,
      ours,
      baseline: { name: "A.change + saveIncremental + durable write", timing: raw },
      target: "< 10 ms, ≤ 1.3×",
      note: `an op sorting before the last line rewrites op-log.jsonl (${(jsonl / 1e6).toFixed(1)} MB): ${rewrite.toFixed(0)} ms`,
    },
  ];
}

async function benchOpen(dir: string, seed: Seed, label: string, n: number): Promise<BenchRow[]> {
  const bytes = concatChunks(seed.storage);
  let open: Workspace | undefined;
  const close = async () => {
    await open?.log.close();
    open = undefined;
  };
  const opts = { runs: 5, warmup: 1 };
  let held = 0;
  const ours = await measure(
    async () => {
      open = must(await openWorkspace(dir));
      held = open.log.all().length;
    },
    { ...opts, setup: close },
  );
  await close();
  const raw = await measure(() => A.load(bytes), opts);
  // What automerge-repo alone costs to load the same document from the same directory.
  const repoFind = await measure(async () => {
    const repo = new Repo({ storage: new NodeFSStorageAdapter(seed.storage) });
    await repo.find(seed.url as AutomergeUrl);
    await repo.shutdown();
  }, opts);
  if (held < n) throw new Error(`opened ${held} ops, expected ${n}`);
  // Read-only commands (view, list, check, export) read the verified op-log.jsonl instead.
  let snapshot = false;
  const reader = await measure(async () => {
    const r = must(await openWorkspaceReader(dir));
    held = r.log.all().length;
    snapshot = r.snapshot;
    await r.log.close();
  }, opts);
  if (!snapshot || held < n) throw new Error(`the reader did not use the snapshot (${held} ops)`);
  const rss = peakRssOfOpen(dir);
  const onDisk = chunkFiles(seed.storage).reduce((s, f) => s + fs.statSync(f).size, 0);
  return [
    {
      name: `open (load + read ${held} ops out) at ${label}`,
      ours,
      baseline: { name: "A.load of the same bytes", timing: raw },
      target: n >= 100_000 ? "< 2 s, ≤ 1.3×" : "≤ 1.3×",
      note: `store ${(onDisk / held).toFixed(0)} B/op on disk; peak RSS of a fresh process opening it: ${rss}`,
    },
    {
      name: `open for reading (verified op-log.jsonl) at ${label}`,
      ours: reader,
      baseline: { name: "A.load of the same bytes", timing: raw },
      target: n >= 100_000 ? "< 2 s" : "",
      note: "what read-only verbs use: the document is not loaded while the file matches its chunks",
    },
    {
      name: `open at ${label}, against automerge-repo alone`,
      ours,
      baseline: { name: "Repo + NodeFSStorageAdapter: find of the same document", timing: repoFind },
      note: "the difference is ours: lock, parsing every op, dedupe",
    },
  ];
}

/** Creates a workspace holding `n` ops, `perChange` per Automerge change, through the public API. */
export async function seedWorkspace(dir: string, n: number, perChange: number): Promise<Seed> {
  const init = must(await initWorkspace(dir));
  const url = init.log.url;
  let doc = A.clone(init.log.handle.doc());
  const gen = opFactory(1);
  for (let i = 0; i < n; i += perChange) {
    const bundle = Array.from({ length: Math.min(perChange, n - i) }, gen);
    doc = A.change(doc, (d) => pushBundle(d, bundle));
  }
  const history = A.save(doc);
  // As if a peer had sent the whole history: merged into the handle, stored by automerge-repo.
  init.log.handle.update((d) => A.loadIncremental(d, history));
  await init.log.close();
  return { url, count: n, storage: init.paths.storage };
}

function must<T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** The chunk files of a storage folder, snapshots first. */
export function chunkFiles(storage: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/[/\\](snapshot|incremental)[/\\]/.test(p)) out.push(p);
    }
  };
  walk(storage);
  return out.sort((a, b) => Number(b.includes("snapshot")) - Number(a.includes("snapshot")));
}

function concatChunks(storage: string): Uint8Array {
  return Buffer.concat(chunkFiles(storage).map((f) => fs.readFileSync(f)));
}

function durableWrite(file: string, data: Uint8Array): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, "w");
  fs.writeSync(fd, data);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  const dfd = fs.openSync(path.dirname(file), "r");
  fs.fsyncSync(dfd);
  fs.closeSync(dfd);
}

/** Opens the workspace in a fresh `node` and reports its peak resident set. */
function peakRssOfOpen(dir: string): string {
  const storage = import.meta.resolve("@kumiki-graph/storage-automerge");
  const script = `const m = await import(${JSON.stringify(storage)});
const r = await m.openWorkspace(${JSON.stringify(dir)});
if (!r.ok) throw new Error(r.error.message);
const n = r.value.log.all().length;
await r.value.log.close();
process.stdout.write(JSON.stringify({ n, maxRSS: process.resourceUsage().maxRSS }));`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  if (res.status !== 0) return `unmeasured (${res.stderr.trim().split("\n").at(-1)})`;
  const { maxRSS } = JSON.parse(res.stdout) as { maxRSS: number };
  return `${(maxRSS / 1024).toFixed(0)} MB`;
}

const WORDS = [
  "todo",
  "task",
  "owner",
  "due",
  "label",
  "status",
  "project",
  "member",
  "board",
  "column",
  "comment",
  "priority",
  "estimate",
  "sprint",
  "filter",
  "archive",
  "assign",
  "review",
  "done",
  "open",
];
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** Deterministic, varied ~300-byte ops with increasing ULID op-ids. */
function opFactory(seed: number): () => StoredOp {
  const rnd = prng(seed);
  const word = () => WORDS[Math.floor(rnd() * WORDS.length)]!;
  const hex = (len: number) =>
    Array.from({ length: len }, () => Math.floor(rnd() * 16).toString(16)).join("");
  let ts = 1_779_884_546_123 + seed * 1_000_000_000;
  let i = 0;
  return () => {
    ts += 1 + Math.floor(rnd() * 5000);
    let time = "";
    for (let x = ts, k = 0; k < 10; k++, x = Math.floor(x / 32)) time = CROCKFORD[x % 32] + time;
    let random = "";
    for (let k = 0; k < 16; k++) random += CROCKFORD[Math.floor(rnd() * 32)];
    const name = `${word()}${word()[0]!.toUpperCase()}${word().slice(1)}${i++}`;
    const kind = rnd() < 0.7 ? "add" : rnd() < 0.5 ? "replace" : "edit";
    return {
      op: kind,
      layer: rnd() < 0.5 ? "slot" : "tile",
      name,
      body: `Map(${word()}Id, ${word()}) = { ${word()}: ${Math.floor(rnd() * 1000)}, ${word()}: "${word()} ${word()}" }`,
      author: `agent:claude-${Math.floor(rnd() * 4)}`,
      ts,
      "op-id": `op_${time}${random}`,
      "parent-ops": [`op_${time.slice(0, 8)}${hex(2).toUpperCase()}${random.slice(0, 14)}`],
      "depends-on": [`type:${word()}Id@h:${hex(16)}`, `type:${word()}@h:${hex(16)}`],
    } as StoredOp;
  };
}
