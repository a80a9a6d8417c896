// Two agents editing one graph, and converging: first in one workspace folder (two stores, as two
// processes would open it: each sees the other's writes on its next read), then through a sync
// server this script starts on 127.0.0.1 (a clone in a second folder, concurrent edits on both
// sides, one sync each, identical programs). Self-checking; run it from the repository root:
//
//   node examples/two-agents.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { exportProgram } from "@kumiki-graph/core";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { cloneWorkspace, startSyncServer, syncWorkspace } from "@kumiki-graph/sync-server";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-two-agents-"));
const must = (r) => {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
};
/** Opens the workspace at `dir` as `author`, runs `fn` with its store, closes it. */
async function as(dir, author, fn) {
  const opened = must(await openWorkspaceStore(dir, { author }));
  try {
    return await fn(opened.store);
  } finally {
    await opened.close();
  }
}

// 1. One folder, two agents.
const a = path.join(root, "a");
const made = must(await initWorkspace(a));
await made.log.close();
const one = must(await openWorkspaceStore(a, { author: "agent:one" }));
const two = must(await openWorkspaceStore(a, { author: "agent:two" }));
must(await one.store.add({ layer: "slot", name: "count", body: ": Int = 0" }));
// Agent two's store is already open: its next read takes in what agent one stored.
assert.equal(must(two.store.view("slot.count")).text, "slot count : Int = 0\n");
must(await two.store.add({ layer: "slot", name: "step", body: ": Int = 1" }));
must(await one.store.replace({ qname: "slot.count", body: ": Int = 10" }));
assert.equal(exportProgram(one.store), exportProgram(two.store));
console.log(`one folder: both agents see ${one.store.status().definitions} definitions, the same program`);
await one.close();
await two.close();

// 2. Through a sync server on this machine.
const server = must(await startSyncServer({ dataDir: path.join(root, "server") }));
try {
  const graph = made.config.graph;
  must(await syncWorkspace(a, { url: server.url, author: "agent:one" }));
  const b = path.join(root, "b");
  must(await cloneWorkspace(`${server.url}/${graph}`, b));
  // Concurrent edits on both sides, neither having seen the other's.
  await as(a, "agent:one", async (s) =>
    must(await s.add({ layer: "slot", name: "fromA", body: ": Int = 1" })),
  );
  await as(b, "agent:three", async (s) =>
    must(await s.add({ layer: "slot", name: "fromB", body: ": Int = 2" })),
  );
  for (const dir of [a, b, a]) must(await syncWorkspace(dir, { url: server.url, author: "agent:sync" }));
  const programs = await Promise.all(
    [a, b].map((dir) => as(dir, "agent:reader", async (s) => exportProgram(s))),
  );
  assert.equal(programs[0], programs[1]);
  assert.match(programs[0], /slot fromA[\s\S]*slot fromB|slot fromB[\s\S]*slot fromA/);
  console.log(
    `through ${server.url}: both workspaces hold the same ${programs[0].split("\n").filter((l) => l.startsWith("slot")).length} slots`,
  );
} finally {
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
}
