/**
 * One workspace, several processes: a running `kumiki mcp serve` answers from the graph as it is
 * now, including what the CLI (another process) wrote after the server started.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispose, kumikiBin, ok, type Session, serve, tempDir, workspaceFrom } from "./support/session.js";

const exec = promisify(execFile);

function cli(dir: string, ...args: string[]) {
  return exec(process.execPath, [kumikiBin, "--store", dir, ...args], {
    env: { ...process.env, KUMIKI_AUTHOR: "user:cli" },
  });
}

describe("kumiki mcp serve beside the CLI on one workspace", () => {
  let dir: string | undefined;
  let s: Session;

  beforeAll(async () => {
    dir = await tempDir("live");
    await workspaceFrom(dir, "");
    s = await serve(dir);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await dispose(dir);
  });

  it("sees a definition the CLI added after the server started, in view and list, and judges writes against it", async () => {
    expect((await s.call("kumiki_view", { selector: "slot.viaCli" })).isError).toBe(true);
    await cli(dir!, "add", "slot", "viaCli", "Int = 0");
    const viewed = ok(await s.call("kumiki_view", { selector: "slot.viaCli" }));
    expect(JSON.stringify(viewed)).toContain("slot viaCli");
    const listed = ok(await s.call("kumiki_list", {}));
    expect(JSON.stringify(listed)).toContain("slot.viaCli");
    // A write over MCP is judged against it: the same name is refused, not stored and then lost.
    const again = await s.call("kumiki_add", { layer: "slot", name: "viaCli", body: "Int = 1" });
    expect(again.isError).toBe(true);
  }, 60_000);

  it("what MCP wrote, the CLI reads at once", async () => {
    ok(await s.call("kumiki_add", { layer: "slot", name: "viaMcp", body: "Int = 2" }));
    const { stdout } = await cli(dir!, "view", "slot.viaMcp");
    expect(stdout).toContain("slot viaMcp");
  }, 60_000);

  it("a conflict made by ops from another workspace reads the same over MCP and the CLI", async () => {
    const other = await tempDir("live-b");
    try {
      await cli(other, "init");
      await cli(other, "add", "slot", "shared", "Int = 1");
      ok(await s.call("kumiki_add", { layer: "slot", name: "shared", body: "Int = 2" }));
      const ops = await cli(other, "patch", "export");
      const file = `${other}/ops.jsonl`;
      writeFileSync(file, ops.stdout);
      await cli(dir!, "patch", "apply", file);
      const viaMcp = ok(await s.call("kumiki_conflicts", {}));
      const viaCli = JSON.parse((await cli(dir!, "conflicts", "--json")).stdout) as {
        conflicts: { id: string }[];
      };
      expect(viaMcp.policy).toBe("strict");
      const ids = (viaMcp.conflicts as { id: string; kind: string }[]).map((c) => c.id);
      expect(ids).toHaveLength(1);
      expect(ids[0]).toMatch(/^name-taken:op_/);
      expect(viaCli.conflicts.map((c) => c.id)).toEqual(ids);
    } finally {
      await dispose(other);
    }
  }, 60_000);

  it("bounds a failure: a 1 MiB selector, name, error code or id gets an answer under 2 KB, quoting a short prefix", async () => {
    const x = "x".repeat(1 << 20);
    for (const [tool, args] of [
      ["kumiki_view", { selector: `slot.${x}` }],
      ["kumiki_view", { selector: x }],
      ["kumiki_add", { layer: "slot", name: x, body: "Int = 0" }],
      ["kumiki_fix", { error_code: x }],
      ["kumiki_history", { qname: x }],
      ["kumiki_refs", { qname: x }],
      ["kumiki_episode", { episode_id: x }],
      ["kumiki_revert", { op_id: x }],
      ["kumiki_add", { layer: "slot", name: "ok", body: "Int = 0", idempotency_key: x }],
    ] as const) {
      const r = (await s.client.callTool({ name: tool, arguments: args as Record<string, unknown> })) as {
        isError?: boolean;
      };
      expect(r.isError).toBe(true);
      // The whole answer, structured content and text item together.
      const bytes = Buffer.byteLength(JSON.stringify(r), "utf8");
      expect(bytes, `${tool} ${Object.keys(args).join(",")}: ${bytes} bytes`).toBeLessThan(2048);
    }
  }, 60_000);
});
