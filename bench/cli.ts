import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BenchRow, measure } from "./harness.js";
import { corpusFile, repoRoot } from "./paths.js";

/**
 * `kumiki view slot.todos` through the real binary (a new Node process each time, as a shell or
 * an agent runs it) on a workspace holding the 180-definition example, against `node -e 0` (a
 * bare Node start) measured in the same run: a repeated read, and the first read after a write
 * (another `kumiki add` just before each timed run), each served from the workspace's verified
 * op-log.jsonl when it is current; and, for comparison, a read with the fast path turned off
 * (`KUMIKI_READ_SNAPSHOT=off`: the full Automerge open).
 */
export async function benchCli(): Promise<BenchRow[]> {
  // 05 is the 180-definition example; while the store cannot import it, 02 stands in (said in the note).
  const big = corpusFile("apps/05-project-management/app.kumiki");
  const small = corpusFile("apps/02-todomvc/app.kumiki");
  if (big === undefined || small === undefined) return [];
  const bin = path.join(repoRoot, "packages/cli/bin/kumiki.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-cli-"));
  // Each call in its own process (what this bench measures; bench/cli-scale.ts has the daemon's rows).
  const env = { ...process.env, KUMIKI_AUTHOR: "user:bench", KUMIKI_DAEMON: "off" };
  const attempt = (...argv: string[]) =>
    spawnSync(process.execPath, [bin, ...argv], { cwd: dir, env, encoding: "utf8" });
  let written = 0;
  const kumiki = (...argv: string[]): string => {
    const r = attempt(...argv);
    if (r.status !== 0) throw new Error(`kumiki ${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  try {
    kumiki("init");
    const imported = attempt("import", big);
    const example = imported.status === 0 ? "05-project-management" : "02-todomvc";
    const slot = imported.status === 0 ? "slot.tasks" : "slot.todos";
    if (imported.status !== 0) kumiki("import", small);
    const why =
      imported.status === 0 ? "" : `; 05 does not import yet (${imported.stderr.trim().slice(0, 120)}…)`;
    const defs = (JSON.parse(kumiki("status", "--json")) as { definitions: number }).definitions;
    const node = await measure(() => spawnSync(process.execPath, ["-e", "0"]), { runs: 7, warmup: 2 });
    const view = await measure(() => kumiki("view", slot), { runs: 7, warmup: 2 });
    const afterWrite = await measure(() => kumiki("view", slot), {
      runs: 5,
      warmup: 1,
      setup: () => kumiki("add", "slot", `benchWrite${written++}`, "Int = 0"),
    });
    const offEnv = { ...env, KUMIKI_READ_SNAPSHOT: "off" };
    const full = await measure(
      () => spawnSync(process.execPath, [bin, "view", slot], { cwd: dir, env: offEnv, encoding: "utf8" }),
      { runs: 5, warmup: 1 },
    );
    // Issue 22's other verbs, whole process, wall time: a check, a write (a new name each run) and help.
    const check = await measure(() => attempt("check"), { runs: 5, warmup: 1 });
    const add = await measure(() => kumiki("add", "slot", `benchAdd${written++}`, "Int = 0"), {
      runs: 5,
      warmup: 1,
    });
    const help = await measure(() => kumiki("--help"), { runs: 5, warmup: 1 });
    const name = `kumiki view ${slot}, ${example} (${defs} defs), real bin`;
    const others = [
      { verb: "check", timing: check, note: "op-log.jsonl current; the checker over every definition" },
      {
        verb: "add slot x 'Int = 0'",
        timing: add,
        note: "a write: the Automerge open, the gate's full check, a durable append",
      },
      { verb: "--help", timing: help, note: "the verb list: no core or storage chunk loaded" },
    ].map((o) => ({
      name: `kumiki ${o.verb}, ${example} (${defs} defs), real bin`,
      ours: o.timing,
      baseline: { name: "node -e 0", timing: node },
      target: "≤ 2.5× node -e 0 (issue 22)",
      note: o.note,
    }));
    return [
      {
        name,
        ours: view,
        baseline: { name: "node -e 0", timing: node },
        target: "< 300 ms wall",
        note: `op-log.jsonl current (a repeated read)${why}`,
      },
      {
        name: `${name}, first read after a write`,
        ours: afterWrite,
        baseline: { name: "node -e 0", timing: node },
        note: "op-log.jsonl left current by the write",
      },
      {
        name: `${name}, fast path off`,
        ours: full,
        baseline: { name: "node -e 0", timing: node },
        note: "KUMIKI_READ_SNAPSHOT=off: the full Automerge open",
      },
      ...others,
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
