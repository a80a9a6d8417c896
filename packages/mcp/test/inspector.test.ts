/**
 * An independent client: the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, a pinned
 * devDependency) drives `kumiki mcp serve` over stdio, one process per call, as a person debugging
 * a server would: list the tools, add, view, a refused write, and the resources.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dispose, kumikiBin, tempDir, workspaceFrom } from "./support/session.js";

const require = createRequire(import.meta.url);
const inspector = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/inspector-cli/package.json")),
  "build/index.js",
);

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

function inspect(dir: string, args: readonly string[]): Record<string, unknown> {
  const r = spawnSync(
    process.execPath,
    [inspector, process.execPath, kumikiBin, "mcp", "serve", "--store", dir, ...args],
    { encoding: "utf8", timeout: 60_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe("the MCP Inspector CLI against kumiki mcp serve", () => {
  it("lists the tools, adds, views, is refused by name, and reads the resources", async () => {
    const dir = await tempDir("inspector");
    dirs.push(dir);
    await workspaceFrom(dir, "");
    const listed = inspect(dir, ["--method", "tools/list"]) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toContain("kumiki_fix_apply");
    expect(listed.tools).toHaveLength(16);
    const add = ["--method", "tools/call", "--tool-name", "kumiki_add"];
    const added = inspect(dir, [...add, "--tool-arg", "layer=slot", "name=count", "body=: Int = 0"]);
    expect(added.isError).toBe(false);
    expect((added.structuredContent as { opIds: string[] }).opIds[0]).toMatch(/^op_/);
    const viewed = inspect(dir, [
      "--method",
      "tools/call",
      "--tool-name",
      "kumiki_view",
      "--tool-arg",
      "selector=slot.count",
    ]);
    // The Kumiki text leads, once; the structured result says where each definition starts in it.
    expect((viewed.content as { text: string }[])[0]!.text).toBe("slot count : Int = 0\n");
    expect(viewed.structuredContent).toEqual({
      definitions: [{ qname: "slot.count", def: expect.stringMatching(/^def_/), line: 1 }],
    });
    const again = inspect(dir, [...add, "--tool-arg", "layer=slot", "name=count", "body=: Int = 1"]);
    expect(again.isError).toBe(true);
    expect((again.structuredContent as { error: { code: string } }).error.code).toBe("duplicate-name");
    const resources = inspect(dir, ["--method", "resources/list"]) as { resources: { uri: string }[] };
    expect(resources.resources.map((r) => r.uri)).toEqual([
      "kumiki://limits",
      "kumiki://conflicts",
      "kumiki://schemas",
    ]);
    const schemas = inspect(dir, ["--method", "resources/read", "--uri", "kumiki://schemas"]) as {
      contents: { text: string }[];
    };
    expect(Object.keys(JSON.parse(schemas.contents[0]!.text).results)).toContain("kumiki_add");
  }, 120_000);
});
