// Subscribing to changes: a store tells its listeners about every op it takes in, its own writes
// ({source: "local"}) and what other writers stored ({source: "remote"}: another process, the CLI,
// an MCP server, a sync). An open store takes those in before each read, so a watcher reads.
// Self-checking; run it from the repository root:
//
//   node examples/watch-changes.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";

const kumiki = fileURLToPath(new URL("../packages/cli/bin/kumiki.js", import.meta.url));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-watch-"));
try {
  const made = await initWorkspace(dir);
  if (!made.ok) throw new Error(made.error.message);
  await made.value.log.close();
  const opened = await openWorkspaceStore(dir, { author: "agent:watcher" });
  if (!opened.ok) throw new Error(opened.error.message);
  const { store } = opened.value;
  const seen = [];
  const stop = store.onChange((e) => {
    for (const op of e.ops)
      seen.push(`${e.source} ${op.op} ${op.layer ?? ""}.${op.name ?? ""} by ${op.author}`);
  });
  try {
    await store.add({ layer: "slot", name: "mine", body: ": Int = 0" });
    // Another process writes: the kumiki CLI, as an agent would run it.
    execFileSync(process.execPath, [
      kumiki,
      "--store",
      dir,
      "--author",
      "agent:cli",
      "add",
      "slot",
      "theirs",
      ": Int = 1",
    ]);
    store.status(); // any read takes in what others stored, and tells the listeners
    console.log(seen.join("\n"));
    assert.deepEqual(seen, ["local add slot.mine by agent:watcher", "remote add slot.theirs by agent:cli"]);
  } finally {
    stop();
    await opened.value.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
