import {
  type CapabilityManifest,
  createCheckGate,
  importProgram,
  MemoryOpLog,
  openStore,
  type Store,
} from "@kumiki-graph/core";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";

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

/**
 * A workspace holding `text` imported (a list of texts: each imported in turn, for a program larger
 * than one bundle takes), then writes until it holds at least `ops` ops; returns the count.
 */
export async function seedWorkspace(dir: string, text: string | readonly string[], ops = 0): Promise<number> {
  const init = await initWorkspace(dir);
  if (!init.ok) throw new Error(init.error.message);
  await init.value.log.close();
  const ws = await openWorkspaceStore(dir, { author: "agent:seed" });
  if (!ws.ok) throw new Error(ws.error.message);
  try {
    for (const part of typeof text === "string" ? [text] : text) {
      const imported = await importProgram(ws.value.store, part);
      if (!imported.ok) throw new Error(imported.error.message);
    }
    const slots = Array.from({ length: 100 }, (_, i) => `benchSeed${i}`);
    let held = ws.value.store.status().ops;
    if (held < ops) {
      const added = await ws.value.store.apply(
        slots.map((name) => ({ op: "add" as const, layer: "slot" as const, name, body: "Int = 0" })),
      );
      if (!added.ok) throw new Error(added.error.message);
      held += slots.length;
    }
    // Bundles of 100 replaces: one append each, as a multi-definition edit makes them.
    for (let round = 1; held < ops; round++) {
      const items = slots.map((name) => ({
        op: "replace" as const,
        qname: `slot.${name}`,
        body: `Int = ${round}`,
      }));
      const r = await ws.value.store.apply(items);
      if (!r.ok) throw new Error(r.error.message);
      held += items.length;
    }
    return ws.value.store.status().ops;
  } finally {
    await ws.value.close();
  }
}
