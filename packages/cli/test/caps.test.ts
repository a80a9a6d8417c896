import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { hasCorpus, kumikiShared } from "@kumiki-graph/test-support/corpus";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, run, tempDir, testEnv } from "./support.js";

const program = path.join(kumikiShared, "examples/features/27-custom-capability.kumiki");
const manifest = path.join(kumikiShared, "examples/features/kumiki.caps.json");
const dirs: string[] = [];
afterEach(() => cleanup(...dirs.splice(0)));

async function workspace(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = tempDir("caps");
  const cache = tempDir("caps-cache");
  dirs.push(dir, cache);
  const env = testEnv(cache);
  expect((await run(["init"], { cwd: dir, env })).code).toBe(0);
  return { dir, env };
}

describe.skipIf(!hasCorpus)("a workspace's kumiki.caps.json", () => {
  it("lets app.caps name a custom capability in writes, check and fix", async () => {
    const { dir, env } = await workspace();
    copyFileSync(manifest, path.join(dir, "kumiki.caps.json"));
    const imported = await run(["import", program], { cwd: dir, env });
    expect(imported.err).toBe("");
    expect(imported.code).toBe(0);
    const checked = await run(["check", "--json"], { cwd: dir, env });
    expect(checked.code).toBe(0);
    expect(JSON.parse(checked.out)).toMatchObject({ ok: true, errors: 0 });
  });

  it("without it, the program imports with its E0302 reported; --strict refuses it and writes nothing", async () => {
    const { dir, env } = await workspace();
    const strict = await run(["import", program, "--strict"], { cwd: dir, env });
    expect(strict.code).toBe(1);
    expect(strict.err).toMatch(/E0302/);
    const status = await run(["status", "--json"], { cwd: dir, env });
    expect(JSON.parse(status.out)).toMatchObject({ ops: 0, definitions: 0 });
    const imported = await run(["import", program, "--json"], { cwd: dir, env });
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.out).diagnostics).toEqual({ errors: 1, warnings: 0 });
    const checked = await run(["check", "--json"], { cwd: dir, env });
    expect(checked.code).toBe(1);
    expect(JSON.parse(checked.out).diagnostics.map((d: { code: string }) => d.code)).toEqual(["E0302"]);
  });

  it("a manifest that is not JSON is reported by path, exit 1", async () => {
    const { dir, env } = await workspace();
    writeFileSync(path.join(dir, "kumiki.caps.json"), "{nope");
    const r = await run(["add", "slot", "n", "Int = 1"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/kumiki\.caps\.json is not JSON/);
  });
});
