import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * The suite in four projects, each file in one, by a rule read off the file itself (so a new test
 * lands in the right one without a list to keep):
 *
 * - `postgres`: a file named for PostgreSQL (`*postgres*.test.ts`): needs the machine's server.
 * - `e2e`: starts processes or builds — named `.e2e.`, an API report or the pack test, or it spawns
 *   a process (`node:child_process`, the `kumiki` bin, an MCP client over stdio, the test kits
 *   that run servers as processes).
 * - `corpus`: walks the whole conformance corpus in ../shared (every program, every broken case).
 * - `unit`: everything else: in this process, `npm run test:unit`, well under a minute.
 *
 * `npm test` runs all four.
 */
function projectOf(file: string): "postgres" | "e2e" | "corpus" | "unit" {
  const base = path.basename(file);
  if (base.includes("postgres")) return "postgres";
  if (/\.e2e\.test\.ts$|^api-report\.test\.ts$|^pack\.test\.ts$/.test(base)) return "e2e";
  const text = readFileSync(file, "utf8");
  if (
    /node:child_process|\bBIN\b|bin\/kumiki|runBin|startBin|StdioClientTransport|support\/(session|processes)\b|fixtures\/children/.test(
      text,
    )
  )
    return "e2e";
  if (/corpusPrograms\(|brokenCases\(|conformanceRoot|kumikiShared, "examples"/.test(text)) return "corpus";
  return "unit";
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts") && !e.parentPath.includes("node_modules"))
    .map((e) => path.relative(import.meta.dirname, path.join(e.parentPath, e.name)));
}

const files = [
  ...readdirSync(path.join(import.meta.dirname, "packages")).flatMap((p) => {
    try {
      return testFiles(path.join(import.meta.dirname, "packages", p, "test"));
    } catch {
      return [];
    }
  }),
  ...testFiles(path.join(import.meta.dirname, "test")),
];
const projects = {
  postgres: [] as string[],
  e2e: [] as string[],
  corpus: [] as string[],
  unit: [] as string[],
};
for (const f of files) projects[projectOf(path.join(import.meta.dirname, f))].push(f);

export default defineConfig({
  test: {
    // No `include` here: each project's list is its own (an inherited one would be added to it).
    // Two cores here and in CI: more workers only thrash.
    maxWorkers: 2,
    // A `kumiki` call starts the workspace's daemon by default: a test (and what it spawns with
    // this environment) runs each call in its own process unless it turns the daemon on itself.
    env: { KUMIKI_DAEMON: "off" },
    // One line when ../shared/kumiki is absent (the tests that read it are skipped).
    globalSetup: ["test/shared-notice.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: Object.entries(projects).map(([name, include]) => ({
      extends: true,
      // The unit files share their workers' module cache (no file sets process-wide state that
      // another reads): loading core's sources once per worker, not once per file, is most of
      // what makes them fast.
      test: { name, include, ...(name === "unit" ? { isolate: false } : {}) },
    })),
  },
});
