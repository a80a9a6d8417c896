import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ChangeEvent, Store } from "@kumiki-graph/core";
import { openStore } from "@kumiki-graph/core";
import { afterEach, describe, expect, it } from "vitest";
import { initWorkspace, openWorkspace } from "../src/workspace.js";
import { must, okValue } from "./support.js";

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Two stores on one workspace folder, each with its own op log, storage and lock: two writers. */
async function twoWriters(): Promise<[Store, Store]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-live-"));
  dirs.push(dir);
  const init = await initWorkspace(dir);
  if (!init.ok) throw new Error(init.error.message);
  await init.value.log.close();
  const open = async (author: string) => {
    const ws = await openWorkspace(dir);
    if (!ws.ok) throw new Error(ws.error.message);
    const s = okValue(openStore({ log: ws.value.log, author }));
    stores.push(s);
    return s;
  };
  return [await open("agent:a"), await open("agent:b")];
}

describe("an open store is current", () => {
  it("answers reads from what another writer stored since, and announces it as remote", async () => {
    const [a, b] = await twoWriters();
    const events: ChangeEvent[] = [];
    a.onChange((e) => events.push(e));
    expect(a.view("slot.count").ok).toBe(false);
    const r = await must(b.add({ layer: "slot", name: "count", body: "Int = 0" }));
    // No write of A's in between: the read itself takes the other writer's op in.
    expect(okValue(a.view("slot.count")).text).toBe("slot count : Int = 0\n");
    expect(a.list().ok && okValue(a.list()).map((e) => e.qname)).toEqual(["slot.count"]);
    expect(events).toEqual([{ source: "remote", ops: r.ops }]);
    // Nothing new: no second event.
    a.status();
    expect(events).toHaveLength(1);
  });

  it("judges a write against the graph as it is now", async () => {
    const [a, b] = await twoWriters();
    await must(b.add({ layer: "slot", name: "count", body: "Int = 0" }));
    // A never read: its write must still see B's definition, so the same name is refused
    // (not stored and then lost in the merge).
    const again = await a.add({ layer: "slot", name: "count", body: "Int = 1" });
    expect(again.ok).toBe(false);
    if (!again.ok) expect(again.error.code).toBe("duplicate-name");
    // And a reference to B's definition binds.
    await must(a.add({ layer: "tile", name: "Show", body: "text(count.show)" }));
    expect(okValue(b.refs("slot.count")).referrers.map((x) => x.qname)).toEqual(["tile.Show"]);
  });

  it("interleaved writes from two stores all take effect, and both show one graph", async () => {
    const [a, b] = await twoWriters();
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      writes.push(must(a.add({ layer: "slot", name: `a${i}`, body: `Int = ${i}` })));
      writes.push(must(b.add({ layer: "slot", name: `b${i}`, body: `Int = ${i}` })));
    }
    await Promise.all(writes);
    const names = (s: Store) => okValue(s.list("slot")).map((e) => e.qname);
    expect(names(a)).toHaveLength(20);
    expect(names(a)).toEqual(names(b));
    expect(a.conflicts()).toEqual([]);
  });
});
