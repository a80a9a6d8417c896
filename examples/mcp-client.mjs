// An MCP client (the official SDK's) driving `kumiki mcp serve` over stdio, as an agent host does:
// list the tools, add a definition with an idempotency key, retry it (answered with the first
// receipt, nothing written twice), view it, check. Self-checking; run it from the repository root:
//
//   node examples/mcp-client.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { initWorkspace } from "@kumiki-graph/storage-automerge";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const kumiki = fileURLToPath(new URL("../packages/cli/bin/kumiki.js", import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-mcp-client-"));
const made = await initWorkspace(dir);
if (!made.ok) throw new Error(made.error.message);
await made.value.log.close();

const client = new Client({ name: "kumiki-example", version: "1.0.0" });
await client.connect(
  new StdioClientTransport({ command: process.execPath, args: [kumiki, "mcp", "serve", "--store", dir] }),
);
try {
  const { tools } = await client.listTools();
  console.log(`${tools.length} tools: ${tools.map((t) => t.name).join(", ")}`);

  const add = { layer: "slot", name: "count", body: ": Int = 0", idempotency_key: "add-count-1" };
  const first = await client.callTool({ name: "kumiki_add", arguments: add });
  const retry = await client.callTool({ name: "kumiki_add", arguments: add });
  assert.equal(first.isError, false);
  // The retry is answered with the first call's receipt, and says so.
  assert.deepEqual(retry.structuredContent, { ...first.structuredContent, replayed: true });
  console.log(`kumiki_add, twice with one key: ${JSON.stringify(first.structuredContent.opIds)} both times`);

  const view = await client.callTool({ name: "kumiki_view", arguments: { selector: "slot.count" } });
  // The Kumiki text comes once, as the first text item; the structured result indexes it.
  assert.equal(view.content[0].text, "slot count : Int = 0\n");
  assert.deepEqual(
    view.structuredContent.definitions.map((d) => [d.qname, d.line]),
    [["slot.count", 1]],
  );
  const refused = await client.callTool({
    name: "kumiki_add",
    arguments: { layer: "slot", name: "count", body: ": Int = 1" },
  });
  assert.equal(refused.isError, true);
  console.log(
    `a second add of slot.count: ${refused.structuredContent.error.kind} (${refused.structuredContent.error.code})`,
  );
} finally {
  await client.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
