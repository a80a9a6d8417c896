/** `kumiki mcp serve --version | --doctor`, and refusals before serving, through the real bin. */
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { runDoctor } from "../src/index.js";
import { dispose, kumikiBin, tempDir } from "./support/session.js";

function kumiki(args: readonly string[]) {
  return spawnSync(process.execPath, [kumikiBin, ...args], { encoding: "utf8", timeout: 60_000 });
}

describe("kumiki mcp serve", () => {
  let dir: string | undefined;
  afterEach(async () => {
    await dispose(dir);
    dir = undefined;
  });

  it("--version prints the server, core, spec and protocol versions", () => {
    const r = kumiki(["mcp", "serve", "--version"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^@kumiki-graph\/mcp \d+\.\d+\.\d+\n@kumiki-graph\/core \d+\.\d+\.\d+\nspec kumiki-spec@\w+ .*\nMCP protocol \d{4}-\d\d-\d\d\n$/,
    );
    const j = kumiki(["mcp", "serve", "--version", "--json"]);
    expect(JSON.parse(j.stdout)).toMatchObject({ server: expect.any(String), core: expect.any(String) });
  });

  it("--doctor exits 0 after a real add, view and check", () => {
    const r = kumiki(["mcp", "serve", "--doctor", "--json"]);
    expect(r.stderr).toBe("");
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    expect(report.checks.map((c) => [c.name, c.ok])).toEqual([
      ["versions", true],
      ["temporary workspace", true],
      ["server", true],
      ["add", true],
      ["view", true],
      ["check", true],
    ]);
    expect(report.ok).toBe(true);
    expect(r.status).toBe(0);
  });

  it("--doctor exits 1 when the store it was pointed at does not open", async () => {
    dir = await tempDir("nostore");
    const r = kumiki(["mcp", "serve", "--doctor", "--store", dir]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("FAIL store: no workspace at or above");
    const report = await runDoctor({ storeDir: dir });
    expect(report.ok).toBe(false);
    expect(report.checks.at(-1)).toMatchObject({ name: "store", ok: false });
  });

  it("refuses a bad --limit with exit 2, and a missing workspace with exit 1, before serving", async () => {
    dir = await tempDir("nostore");
    const bad = kumiki(["mcp", "serve", "--store", dir, "--limit", "speed=3"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown limit "speed"');
    expect(bad.stdout).toBe("");
    const none = kumiki(["mcp", "serve", "--store", dir]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("no workspace at or above");
    expect(none.stdout).toBe("");
  });
});
