import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file lives at packages/core/test/support/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The shared Kumiki reference material beside the repository (../shared/kumiki). A fresh clone
 * outside this workplace has none; tests that need it are skipped, and the run says so once
 * (test/shared-notice.ts, with {@link corpusMissingMessage}).
 */
export const kumikiShared = resolve(repoRoot, "../shared/kumiki");

/** True when ../shared/kumiki/examples is present. */
export const hasCorpus = existsSync(join(kumikiShared, "examples"));

/** What a run says once when ../shared/kumiki is absent. */
export const corpusMissingMessage = `the Kumiki conformance corpus and spec were not found at ${kumikiShared} (they live beside the repository in this workplace): every test that reads them is skipped`;

/** One example program of the conformance corpus. */
export interface CorpusProgram {
  /** Path relative to ../shared/kumiki/examples, e.g. `apps/02-todomvc/app.kumiki`. */
  readonly id: string;
  readonly path: string;
  readonly source: string;
}

/** Every .kumiki program under ../shared/kumiki/examples (apps/ and features/), sorted by id. */
export function corpusPrograms(): CorpusProgram[] {
  if (!hasCorpus) return [];
  const root = join(kumikiShared, "examples");
  const out: CorpusProgram[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith(".kumiki"))
        out.push({ id: relative(root, p), path: p, source: readFileSync(p, "utf8") });
    }
  };
  walk(root);
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** One corpus program by id (`apps/02-todomvc/app.kumiki`); undefined when the corpus is absent. */
export function corpusProgram(id: string): CorpusProgram | undefined {
  if (!hasCorpus) return undefined;
  const path = join(kumikiShared, "examples", id);
  return { id, path, source: readFileSync(path, "utf8") };
}

/** ../shared/kumiki/conformance: example programs each with one injected mistake. */
export const conformanceRoot = join(kumikiShared, "conformance");

/** True when the conformance corpus (its expected.json) is present. */
export const hasConformance = existsSync(join(conformanceRoot, "expected.json"));

/** One broken program of the conformance corpus, as expected.json lists it. */
export interface BrokenCase {
  /** File name in {@link conformanceRoot}. */
  readonly file: string;
  /** The kind of mistake injected (`misspell-ref`, `duplicate-def`, …). */
  readonly kind: string;
  /** The program it was made from (relative to ../shared/kumiki/examples). */
  readonly base: string;
  /** A capability manifest (relative to ../shared/kumiki/examples) the case is checked with. */
  readonly caps?: string;
}

/** Every broken program of the conformance corpus (the unmutated `none` cases left out). */
export function brokenCases(): BrokenCase[] {
  if (!hasConformance) return [];
  const { cases } = JSON.parse(readFileSync(join(conformanceRoot, "expected.json"), "utf8")) as {
    cases: BrokenCase[];
  };
  return cases.filter((c) => c.kind !== "none");
}
