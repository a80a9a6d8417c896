/** docs/mcp.md is the reference: it must name every tool, argument, error kind and limit there is. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { CHECK_SCOPES, LIMIT_NAMES, TOOLS, WIRE_ERROR_KINDS } from "../src/index.js";

const doc = readFileSync(path.join(repoRoot, "docs/mcp.md"), "utf8");

describe("docs/mcp.md", () => {
  it("documents every tool with each of its arguments", () => {
    for (const t of TOOLS) {
      const at = doc.indexOf(`### ${t.name}\n`);
      expect(at, t.name).toBeGreaterThan(-1);
      const section = doc.slice(
        at,
        doc.indexOf("\n### ", at + 1) === -1 ? undefined : doc.indexOf("\n### ", at + 1),
      );
      for (const arg of Object.keys(t.input.shape)) expect(section, `${t.name} ${arg}`).toContain(arg);
    }
  });

  it("documents every error kind, limit and check scope", () => {
    // A table row per kind and per limit (the formatter pads the cells).
    const row = (name: string): RegExp => new RegExp(`^\\| \`${name}\` +\\|`, "m");
    for (const k of WIRE_ERROR_KINDS) expect(doc).toMatch(row(k));
    for (const l of LIMIT_NAMES) expect(doc).toMatch(row(l));
    for (const s of CHECK_SCOPES) expect(doc).toContain(`"${s}"`);
  });
});
