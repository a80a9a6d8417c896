/**
 * A log whose lock the file system refuses (a full disk cannot create the lock file): every write
 * is a `storage-failed` refusal naming the error, with nothing written — it was thrown, and the MCP
 * server reported it as a bug of its own ("internal") — while an error that is a bug still throws.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";

/** A memory log whose lock fails with `error` while `failing` says so. */
class LockFailingLog extends MemoryOpLog {
  failing: Error | undefined;
  async exclusive<R>(fn: () => Promise<R>): Promise<R> {
    if (this.failing !== undefined) throw this.failing;
    return fn();
  }
}

function enospc(): Error {
  return Object.assign(new Error("ENOSPC: no space left on device, write"), {
    code: "ENOSPC",
    errno: -28,
    syscall: "write",
  });
}

describe("a write whose lock the file system refuses", () => {
  it("is refused as storage-failed, nothing written, and the next write after the fault works", async () => {
    const log = new LockFailingLog();
    const opened = openStore({ log, author: "agent:a" });
    if (!opened.ok) throw new Error(opened.error.message);
    const store = opened.value;
    log.failing = enospc();
    const refused = await store.add({ layer: "slot", name: "a", body: "Int = 1" });
    expect(refused.ok ? "ok" : `${refused.error.code}: ${refused.error.message}`).toBe(
      "storage-failed: the workspace's lock could not be taken, so nothing was written: ENOSPC: no space left on device, write",
    );
    expect(log.all()).toEqual([]);
    expect(store.status().ops).toBe(0);
    log.failing = undefined;
    expect((await store.add({ layer: "slot", name: "a", body: "Int = 1" })).ok).toBe(true);
    expect(log.all()).toHaveLength(1);
  });

  it("still throws what is not the file system's: a bug stays a bug", async () => {
    const log = new LockFailingLog();
    const opened = openStore({ log, author: "agent:a" });
    if (!opened.ok) throw new Error(opened.error.message);
    log.failing = new TypeError("x is not a function");
    await expect(opened.value.add({ layer: "slot", name: "a", body: "Int = 1" })).rejects.toThrow(TypeError);
  });
});
