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
