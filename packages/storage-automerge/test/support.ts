/** Helpers of this package's tests: a store result's value, or a throw that says what refused it. */
import type { StoreResult, WriteReceipt } from "@kumiki-graph/core";

export function okValue<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

export async function must(p: Promise<StoreResult<WriteReceipt>>): Promise<WriteReceipt> {
  return okValue(await p);
}
