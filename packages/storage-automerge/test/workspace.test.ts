import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import { makeDirs } from "@kumiki-graph/core";
import { chunkFiles } from "@kumiki-graph/test-support/files";
import { afterEach, describe, expect, it } from "vitest";
import { OpLogFile } from "../src/op-log-file.js";
import { initWorkspace, openWorkspace, type Workspace } from "../src/workspace.js";
import { findWorkspace, WORKSPACE_FORMAT, workspacePaths } from "../src/workspace-layout.js";
import { opLogIds } from "./fixtures/children.js";

const dirs: string[] = [];
const open: Workspace[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-ws-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const w of open.splice(0)) await w.log.close().catch(() => undefined);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function init(dir: string): Promise<Workspace> {
  const r = await initWorkspace(dir);
  if (!r.ok) throw new Error(r.error.message);
  open.push(r.value);
  return r.value;
}
async function reopen(dir: string): Promise<Workspace> {
  const r = await openWorkspace(dir);
  if (!r.ok) throw new Error(r.error.message);
  open.push(r.value);
  return r.value;
}
const op = (id: string, extra: Record<string, unknown> = {}) => ({ "op-id": id, op: "add", ...extra });

describe("initWorkspace", () => {
  it("creates .kumiki with the storage, config.json, an empty op-log.jsonl and a .gitignore", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    expect(ws.paths).toEqual(workspacePaths(dir));
    const config = JSON.parse(fs.readFileSync(ws.paths.config, "utf8"));
    expect(config).toEqual({ format: WORKSPACE_FORMAT, graph: ws.log.url });
    expect(fs.readFileSync(ws.paths.opLog, "utf8")).toBe("");
    expect(fs.statSync(ws.paths.storage).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(ws.paths.dir, ".gitignore"), "utf8")).toContain("op-log.jsonl.state");
    // Written atomically: no temporary file left beside it.
    expect(fs.readdirSync(ws.paths.dir).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("refuses a folder that is already a workspace", async () => {
    const dir = tempDir();
    await init(dir);
    const again = await initWorkspace(dir);
    expect(again.ok).toBe(false);
    if (!again.ok) expect(again.error.code).toBe("workspace-exists");
  });

  it("makes missing parents one level at a time, and fails at once where a parent refuses children", async () => {
    const dir = tempDir();
    const deep = path.join(dir, "a", "b", "c");
    expect(makeDirs(deep)).toBe(path.join(dir, "a"));
    expect(fs.statSync(deep).isDirectory()).toBe(true);
    expect(makeDirs(deep)).toBeUndefined();
    // /proc exists and refuses children with ENOENT: Node's recursive mkdir spun there forever.
    if (process.platform === "linux" && fs.existsSync("/proc/self")) {
      expect(() => makeDirs("/proc/kumiki-test/x")).toThrow(/ENOENT/);
      const r = await initWorkspace("/proc/kumiki-test");
      expect(!r.ok && r.error.code).toBe("storage-failed");
    }
  });

  it("of two concurrent inits in one folder, exactly one creates the graph", async () => {
    const dir = tempDir();
    const results = await Promise.all([initWorkspace(dir), initWorkspace(dir)]);
    for (const r of results) if (r.ok) open.push(r.value);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.error.code)).toEqual(["workspace-exists"]);
  });
});

describe("finding and opening a workspace", () => {
  it("walks up from a nested directory, like git", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    await ws.log.append([op("op_1")]);
    await ws.log.close();
    const nested = path.join(dir, "src", "deep");
    fs.mkdirSync(nested, { recursive: true });
    const found = findWorkspace(nested);
    expect(found.ok && found.value.root).toBe(path.resolve(dir));
    const again = await openWorkspace(nested, { walkUp: true });
    if (!again.ok) throw new Error(again.error.message);
    expect(again.value.log.all()).toEqual([op("op_1")]);
    await again.value.close();
  });

  it("opens only the folder it is given unless asked to walk up, and names the workspace above", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    await ws.close();
    const nested = path.join(dir, "src");
    fs.mkdirSync(nested);
    const r = await openWorkspace(nested);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("no-workspace");
      expect(r.error.details).toMatchObject({ from: path.resolve(nested), above: path.resolve(dir) });
      expect(r.error.message).toBe(
        `${path.resolve(nested)} is not a workspace; ${path.resolve(dir)}, above it, is: open that folder, or open with walkUp`,
      );
    }
  });

  it("reports where it looked when there is no workspace", async () => {
    const dir = tempDir();
    const r = await openWorkspace(dir);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("no-workspace");
      expect(r.error.message).toBe(`no workspace at or above ${path.resolve(dir)}: initWorkspace makes one`);
    }
  });

  it("refuses a corrupt, incomplete or newer config with a coded error", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    await ws.log.close();
    const cases: [string | undefined, string][] = [
      ["{ not json", "config-corrupt"],
      ["[]", "config-corrupt"],
      [JSON.stringify({ format: 1 }), "config-corrupt"],
      [JSON.stringify({ format: "1", graph: ws.log.url }), "config-corrupt"],
      [JSON.stringify({ format: 1, graph: "http://example" }), "config-corrupt"],
      [JSON.stringify({ format: 99, graph: ws.log.url }), "config-unsupported"],
      [undefined, "config-corrupt"],
    ];
    for (const [text, code] of cases) {
      if (text === undefined) fs.rmSync(ws.paths.config);
      else fs.writeFileSync(ws.paths.config, text);
      const r = await openWorkspace(dir);
      expect(r.ok, text).toBe(false);
      if (!r.ok) {
        expect(r.error.code, text).toBe(code);
        expect(r.error.message).toContain(ws.paths.config);
      }
    }
  });

  it("reports a graph missing from the storage, and opens one whose every chunk is damaged read-only, without hanging", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    await ws.log.append([op("op_1")]);
    await ws.log.close();
    const other = tempDir();
    const ws2 = await init(other);
    await ws2.log.close();
    fs.copyFileSync(ws2.paths.config, ws.paths.config);
    let r = await openWorkspace(dir);
    expect(!r.ok && r.error.code).toBe("store-missing");

    const chunks = chunkFiles(ws2.paths.storage);
    expect(chunks.length).toBeGreaterThan(0);
    for (const c of chunks) fs.writeFileSync(c, "garbage, not automerge");
    r = await openWorkspace(other);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.log.damage?.chunks.map((c) => c.reason)).toEqual(
      chunks.map(() => "not an Automerge chunk at byte 0 (bad magic bytes)"),
    );
    await expect(r.value.log.append([op("op_2")])).rejects.toThrow(/damaged/);
    await r.value.log.close();
  });
});

describe("op-log.jsonl", () => {
  it("is complete and sorted by op-id after every append and after close", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    const file = ws.paths.opLog;
    await ws.log.append([op("op_b")]);
    expect(opLogIds(file)).toEqual(["op_b"]);
    await ws.log.append([op("op_d"), op("op_c")]);
    expect(opLogIds(file)).toEqual(["op_b", "op_c", "op_d"]);
    await ws.log.append([op("op_a", { body: "x" })]);
    expect(opLogIds(file)).toEqual(["op_a", "op_b", "op_c", "op_d"]);
    expect(fs.readFileSync(file, "utf8").split("\n")[0]).toBe(JSON.stringify(op("op_a", { body: "x" })));
    await ws.log.close();
    expect(opLogIds(file)).toEqual(["op_a", "op_b", "op_c", "op_d"]);
  });

  it("takes in a peer's ops by appending them when they sort after its own, and stays complete and sorted when they do not", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    await ws.log.append([op("op_b")]);
    await ws.log.close();
    // A replica of the same graph elsewhere (a sync peer), writing ops of its own.
    const peerDir = tempDir();
    fs.cpSync(dir, peerDir, { recursive: true });
    const peer = await reopen(peerDir);
    const deliver = async (ids: string[]) => {
      await peer.log.append(ids.map((id) => op(id)));
      const here = await reopen(dir);
      const changes = A.getChanges(here.log.handle.doc(), peer.log.handle.doc());
      here.log.handle.update((d) => A.applyChanges(d, changes)[0]);
      expect(
        here.log
          .all()
          .map((o) => o["op-id"])
          .sort(),
      ).toEqual(
        peer.log
          .all()
          .map((o) => o["op-id"])
          .sort(),
      );
      await here.log.close();
    };
    const file = workspacePaths(dir).opLog;
    const inode = () => fs.statSync(file).ino;
    const first = inode();
    await deliver(["op_c", "op_d"]);
    // Appended in place: the same file, now with the peer's ops after its own.
    expect(inode()).toBe(first);
    expect(opLogIds(file)).toEqual(["op_b", "op_c", "op_d"]);
    // An op that sorts before what the file holds: the file is written again, sorted.
    await deliver(["op_a"]);
    expect(inode()).not.toBe(first);
    expect(opLogIds(file)).toEqual(["op_a", "op_b", "op_c", "op_d"]);
  });

  it("appends lines when it can and rewrites (atomically) only when it must", async () => {
    const dir = tempDir();
    const file = path.join(dir, "log.jsonl");
    const f = new OpLogFile(file);
    expect(f.update([], ["h0"])).toBe("rewritten");
    expect(f.update([], ["h0"])).toBe("unchanged");
    const a = op("op_a");
    const b = op("op_b");
    const c = op("op_0");
    expect(f.update([a], ["h1"], [a], ["h0"])).toBe("appended");
    expect(f.update([a, b], ["h2"], [b], ["h1"])).toBe("appended");
    // Sorts before the last line: rewrite.
    expect(f.update([a, b, c], ["h3"], [c], ["h2"])).toBe("rewritten");
    expect(opLogIds(file)).toEqual(["op_0", "op_a", "op_b"]);
    // Not on top of the state the file holds (ops from a peer came in between): rewrite.
    const d = op("op_z");
    expect(f.update([a, b, c, d], ["h5"], [d], ["h4"])).toBe("rewritten");
    // Edited behind our back: rewrite; a torn sidecar: rewrite.
    fs.appendFileSync(file, "junk\n");
    expect(f.update([a, b, c, d], ["h5"])).toBe("rewritten");
    fs.writeFileSync(f.statePath, '{"v":2,"hea');
    expect(new OpLogFile(file).update([a, b, c, d], ["h5"])).toBe("rewritten");
    expect(new OpLogFile(file).update([a, b, c, d], ["h5"])).toBe("unchanged");
    expect(opLogIds(file)).toEqual(["op_0", "op_a", "op_b", "op_z"]);
    expect(fs.readdirSync(dir).sort()).toEqual(["log.jsonl", "log.jsonl.state"]);
  });

  it("closing a process that did not see another's last append keeps that append in the file", async () => {
    const dir = tempDir();
    const first = await init(dir);
    await first.log.append([op("op_1")]);
    const second = await reopen(dir);
    await second.log.append([op("op_2")]);
    // `first` never appended after op_2 was written; its close must not rewrite the file without it.
    await first.log.append([]);
    await first.log.close();
    expect(opLogIds(first.paths.opLog)).toEqual(["op_1", "op_2"]);
    await second.log.close();
    expect(opLogIds(first.paths.opLog)).toEqual(["op_1", "op_2"]);
  });

  it("is repaired when deleted or edited: on the next append, or on close", async () => {
    const dir = tempDir();
    const ws = await init(dir);
    await ws.log.append([op("op_1")]);
    fs.rmSync(ws.paths.opLog);
    await ws.log.append([op("op_2")]);
    expect(opLogIds(ws.paths.opLog)).toEqual(["op_1", "op_2"]);
    fs.writeFileSync(ws.paths.opLog, "");
    await ws.log.close();
    expect(opLogIds(ws.paths.opLog)).toEqual(["op_1", "op_2"]);
  });
});
