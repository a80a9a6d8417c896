/**
 * The repair loop of ai-edit.md §9.6.2 scripted as an agent runs it, through the CLI and through
 * MCP, on broken programs of the conformance corpus (one per kind of mistake, the smallest): import
 * as written, then `check`, each auto-patch in turn exactly as `check` printed it (`kumiki patch
 * apply -` / `kumiki_apply`), again until a round applies nothing. Both edges must end with the same
 * diagnostics and the same program, never with more errors than they started with, and with a
 * clean check where every injected mistake was auto-fixable.
 */
import { execFile } from "node:child_process";
import { copyFileSync, statSync } from "node:fs";
import path from "node:path";
import {
  type BrokenCase,
  brokenCases,
  conformanceRoot,
  hasConformance,
  kumikiShared,
} from "@kumiki-graph/test-support/corpus";
import { afterEach, describe, expect, it } from "vitest";
import { dispose, kumikiBin, ok, serve, tempDir, workspaceFrom } from "./support/session.js";

const root = conformanceRoot;
const examples = path.join(kumikiShared, "examples");
const present = hasConformance;
type Case = BrokenCase;
/** Kinds an auto-patch repairs wholly, in part, or not at all (then nothing may change). */
const KINDS = [
  "misspell-ref",
  "missing-404",
  "undeclared-cap",
  "unknown-variant",
  "unknown-cap",
  "remove-referenced",
  "null-use",
  "duplicate-def",
];
const sample: Case[] = KINDS.flatMap((kind) => {
  const size = (c: Case) => statSync(path.join(root, c.file)).size;
  const [smallest] = brokenCases()
    .filter((c) => c.kind === kind)
    .sort((a, b) => size(a) - size(b));
  return smallest === undefined ? [] : [smallest];
});

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await dispose(d);
});

interface Diag {
  readonly code: string;
  readonly location: string;
  readonly severity: string;
  readonly "auto-patch"?: unknown;
}

function cli(
  dir: string,
  args: string[],
  stdin?: string,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [kumikiBin, "--store", dir, ...args],
      { env: { ...process.env, KUMIKI_AUTHOR: "agent:loop" } },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : Number((error as { code?: number }).code ?? 1),
          out: stdout,
          err: stderr,
        }),
    );
    child.stdin?.end(stdin ?? "");
  });
}

/** A workspace holding the case's program, imported as written (and its caps manifest, if any). */
async function brokenWorkspace(c: Case, tag: string): Promise<string> {
  const dir = await tempDir(`loop-${tag}`);
  dirs.push(dir);
  await workspaceFrom(dir, "");
  if (c.caps !== undefined) copyFileSync(path.join(examples, c.caps), path.join(dir, "kumiki.caps.json"));
  const imported = await cli(dir, ["import", path.join(root, c.file)]);
  expect(imported.code, imported.err).toBe(0);
  return dir;
}

const errorsOf = (ds: readonly Diag[]) => ds.filter((d) => d.severity === "error");
const key = (ds: readonly Diag[]) => ds.map((d) => `${d.code}@${d.location}`);

describe.skipIf(!present)("the §9.6.2 loop through the CLI and through MCP", () => {
  it.each(sample.map((c) => [c.kind, c] as const))(
    "%s: both edges end alike",
    { timeout: 120_000 },
    async (_k, c) => {
      // Through the CLI: check --json, then patch apply - of each auto-patch as printed.
      const a = await brokenWorkspace(c, "cli");
      const checkCli = async () => JSON.parse((await cli(a, ["check", "--json"])).out).diagnostics as Diag[];
      const firstCli = await checkCli();
      for (let round = 0; round < 10; round++) {
        let applied = 0;
        for (const d of (await checkCli()).filter((x) => x["auto-patch"] !== undefined)) {
          if ((await cli(a, ["patch", "apply", "-"], JSON.stringify(d["auto-patch"]))).code === 0) applied++;
        }
        if (applied === 0) break;
      }
      const lastCli = await checkCli();

      // Through MCP: kumiki_check, then kumiki_apply of each auto-patch as kumiki_check gave it.
      const b = await brokenWorkspace(c, "mcp");
      const s = await serve(b);
      let lastMcp: Diag[];
      try {
        const checkMcp = async () => ok(await s.call("kumiki_check", {})).diagnostics as Diag[];
        expect(key(await checkMcp())).toEqual(key(firstCli));
        for (let round = 0; round < 10; round++) {
          let applied = 0;
          for (const d of (await checkMcp()).filter((x) => x["auto-patch"] !== undefined)) {
            if (!(await s.call("kumiki_apply", { ops: [d["auto-patch"]] })).isError) applied++;
          }
          if (applied === 0) break;
        }
        lastMcp = await checkMcp();
      } finally {
        await s.close();
      }

      expect(key(lastMcp)).toEqual(key(lastCli));
      expect((await cli(b, ["export"])).out).toBe((await cli(a, ["export"])).out);
      expect(errorsOf(lastCli).length).toBeLessThanOrEqual(errorsOf(firstCli).length);
      expect(lastCli.filter((d) => d["auto-patch"] !== undefined)).toEqual([]);
      if (["misspell-ref", "missing-404", "undeclared-cap"].includes(c.kind))
        expect(errorsOf(lastCli)).toEqual([]);
      if (c.kind === "null-use") expect(key(lastCli)).toEqual(key(firstCli));
    },
  );
});
