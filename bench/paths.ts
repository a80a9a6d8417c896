import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file compiles to bench/dist/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A file of the conformance corpus (../shared/kumiki/examples), or undefined when it is absent. */
export function corpusFile(id: string): string | undefined {
  const p = join(repoRoot, "../shared/kumiki/examples", id);
  return existsSync(p) ? p : undefined;
}
