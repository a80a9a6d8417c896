/**
 * A store with change listeners hears another process's writes as they are stored, with no read of
 * its own: a real second process (node, the package's built entry) adds a definition to the same
 * workspace, and the open store's listener is told of it as a remote change. Without listeners
 * nothing is watched (the store learns at its next read, as before).
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { ChangeEvent } from "@kumiki-graph/core";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";

const run = promisify(execFile);
const dirs: string[] = [];
const opened: WorkspaceStore[] = [];
afterEach(async () => {
  for (const w of opened.splice(0)) await w.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Adds `slot <name>` to the workspace at `dir` from a process of its own. */
async function addElsewhere(dir: string, name: string): Promise<void> {
  const entry = new URL("../dist/index.js", import.meta.url).href;
  const script = `import { openWorkspaceStore } from ${JSON.stringify(entry)};
const ws = await openWorkspaceStore(${JSON.stringify(dir)}, { author: "agent:other" });
if (!ws.ok) throw new Error(ws.error.message);
const r = await ws.value.store.add({ layer: "slot", name: ${JSON.stringify(name)}, body: ": Int = 1" });
if (!r.ok) throw new Error(r.error.message);
await ws.value.close();`;
  await run(process.execPath, ["--input-type=module", "-e", script]);
}

describe("change listeners and another process's writes", () => {
  it("are told of them as they are stored, without a read", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-watch-"));
    dirs.push(dir);
    const r = await openWorkspaceStore(dir, { create: true, author: "agent:me" });
    if (!r.ok) throw new Error(r.error.message);
    opened.push(r.value);
    const events: ChangeEvent[] = [];
    const stop = r.value.store.onChange((e) => events.push(e));
    await addElsewhere(dir, "fromAfar");
    // Bounded: the watch answers in milliseconds; 10 s only keeps a loaded machine from failing.
    for (let i = 0; i < 1000 && events.length === 0; i++) await new Promise((res) => setTimeout(res, 10));
    expect(events.map((e) => [e.source, e.ops.map((o) => (o as { name?: string }).name)])).toEqual([
      ["remote", ["fromAfar"]],
    ]);
    stop();
    // No listener: no watch; the next read takes the write in (and a listener added later hears
    // only what comes after it).
    await addElsewhere(dir, "unwatched");
    await new Promise((res) => setTimeout(res, 200));
    expect(events).toHaveLength(1);
    const view = r.value.store.view("slot.unwatched");
    expect(view.ok).toBe(true);
  }, 60_000);
});
