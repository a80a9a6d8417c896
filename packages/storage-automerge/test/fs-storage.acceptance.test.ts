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
import { describe, expect, it } from "vitest";
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
});
