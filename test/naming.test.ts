/**
 * One naming rule for property tests: a test file that runs fast-check properties has `.property.`
 * in its name (`split.property.test.ts`, `daemon.property.e2e.test.ts`), and a file so named runs
 * one. A newcomer finds every property of the suite with `ls **∕*.property.*`; this keeps it true.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "..");

function testFiles(): string[] {
  const dirs = [
    ...readdirSync(path.join(root, "packages")).map((p) => path.join(root, "packages", p, "test")),
    path.join(root, "test"),
  ];
  return dirs.flatMap((dir) => {
    try {
      return readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith(".test.ts") && !e.parentPath.includes("node_modules"))
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
    } catch {
      return [];
    }
  });
}

describe("property test files", () => {
  it("are the test files that run fast-check, named .property.", () => {
    const files = testFiles();
    expect(files.length).toBeGreaterThan(100);
    const runsProperties = (f: string) =>
      /^import [^;]*from "fast-check";/m.test(readFileSync(path.join(root, f), "utf8"));
    const misnamed = files.filter((f) => runsProperties(f) !== path.basename(f).includes(".property."));
    expect(
      misnamed,
      "rename: a file with fast-check properties is *.property.test.ts, and only such a file",
    ).toEqual([]);
  });
});
