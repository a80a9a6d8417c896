/**
 * Vitest's global setup: one line, once per run, when the Kumiki reference material beside the
 * repository (../shared/kumiki: the conformance corpus and the spec) is absent, instead of a
 * skipped placeholder in every file whose tests read it (those tests are skipped by name).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { corpusMissingMessage, hasCorpus, kumikiShared } from "@kumiki-graph/test-support/corpus";

/** Vitest runs a global setup once per project (four), in one process: said once for all. */
const SAID = Symbol.for("kumiki.shared-notice");

export default function setup(): void {
  if (hasCorpus && existsSync(join(kumikiShared, "spec", "errors.md"))) return;
  const g = globalThis as { [SAID]?: boolean };
  if (g[SAID] === true) return;
  g[SAID] = true;
  process.stderr.write(`\n${corpusMissingMessage}\n\n`);
}
