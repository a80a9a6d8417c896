/**
 * automerge-repo's own storage-adapter acceptance suite, run against the adapter every workspace
 * and the sync server store their chunks in. The suite stores arbitrary bytes under "snapshot"
 * keys, which the adapter's chunk check (on by default) would hold back as damaged Automerge
 * chunks, so the check is off here; chunk-check.property.test.ts covers it with real chunks.
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
  /**
   * An adapter over a fresh folder holding one chunk, for `fn`; the folder is removed after. Each
   * test ends with it gone and checks that nothing made it again.
   */
  async function withChunk(
    fn: (adapter: DurableFSStorageAdapter, dir: string) => Promise<void>,
  ): Promise<void> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-storage-disposed-"));
    const adapter = new DurableFSStorageAdapter(dir, { verifyChunks: false });
    try {
      await adapter.save(["doc", "incremental", "a"], new Uint8Array([1, 2, 3]));
      await fn(adapter, dir);
      expect(fs.existsSync(dir)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it("drops a late save or removal (automerge-repo's timers outlive a close), even with the folder gone", async () => {
    await withChunk(async (adapter, dir) => {
      expect(await adapter.load(["doc", "incremental", "a"])).toEqual(new Uint8Array([1, 2, 3]));
      adapter.dispose();
      // The user removed the workspace once it was closed; the Repo's throttled save comes after.
      fs.rmSync(dir, { recursive: true, force: true });
      await adapter.save(["doc", "snapshot", "b"], new Uint8Array([4]));
      await adapter.save(["doc", "sync-state", "peer"], new Uint8Array([5]));
      await adapter.remove(["doc", "incremental", "a"]);
      await adapter.removeRange(["doc"]);
    });
  });

  it("drops a save or removal already under way when it is disposed and the folder removed", async () => {
    await withChunk(async (adapter, dir) => {
      // Begun before the close (a compaction's snapshot and removals), finishing after it.
      const late = [
        adapter.save(["doc", "snapshot", "b"], new Uint8Array([4])),
        adapter.remove(["doc", "incremental", "a"]),
        adapter.removeRange(["doc", "sync-state"]),
      ];
      adapter.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      // No rejection: it ended a process that removed a workspace right after syncing it.
      await Promise.all(late);
    });
  });

  it("drops a removal the close overtakes midway, the folder removed before it records the change", async () => {
    const base = Object.getPrototypeOf(DurableFSStorageAdapter.prototype) as NodeFSStorageAdapter;
    const unlink = base.remove;
    await withChunk(async (adapter, dir) => {
      // The trace this comes from: a compaction's removal, its file unlinked, then the close and
      // the folder's removal, then the bump of the generation file (ENOENT, unhandled).
      const spy = vi.spyOn(base, "remove").mockImplementation(async function (
        this: NodeFSStorageAdapter,
        key,
      ) {
        adapter.dispose();
        fs.rmSync(dir, { recursive: true, force: true });
        return unlink.call(this, key);
      });
      try {
        await adapter.remove(["doc", "incremental", "a"]);
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
    });
  });
});
