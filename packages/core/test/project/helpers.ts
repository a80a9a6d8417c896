import { openStore } from "../../src/integrity/checked-store.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoreResult } from "../../src/store/result.js";
import type { Store } from "../../src/store/store.js";

/**
 * A store over a fresh in-memory log, with a deterministic clock. Without `checked`, the write gate
 * is the built-in one only (parse, references): what a projection needs, and fast.
 */
export function memoryStore(author = "agent:test", checked = false): Store {
  let clock = 1_780_000_000_000;
  const r = openStore({
    log: new MemoryOpLog(),
    author,
    now: () => clock++,
    ...(checked ? {} : { validators: [] }),
  });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** The value of a result, or a thrown error naming the rejection. */
export function must<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

export { get, put, snapshot, TempDirs } from "@kumiki-graph/test-support/files";
