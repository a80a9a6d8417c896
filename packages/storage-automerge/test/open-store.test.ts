/**
 * `openWorkspaceStore(dir, { create: true })`: a library's one call to get a closable store for a
 * folder, made there when there is none, never walking up unless asked, never making a workspace
 * over one that does not open.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { WriteValidator } from "@kumiki-graph/core";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";
import { initWorkspace } from "../src/workspace.js";
import { workspacePaths } from "../src/workspace-layout.js";

const dirs: string[] = [];
const opened: WorkspaceStore[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-open-store-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const w of opened.splice(0)) await w.close().catch(() => undefined);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function openCreating(dir: string, walkUp = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, { create: true, walkUp, author: "agent:test" });
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  opened.push(r.value);
  return r.value;
}

/** Every file under `dir` with its bytes, to show that nothing was written. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const p = path.join(dir, f);
    if (fs.statSync(p).isFile()) out[f] = fs.readFileSync(p).toString("base64");
  }
  return out;
}

describe("openWorkspaceStore with create", () => {
  it("makes the workspace (and its folder) the first time, and opens the same graph after", async () => {
    const dir = path.join(tempDir(), "not", "yet");
    const first = await openCreating(dir);
    expect(first.workspace.paths.root).toBe(path.resolve(dir));
    const added = await first.store.add({ layer: "slot", name: "count", body: ": Int = 0" });
    expect(added.ok).toBe(true);
    const graph = first.workspace.config.graph;
    await first.close();
    const second = await openCreating(dir);
    expect(second.workspace.config.graph).toBe(graph);
    const view = second.store.view("slot.count");
    expect(view.ok && view.value.text.trimEnd()).toBe("slot count : Int = 0");
  });

  it("does not walk up into a parent's workspace unless asked: it makes a nested one", async () => {
    const parent = tempDir();
    const made = await initWorkspace(parent);
    if (!made.ok) throw new Error(made.error.message);
    await made.value.close();
    const parentFiles = snapshot(path.join(parent, ".kumiki"));
    const nested = path.join(parent, "sub");
    const inner = await openCreating(nested);
    expect(inner.workspace.paths.root).toBe(path.resolve(nested));
    expect(inner.workspace.config.graph).not.toBe(made.value.config.graph);
    await inner.close();
    expect(snapshot(path.join(parent, ".kumiki"))).toEqual(parentFiles);
    // With walkUp the nearest workspace at or above is opened, and nothing is made.
    const deeper = path.join(parent, "other", "deep");
    fs.mkdirSync(deeper, { recursive: true });
    const up = await openCreating(deeper, true);
    expect(up.workspace.paths.root).toBe(path.resolve(parent));
    expect(fs.existsSync(path.join(deeper, ".kumiki"))).toBe(false);
  });

  it("two opens racing on an empty folder end on one graph", async () => {
    const dir = tempDir();
    const [a, b] = await Promise.all([openCreating(dir), openCreating(dir)]);
    expect(a.workspace.config.graph).toBe(b.workspace.config.graph);
    expect(JSON.parse(fs.readFileSync(workspacePaths(dir).config, "utf8")).graph).toBe(
      a.workspace.config.graph,
    );
  });

  it("never makes a workspace over one that does not open, nor when read-only", async () => {
    const dir = tempDir();
    const made = await initWorkspace(dir);
    if (!made.ok) throw new Error(made.error.message);
    await made.value.close();
    fs.writeFileSync(workspacePaths(dir).config, "{ not json");
    const before = snapshot(dir);
    const r = await openWorkspaceStore(dir, { create: true });
    expect(!r.ok && r.error.code).toBe("config-corrupt");
    expect(snapshot(dir)).toEqual(before);

    const empty = tempDir();
    const ro = await openWorkspaceStore(empty, { create: true, readOnly: true });
    expect(!ro.ok && ro.error.code).toBe("no-workspace");
    expect(fs.readdirSync(empty)).toEqual([]);
  });
});

describe("openWorkspaceStore's validators", () => {
  it("add to the checker's gate; only checker: false drops it", async () => {
    const dir = tempDir();
    const made = await openCreating(dir);
    await made.close();
    // A rule of the tool's own: slot names are lowerCamel.
    const camel: WriteValidator = {
      validate: ({ ops }) =>
        ops.flatMap((o) =>
          o.op === "add" && o.layer === "slot" && !/^[a-z][A-Za-z0-9]*$/.test(o.name)
            ? [{ code: "validation-failed" as const, message: `slot ${o.name} is not lowerCamel` }]
            : [],
        ),
    };
    const open = async (options: { checker?: boolean }) => {
      const r = await openWorkspaceStore(dir, { author: "agent:test", validators: [camel], ...options });
      if (!r.ok) throw new Error(r.error.message);
      opened.push(r.value);
      return r.value;
    };
    const w = await open({});
    // The tool's rule holds…
    const snake = await w.store.add({ layer: "slot", name: "snake_case", body: ": Int = 0" });
    expect(snake.ok ? "stored" : snake.error.message).toContain("not lowerCamel");
    // …and so does the checker's: a type error is refused (was: accepted, the gate replaced).
    const wrong = await w.store.add({ layer: "slot", name: "count", body: ': Int = "zero"' });
    expect(wrong.ok ? "stored" : wrong.error.code).toBe("validation-failed");
    await w.close();
    const without = await open({ checker: false });
    const kept = await without.store.add({ layer: "slot", name: "count", body: ': Int = "zero"' });
    expect(kept.ok).toBe(true);
  });
});

describe("a workspace removed or replaced under an open store", () => {
  it("refuses the store's writes (workspace-replaced) and writes nothing into the new workspace", async () => {
    const dir = tempDir();
    const w = await openCreating(dir);
    expect((await w.store.add({ layer: "slot", name: "before", body: "Int = 1" })).ok).toBe(true);
    // Another agent makes a new graph in the same folder while the store is open.
    fs.rmSync(path.join(dir, ".kumiki"), { recursive: true, force: true });
    const made = await initWorkspace(dir);
    if (!made.ok) throw new Error(made.error.message);
    const graph = made.value.config.graph;
    await made.value.log.close();
    const before = snapshot(path.join(dir, ".kumiki"));
    const r = await w.store.add({ layer: "slot", name: "after", body: "Int = 2" });
    expect(r.ok ? "ok" : r.error.code).toBe("workspace-replaced");
    expect(r.ok ? "" : r.error.message).toContain(`it holds the graph ${graph} now`);
    // And every write after it, said the same way.
    const again = await w.store.add({ layer: "slot", name: "later", body: "Int = 3" });
    expect(again.ok ? "ok" : again.error.code).toBe("workspace-replaced");
    await w.close();
    // automerge-repo's throttled saves come up to 100 ms later: none may land either.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(snapshot(path.join(dir, ".kumiki"))).toEqual(before);
    const reopened = await openCreating(dir);
    expect(reopened.workspace.config.graph).toBe(graph);
    expect(reopened.workspace.log.all()).toHaveLength(0);
  });

  it("refuses the store's writes once the workspace is removed, and does not make its folder again", async () => {
    const dir = tempDir();
    const w = await openCreating(dir);
    expect((await w.store.add({ layer: "slot", name: "before", body: "Int = 1" })).ok).toBe(true);
    fs.rmSync(path.join(dir, ".kumiki"), { recursive: true, force: true });
    const r = await w.store.add({ layer: "slot", name: "after", body: "Int = 2" });
    expect(r.ok ? "ok" : r.error.code).toBe("workspace-replaced");
    expect(r.ok ? "" : r.error.message).toContain("was removed");
    await w.close();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(fs.existsSync(path.join(dir, ".kumiki"))).toBe(false);
  });
});
