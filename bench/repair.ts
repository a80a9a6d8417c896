/**
 * The repair loop (issue 18): what `fix --apply` repairs on the broken corpus
 * (../shared/kumiki/conformance: each example with one injected mistake), what an MCP agent spends
 * from its first `kumiki_check` to a clean one (calls and bytes of context, through a real SDK
 * client and the real server), and how long `fix --apply` takes on the 180-definition example
 * with 20 injected misspellings, against a full `check` of the same program in the same run.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import {
  applyFixes,
  type CapabilityManifest,
  checkStore,
  importProgram,
  type Store,
} from "@kumiki-graph/core";
import { createMcpServer } from "@kumiki-graph/mcp";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type BenchRow, measure, summarize } from "./harness.js";
import { corpusFile, repoRoot } from "./paths.js";
import { importedStore } from "./stores.js";

interface Case {
  readonly file: string;
  readonly kind: string;
  readonly caps?: string;
}

const conformance = path.join(repoRoot, "../shared/kumiki/conformance");
const examples = path.join(repoRoot, "../shared/kumiki/examples");

/**
 * `source` with `n` references misspelt, each in another definition: the first whole-word use of a
 * slot name (5+ characters) in a definition's body gets two inner letters swapped. Deterministic.
 */
export function injectMisspellings(source: string, n: number): string {
  const slots = [...source.matchAll(/^slot\s+([A-Za-z][A-Za-z0-9_]{4,})/gm)].map((m) => m[1]!);
  const lines = source.split("\n");
  let done = 0;
  for (let i = 0; i < lines.length && done < n; i++) {
    const line = lines[i]!;
    if (/^(slot|type|app|effect)\b/.test(line) || /^\s*#/.test(line)) continue;
    for (const s of slots) {
      const at = line.search(new RegExp(`(?<![A-Za-z0-9_.])${s}(?![A-Za-z0-9_])`));
      if (at < 0 || (/^\S/.test(line) && at < line.indexOf("=") + 1)) continue;
      const typo = `${s[0]}${s[2]}${s[1]}${s.slice(3)}`;
      if (typo === s || slots.includes(typo)) continue;
      lines[i] = line.slice(0, at) + typo + line.slice(at + s.length);
      done++;
      // One per definition: skip to the next definition's first line.
      while (i + 1 < lines.length && !/^[a-z]+\s+[A-Za-z]/.test(lines[i + 1]!)) i++;
      break;
    }
  }
  return lines.join("\n");
}

/** An MCP agent's §9.6.2 loop on one workspace: calls and bytes (arguments + answers) to a clean check. */
async function mcpLoop(dir: string): Promise<{ calls: number; bytes: number; clean: boolean; ms: number }> {
  const made = await createMcpServer({ storeDir: dir, author: "agent:bench", log: () => undefined });
  if (!made.ok) throw new Error(made.error.message);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await made.value.connect(serverSide);
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(clientSide);
  let calls = 0;
  let bytes = 0;
  const call = async (name: string, args: Record<string, unknown>) => {
    calls++;
    const r = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
      content: { text?: string }[];
    };
    bytes += JSON.stringify(args).length + (r.content[0]?.text?.length ?? 0);
    return r;
  };
  type Diag = { severity: string; "auto-patch"?: unknown };
  const t0 = performance.now();
  let clean = false;
  try {
    for (let round = 0; round < 10; round++) {
      const ds = (await call("kumiki_check", {})).structuredContent?.diagnostics as Diag[];
      if (!ds.some((d) => d.severity === "error")) {
        clean = true;
        break;
      }
      let applied = 0;
      for (const d of ds.filter((x) => x["auto-patch"] !== undefined))
        if ((await call("kumiki_apply", { ops: [d["auto-patch"]] })).isError !== true) applied++;
      if (applied === 0) break;
    }
  } finally {
    await client.close();
    await made.value.close();
  }
  return { calls, bytes, clean, ms: performance.now() - t0 };
}

export async function benchRepair(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let cases: Case[] = [];
  try {
    cases = (
      JSON.parse(readFileSync(path.join(conformance, "expected.json"), "utf8")) as { cases: Case[] }
    ).cases.filter((c) => c.kind !== "none");
  } catch {
    return [];
  }
  const capsOf = (c: Case) =>
    c.caps === undefined
      ? undefined
      : (JSON.parse(readFileSync(path.join(examples, c.caps), "utf8")) as CapabilityManifest);

  // fix --apply over the whole broken corpus.
  let before = 0;
  let after = 0;
  let clean = 0;
  const fixTimes: number[] = [];
  for (const c of cases) {
    const caps = capsOf(c);
    const store = await importedStore(readFileSync(path.join(conformance, c.file), "utf8"), caps);
    const t0 = performance.now();
    const r = await applyFixes(store, { check: caps === undefined ? {} : { capabilities: caps } });
    fixTimes.push(performance.now() - t0);
    if (!r.ok) throw new Error(r.error.message);
    before += r.value.before.errors;
    after += r.value.after.errors;
    if (r.value.after.errors === 0) clean++;
  }
  rows.push({
    name: `fix --apply (core), each of the ${cases.length} broken corpus programs`,
    ours: summarize(fixTimes),
    note: `errors ${before} → ${after}; ${clean} programs clean after`,
  });

  // An MCP agent, first check to clean check, on every program fix can make clean.
  const spent: { calls: number; bytes: number; ms: number }[] = [];
  let stuck = 0;
  for (const c of cases) {
    if (!["misspell-ref", "missing-404", "undeclared-cap", "unknown-variant"].includes(c.kind)) continue;
    const dir = mkdtempSync(path.join(tmpdir(), "kumiki-bench-repair-"));
    try {
      const ws = await initWorkspace(dir);
      if (!ws.ok) throw new Error(ws.error.message);
      await ws.value.log.close();
      if (c.caps !== undefined) copyFileSync(path.join(examples, c.caps), path.join(dir, "kumiki.caps.json"));
      const loader = await openWorkspaceStore(dir, { author: "agent:import", validators: [] });
      if (!loader.ok) throw new Error(loader.error.message);
      const imported = await importProgram(
        loader.value.store,
        readFileSync(path.join(conformance, c.file), "utf8"),
      );
      await loader.value.close();
      if (!imported.ok) throw new Error(imported.error.message);
      const r = await mcpLoop(dir);
      if (r.clean) spent.push(r);
      else stuck++;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const med = (xs: number[]) => sorted(xs)[xs.length >> 1] ?? 0;
  const max = (xs: number[]) => sorted(xs)[xs.length - 1] ?? 0;
  const calls = spent.map((s) => s.calls);
  const bytes = spent.map((s) => s.bytes);
  rows.push({
    name: `MCP agent (SDK client, in-memory transport), first kumiki_check to a clean one, ${spent.length} programs`,
    ours: summarize(spent.map((s) => s.ms)),
    note: `calls median ${med(calls)} max ${max(calls)}; bytes median ${med(bytes)} max ${max(bytes)}${stuck > 0 ? `; ${stuck} not clean` : ""}`,
  });

  // fix --apply on the 180-definition example with 20 injected misspellings, against a full check.
  const file = corpusFile("apps/05-project-management/app.kumiki");
  if (file !== undefined) {
    const broken = injectMisspellings(readFileSync(file, "utf8"), 20);
    let store: Store | undefined;
    let fixed = { before: 0, after: 0 };
    const fix = await measure(
      async () => {
        const r = await applyFixes(store!);
        if (!r.ok) throw new Error(r.error.message);
        fixed = { before: r.value.before.errors, after: r.value.after.errors };
      },
      { runs: 5, warmup: 1, setup: async () => (store = await importedStore(broken, undefined)) },
    );
    const check = await measure(() => checkStore(store!), {
      runs: 5,
      warmup: 1,
      setup: async () => (store = await importedStore(broken, undefined)),
    });
    rows.push({
      name: "fix --apply (core), 05-project-management (180 defs) with 20 injected misspellings",
      ours: fix,
      baseline: { name: "full check of the same program", timing: check },
      note: `errors ${fixed.before} → ${fixed.after}`,
    });
  }
  return rows;
}
