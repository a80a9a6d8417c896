import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { FileLock, LockTimeoutError } from "../src/file-lock.js";
import { initWorkspace, openWorkspace } from "../src/workspace.js";
import { acked, assertBuilt, opLogIds, runFixture } from "./fixtures/children.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-mp-"));
  dirs.push(d);
  return d;
}

beforeAll(assertBuilt);
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("several processes writing one workspace", () => {
  it("lose no acknowledged op: all are in a fresh open and in op-log.jsonl", {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    const init = await initWorkspace(dir);
    if (!init.ok) throw new Error(init.error.message);
    await init.value.log.close();

    const workers = ["w1", "w2", "w3", "w4"].map((name) =>
      runFixture("append-worker.mjs", [dir, name, "30"]),
    );
    const exits = await Promise.all(workers.map((w) => w.exited));
    workers.forEach((w, i) => {
      expect(exits[i], w.stderr()).toEqual({ code: 0, signal: null });
      expect(w.lines.at(-1)).toMatch(/^done remote=\d+$/);
    });
    const written = workers.flatMap(acked);
    // 30 appends each, every fifth a bundle of two.
    expect(written).toHaveLength(4 * 36);

    const fileIds = opLogIds(init.value.paths.opLog);
    expect(fileIds).toEqual([...written].sort());

    const reopened = await openWorkspace(dir);
    if (!reopened.ok) throw new Error(reopened.error.message);
    const held = reopened.value.log.all().map((o) => o["op-id"]);
    expect(new Set(held).size).toBe(held.length);
    expect([...held].sort()).toEqual([...written].sort());
    await reopened.value.log.close();
    expect(opLogIds(init.value.paths.opLog)).toEqual([...written].sort());
  });

  it("a process sees the others' ops through onRemote before its next append", {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir();
    const init = await initWorkspace(dir);
    if (!init.ok) throw new Error(init.error.message);
    const log = init.value.log;
    const seen: string[] = [];
    log.onRemote((ops) => seen.push(...ops.map((o) => o["op-id"])));
    const other = runFixture("append-worker.mjs", [dir, "other", "3"]);
    expect((await other.exited).code).toBe(0);
    await log.append([{ "op-id": "op_zzzz_mine" }]);
    expect([...seen].sort()).toEqual([...acked(other)].sort());
    expect(
      log
        .all()
        .map((o) => o["op-id"])
        .sort(),
    ).toEqual([...acked(other), "op_zzzz_mine"].sort());
    await log.close();
    expect(opLogIds(init.value.paths.opLog)).toEqual([...acked(other), "op_zzzz_mine"].sort());
  });
});

describe("FileLock", () => {
  it("breaks a lock whose owner is dead", async () => {
    const dir = tempDir();
    const file = path.join(dir, "lock");
    const dead = runFixture("lock-holder.mjs", [file]);
    await dead.waitFor((l) => l === "held");
    dead.proc.kill("SIGKILL");
    await dead.exited;
    expect(fs.existsSync(file)).toBe(true);
    const lock = new FileLock(file, { timeoutMs: 5_000 });
    await lock.run(() => {
      expect(fs.readFileSync(file, "utf8")).toMatch(new RegExp(`^${process.pid} `));
    });
    expect(fs.existsSync(file)).toBe(false);
  });

  it("waits for a live owner, and times out with a coded error", { timeout: 30_000 }, async () => {
    const dir = tempDir();
    const file = path.join(dir, "lock");
    const holder = runFixture("lock-holder.mjs", [file]);
    await holder.waitFor((l) => l === "held");
    const lock = new FileLock(file, { timeoutMs: 300 });
    await expect(lock.acquire()).rejects.toBeInstanceOf(LockTimeoutError);
    const waiting = new FileLock(file, { timeoutMs: 20_000 }).run(() => "got it");
    holder.proc.stdin!.write("release\n");
    expect(await waiting).toBe("got it");
    await holder.exited;
  });

  it("treats a recycled pid (same pid, other start time) and an old unreadable file as stale", async () => {
    const dir = tempDir();
    const file = path.join(dir, "lock");
    fs.writeFileSync(file, `${process.pid} 1 0123456789abcdef\n`);
    if (fs.existsSync("/proc/self/stat")) {
      await new FileLock(file, { timeoutMs: 2_000 }).run(() => undefined);
      expect(fs.existsSync(file)).toBe(false);
    }
    fs.writeFileSync(file, "");
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(file, past, past);
    await new FileLock(file, { timeoutMs: 2_000, unreadableStaleMs: 1_000 }).run(() => undefined);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("excludes a second instance in the same process, and is shared within one instance", async () => {
    const file = path.join(tempDir(), "lock");
    const a = new FileLock(file);
    const b = new FileLock(file);
    const events: string[] = [];
    await Promise.all([
      a.run(async () => {
        events.push("a+");
        // Nested and concurrent holds of one instance do not wait for each other.
        await Promise.all([a.run(() => events.push("a-nested")), a.run(() => events.push("a-concurrent"))]);
        await new Promise((r) => setTimeout(r, 30));
        events.push("a-");
      }),
      new Promise((r) => setTimeout(r, 5)).then(() =>
        b.run(() => {
          events.push("b");
        }),
      ),
    ]);
    expect(events).toEqual(["a+", "a-nested", "a-concurrent", "a-", "b"]);
    expect(fs.existsSync(file)).toBe(false);
  });
});
