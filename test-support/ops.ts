/** Real ops for tests that need some: written by a store over a memory log, as an agent's writes would be. */
import { createStore, MemoryOpLog, type StoredOp } from "@kumiki-graph/core";

/** `n` valid ops (one `add` each: `slot s<i> = Int = <i>`), written by a store. */
export async function makeOps(n: number): Promise<StoredOp[]> {
  const log = new MemoryOpLog();
  const store = createStore({ log, author: "agent:test" });
  if (!store.ok) throw new Error(store.error.message);
  for (let i = 0; i < n; i++) {
    const r = await store.value.add({ layer: "slot", name: `s${i}`, body: `Int = ${i}` });
    if (!r.ok) throw new Error(r.error.message);
  }
  return [...log.all()];
}
