/**
 * The CLI and the MCP server open a workspace through core's one `openWorkspaceStore`: the same
 * kumiki.caps.json reaches the gate, check and fix of both, so they give the same answer.
 */
import { execFile } from "node:child_process";
import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { hasCorpus, kumikiShared } from "@kumiki-graph/test-support/corpus";
import { afterEach, describe, expect, it } from "vitest";
import { dispose, kumikiBin, serve, tempDir, workspaceFrom } from "./support/session.js";

const exec = promisify(execFile);
const program = path.join(kumikiShared, "examples/features/27-custom-capability.kumiki");
const manifest = path.join(kumikiShared, "examples/features/kumiki.caps.json");
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await dispose(d);
});

async function cli(dir: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await exec(process.execPath, [kumikiBin, "--store", dir, ...args], {
      env: { ...process.env, KUMIKI_AUTHOR: "user:cli" },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

describe.skipIf(!hasCorpus)("kumiki.caps.json, CLI and MCP alike", () => {
  it("a custom capability: kumiki check and kumiki_check both ok; a broken manifest stops both", {
    timeout: 60_000,
  }, async () => {
    const dir = await tempDir("caps");
    dirs.push(dir);
    await workspaceFrom(dir, "");
    copyFileSync(manifest, path.join(dir, "kumiki.caps.json"));
    expect((await cli(dir, "import", program)).code).toBe(0);
    const viaCli = JSON.parse((await cli(dir, "check", "--json")).out) as { ok: boolean; errors: number };
    const s = await serve(dir);
    try {
      const viaMcp = await s.call("kumiki_check", {});
      expect(viaMcp.isError).toBe(false);
      expect({ ok: viaMcp.value.ok, errors: viaMcp.value.errors }).toEqual({
        ok: viaCli.ok,
        errors: viaCli.errors,
      });
      expect(viaCli).toMatchObject({ ok: true, errors: 0 });
    } finally {
      await s.close();
    }
    writeFileSync(path.join(dir, "kumiki.caps.json"), "{nope");
    const refused = await cli(dir, "add", "slot", "n", "Int = 1");
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/kumiki\.caps\.json is not JSON/);
    await expect(serve(dir)).rejects.toThrow(/kumiki\.caps\.json is not JSON/);
  });
});
