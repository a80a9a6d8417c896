/**
 * automerge-repo's own storage-adapter acceptance suite, run against the adapter every workspace
 * and the sync server store their chunks in. The suite stores arbitrary bytes under "snapshot"
 * keys, which the adapter's chunk check (on by default) would hold back as damaged Automerge
 * chunks, so the check is off here; chunk-check.test.ts covers it with real chunks.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runStorageAdapterTests } from "@automerge/automerge-repo/helpers/tests/storage-adapter-tests.js";
import type { NodeFSStorageAdapter } from "@automerge/automerge-repo-storage-nodefs";
import { describe, expect, it, vi } from "vitest";
import { DurableFSStorageAdapter } from "../src/fs-storage.js";

runStorageAdapterTests(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-storage-acceptance-"));
  const adapter = new DurableFSStorageAdapter(dir, { verifyChunks: false });
  return {
    adapter,
    teardown: async () => {
      adapter.dispose?.();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}, "DurableFSStorageAdapter");

describe("DurableFSStorageAdapter after dispose", () => {
  it("drops a late save or removal (automerge-repo's timers outlive a close), even with the folder gone", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-storage-disposed-"));
    const adapter = new DurableFSStorageAdapter(dir, { verifyChunks: false });
    try {
      await adapter.save(["doc", "incremental", "a"], new Uint8Array([1, 2, 3]));
      expect(await adapter.load(["doc", "incremental", "a"])).toEqual(new Uint8Array([1, 2, 3]));
      adapter.dispose();
      // The user removed the workspace once it was closed; the Repo's throttled save comes after.
      fs.rmSync(dir, { recursive: true, force: true });
      await adapter.save(["doc", "snapshot", "b"], new Uint8Array([4]));
      await adapter.save(["doc", "sync-state", "peer"], new Uint8Array([5]));
      await adapter.remove(["doc", "incremental", "a"]);
      await adapter.removeRange(["doc"]);
      // Nothing was written back: the folder stays gone.
      expect(fs.existsSync(dir)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drops a save or removal already under way when it is disposed and the folder removed", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-storage-in-flight-"));
    const adapter = new DurableFSStorageAdapter(dir, { verifyChunks: false });
    try {
      await adapter.save(["doc", "incremental", "a"], new Uint8Array([1, 2, 3]));
      // Begun before the close (a compaction's snapshot and removals), finishing after it.
      const late = [
        adapter.save(["doc", "snapshot", "b"], new Uint8Array([4])),
        adapter.remove(["doc", "incremental", "a"]),
        adapter.removeRange(["doc", "sync-state"]),
      ];
      adapter.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      // No rejection (it ended a process that removed a workspace right after syncing it) ...
      await Promise.all(late);
      // ... and nothing written back.
      expect(fs.existsSync(dir)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drops a removal the close overtakes midway, the folder removed before it records the change", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-storage-midway-"));
    const adapter = new DurableFSStorageAdapter(dir, { verifyChunks: false });
    const base = Object.getPrototypeOf(DurableFSStorageAdapter.prototype) as NodeFSStorageAdapter;
    const unlink = base.remove;
    // The trace this comes from: a compaction's removal, its file unlinked, then the close and the
    // folder's removal, then the bump of the generation file (ENOENT, unhandled).
    const spy = vi.spyOn(base, "remove").mockImplementation(async function (this: NodeFSStorageAdapter, key) {
      adapter.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      return unlink.call(this, key);
    });
    try {
      await adapter.save(["doc", "incremental", "a"], new Uint8Array([1, 2, 3]));
      await adapter.remove(["doc", "incremental", "a"]);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(fs.existsSync(dir)).toBe(false);
    } finally {
      spy.mockRestore();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
