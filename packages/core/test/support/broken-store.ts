/** Test support: the broken programs of the conformance corpus as memory stores, as an agent imports them. */
import fs from "node:fs";
import path from "node:path";
import { type BrokenCase, kumikiShared } from "@kumiki-graph/test-support/corpus";
import { openStore } from "../../src/integrity/checked-store.js";
import { createCheckGate } from "../../src/integrity/gate.js";
import type { CapabilityManifest } from "../../src/lang/stdlib.js";
import { importProgram } from "../../src/project/program.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";

/** The capability manifest a case is checked with (its `caps`), if any. */
export function capsOf(c: BrokenCase): CapabilityManifest | undefined {
  return c.caps === undefined
    ? undefined
    : (JSON.parse(
        fs.readFileSync(path.join(kumikiShared, "examples", c.caps), "utf8"),
      ) as CapabilityManifest);
}

/** A memory store holding `source` as a faithful import, gated by the checker with `caps`. */
export async function brokenStoreOf(source: string, caps: CapabilityManifest | undefined): Promise<Store> {
  let t = 1_780_000_000_000;
  const opened = openStore({
    log: new MemoryOpLog(),
    author: "agent:loop",
    now: () => t++,
    validators: [createCheckGate(caps === undefined ? {} : { capabilities: caps })],
  });
  if (!opened.ok) throw new Error(opened.error.message);
  const r = await importProgram(opened.value, source);
  if (!r.ok) throw new Error(r.error.message);
  return opened.value;
}
