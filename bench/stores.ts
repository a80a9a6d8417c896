import {
  type CapabilityManifest,
  createCheckGate,
  importProgram,
  MemoryOpLog,
  openStore,
  type Store,
} from "@kumiki-graph/core";

/**
 * A memory store holding `source` as a faithful import (a program with errors included), gated by
 * the checker with `caps`: what the benches that work on a whole program start from.
 */
export async function importedStore(source: string, caps?: CapabilityManifest): Promise<Store> {
  let t = 1_780_000_000_000;
  const opened = openStore({
    log: new MemoryOpLog(),
    author: "agent:bench",
    now: () => t++,
    validators: [createCheckGate(caps === undefined ? {} : { capabilities: caps })],
  });
  if (!opened.ok) throw new Error(opened.error.message);
  const r = await importProgram(opened.value, source);
  if (!r.ok) throw new Error(r.error.message);
  return opened.value;
}
