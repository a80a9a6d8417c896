/** Helpers of this package's tests: a store result's value (or a throw that says what refused it), the chunk files of a storage folder. */
import fs from "node:fs";
import path from "node:path";
import type { StoreResult, WriteReceipt } from "@kumiki-graph/core";

export function okValue<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

export async function must(p: Promise<StoreResult<WriteReceipt>>): Promise<WriteReceipt> {
  return okValue(await p);
}

/** Every chunk file (`…/snapshot/<hash>`, `…/incremental/<hash>`) below a storage folder, sorted. */
export function chunkFiles(storage: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/[/\\](snapshot|incremental)[/\\]/.test(p)) out.push(p);
    }
  };
  walk(storage);
  return out.sort();
}
