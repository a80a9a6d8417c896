/**
 * docs/architecture.md's "Every file" section is redrawn from the code (scripts/file-table.mjs):
 * every source file of every package, with the first sentence of its doc comment. This holds the
 * doc to the code, row by row (Biome lays the table out, so cells are compared trimmed): a file
 * added, removed or re-described fails here until `node scripts/file-table.mjs --write` is run.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without declarations
import { BEGIN, END, fileTable } from "../scripts/file-table.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The rows of a generated section, each as its trimmed cells, and the package headings. */
function rows(section: string): string[] {
  return section
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("### ") || (l.startsWith("| `") && l.endsWith("|")))
    .map((l) =>
      l.startsWith("###")
        ? l
        : l
            .slice(1, -1)
            .split(/(?<!\\)\|/)
            .map((c) => c.trim())
            .join(" | "),
    );
}

describe("docs/architecture.md, every file", () => {
  it("lists every source file with its doc comment's first sentence, as the code says now", () => {
    const doc = fs.readFileSync(path.join(root, "docs", "architecture.md"), "utf8");
    const a = doc.indexOf(BEGIN as string);
    const b = doc.indexOf(END as string);
    expect(a, "the generated section is missing: node scripts/file-table.mjs --write").toBeGreaterThan(0);
    expect(rows(doc.slice(a, b))).toEqual(rows(fileTable() as string));
  });

  it("describes every file (none without a doc comment)", () => {
    const empty = rows(fileTable() as string).filter((r) => r.endsWith("|") || r.endsWith(" | "));
    expect(empty).toEqual([]);
  });
});
