/**
 * A server's first check goes on from the one the server before it kept: an agent's next session
 * (a new stdio process on the same workspace) does not check every definition again.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { plantInKeptCheck, readKeptCheck } from "@kumiki-graph/test-support/kept-check";
import { afterEach, describe, expect, it } from "vitest";
import { dispose, kumikiBin, ok, serve, tempDir, workspaceFrom } from "./support/session.js";

const exec = promisify(execFile);
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await dispose(d);
});

const PROGRAM = `slot count : Int = 0
slot draft : Text = ""
reducer inc on=ui.click(IncBtn)
    do= count := count + 1
tile IncBtn = button(text="+", onClick=inc)
tile Field = input(bind=draft)
tile Home = page(text(count.show), IncBtn, Field)
tile NotFound = page(text("404"))
app Counter
    caps   = []
    routes = {"/" -> Home, "/404" -> NotFound}
    init   = []
`;

const mcpFile = (dir: string) => path.join(dir, ".kumiki", "cache", "live-check-mcp.jsonl");
const cliFile = (dir: string) => path.join(dir, ".kumiki", "cache", "live-check.jsonl");

/** The CLI in its own process, keeping no check (as `kumiki sync` taking in a peer's ops leaves the graph). */
async function cliUnkept(dir: string, ...args: string[]): Promise<string> {
  const r = await exec(process.execPath, [kumikiBin, "--store", dir, ...args], {
    env: { ...process.env, KUMIKI_AUTHOR: "user:cli", KUMIKI_DAEMON: "off", KUMIKI_CHECK_CACHE: "off" },
  }).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
  return r.stdout;
}

describe("the MCP server keeps its check for the next server on the workspace", () => {
  it("a session's first check goes on from the last server's, past writes made since", {
    timeout: 60_000,
  }, async () => {
    const dir = await tempDir("kept-check");
    dirs.push(dir);
    await workspaceFrom(dir, PROGRAM);
    const first = await serve(dir);
    try {
      ok(await first.call("kumiki_add", { layer: "slot", name: "spare", body: ": Int = 1" }));
    } finally {
      await first.close();
    }
    // Kept as the server closed, in a file of its own (the CLI's is of another stamp).
    const kept = readKeptCheck(mcpFile(dir));
    expect(kept.stamp).toMatch(/^mcp /);
    expect(kept.entries).toHaveLength(1);
    expect(kept.entries[0]!.state.checker.defs).toHaveLength(9);
    expect(existsSync(cliFile(dir))).toBe(false);
    // A finding planted on a definition nothing changes below: shown only by a check that went
    // on from the kept state.
    plantInKeptCheck(mcpFile(dir), "planted");
    // Another writer, keeping no check: a forced remove leaves tile.Field's reference dangling.
    await cliUnkept(dir, "remove", "slot.draft", "--force");
    const full = JSON.parse(await cliUnkept(dir, "check", "--json")) as {
      diagnostics: { message: string }[];
    };
    expect(full.diagnostics.length).toBeGreaterThan(0);
    const second = await serve(dir);
    try {
      const checked = ok(await second.call("kumiki_check", {})) as { diagnostics: { message: string }[] };
      const planted = (d: { message: string }) => d.message === "planted";
      expect(checked.diagnostics.filter(planted)).toHaveLength(1);
      expect(checked.diagnostics.filter((d) => !planted(d)).map((d) => d.message)).toEqual(
        full.diagnostics.map((d) => d.message),
      );
    } finally {
      await second.close();
    }
    // The second server kept its own, of the graph as it closed.
    const after = readKeptCheck(mcpFile(dir));
    expect(after.entries[0]!.state.at).not.toBe(kept.entries[0]!.state.at);
  });
});
