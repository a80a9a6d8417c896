/**
 * The repair loop of ai-edit.md §9.6.2 from a real broken program: import it as written, `fix
 * --apply` repairs what an auto-patch can (to a fixed point, never adding an error), exits 1 while
 * errors remain, and hands each remaining error to a model with compact context.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, cleanup, run, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
afterEach(() => cleanup(...dirs.splice(0)));

const BROKEN = [
  "slot count : Int = 0",
  'slot label : Text = ""',
  'tile IncBtn = button("+")',
  'tile ResetBtn = button("0")',
  "reducer inc on=ui.click(IncBtn) do= conut := count + 1",
  'reducer reset on=ui.click(ResetBtn) do= count := count + "x"',
  "tile App = column(IncBtn, ResetBtn, text(count.show))",
  "app Main",
  "    caps   = []",
  '    routes = {"/" -> App, "/404" -> App}',
  "    init   = []",
  "",
].join("\n");

/** An initialised workspace (with its own snapshot cache) holding broken.kumiki, not yet imported. */
async function workspaceWithBroken(prefix: string): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = tempDir(prefix);
  const cache = tempDir(`${prefix}-cache`);
  dirs.push(dir, cache);
  const env = testEnv(cache);
  expect((await run(["init"], { cwd: dir, env })).code).toBe(0);
  writeFileSync(path.join(dir, "broken.kumiki"), BROKEN);
  return { dir, env };
}

describe("the repair loop from a broken program", () => {
  it("imports it with its errors, fixes the fixable, and leaves the rest with context, exit 1", async () => {
    const { dir, env } = await workspaceWithBroken("loop");
    const imported = await run(["import", "broken.kumiki", "--json"], { cwd: dir, env });
    expect(imported.code, imported.err).toBe(0);
    expect(JSON.parse(imported.out).diagnostics).toEqual({ errors: 2, warnings: 0 });
    expect((await run(["export"], { cwd: dir, env })).out).toBe(BROKEN);

    // A dry run changes nothing and exits 1: the program has errors.
    expect((await run(["fix"], { cwd: dir, env })).code).toBe(1);

    const fixed = await run(["fix", "--apply", "--json"], { cwd: dir, env });
    expect(fixed.code).toBe(1);
    const report = JSON.parse(fixed.out) as {
      before: { errors: number };
      after: { errors: number };
      applied: { proposal: { id: string } }[];
      remaining: {
        code: string;
        location: string;
        context?: { definition: string; text: string; references: string[] };
      }[];
    };
    expect(report.before.errors).toBe(2);
    expect(report.after.errors).toBe(1);
    expect(report.applied.map((a) => a.proposal.id)).toEqual([expect.stringMatching(/^E0103@reducer\.inc/)]);
    const [left] = report.remaining;
    expect(left).toMatchObject({ code: "E0201", location: "reducer.reset.body:1" });
    expect(left?.context).toMatchObject({
      definition: "reducer.reset",
      references: ["slot.count", "tile.ResetBtn"],
    });
    expect(left?.context?.text).toContain('count := count + "x"');

    // The model's fix, as a patch apply of the body:N form; then check is clean and fix exits 0.
    const patch = JSON.stringify({
      op: "edit",
      layer: "reducer",
      name: "reset",
      patch: { "body:1": "replace 'count + \"x\"' -> '0'" },
    });
    const applied = await run(["patch", "apply", "-"], { cwd: dir, env, stdin: patch });
    expect(applied.code, applied.err).toBe(0);
    expect((await run(["check"], { cwd: dir, env })).code).toBe(0);
    expect((await run(["fix"], { cwd: dir, env })).code).toBe(0);
  });
});

describe("the patch apply --help example, as printed", () => {
  const hasJq = (() => {
    try {
      execFileSync("jq", ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!hasJq)(
    "check --json | jq … | patch apply - repairs the first auto-patchable error",
    async () => {
      const { dir, env } = await workspaceWithBroken("jq");
      expect((await run(["import", "broken.kumiki"], { cwd: dir, env })).code).toBe(0);
      const help = (await run(["patch", "apply", "--help"], { cwd: dir, env })).out;
      const line = help.split("\n").find((l) => l.includes("| jq "));
      expect(line).toBeDefined();
      const k = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;
      const pipeline = line!.trim().replaceAll("kumiki ", `${k} `);
      const r = spawnSync("bash", ["-c", pipeline], {
        cwd: dir,
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      const after = await run(["check", "--json"], { cwd: dir, env });
      expect(JSON.parse(after.out).diagnostics.map((d: { code: string }) => d.code)).toEqual(["E0201"]);
    },
  );
});
