/**
 * Core's one-way stack (docs/architecture.md, "Layers") is enforced by Biome's noRestrictedImports,
 * one override per folder in biome.json, run by `npm test`. This proves the rule bites: probe files
 * with an import up the stack (or across siblings) are refused, imports down the stack pass. The
 * probes are linted in a temporary copy of the layout with the repository's biome.json, so nothing
 * is written into the source tree.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const biome = path.join(root, "node_modules", ".bin", "biome");

/** The stack, bottom first; folders in one inner list are siblings (neither imports the other). */
const STACK = [
  ["lang"],
  ["ops"],
  ["graph"],
  ["check", "store"],
  ["integrity"],
  ["fix", "project", "workspace"],
];
const rank = new Map(STACK.flatMap((level, i) => level.map((f) => [f, i] as const)));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-layers-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const config = JSON.parse(fs.readFileSync(path.join(root, "biome.json"), "utf8")) as Record<string, unknown>;
delete config.vcs; // the copy is not a git checkout
delete config.$schema;
fs.writeFileSync(path.join(tmp, "biome.json"), JSON.stringify(config));

interface Finding {
  readonly path: string;
  readonly category: string;
  readonly message: string;
}

/** Lints `files` (path under `packages/<pkg>/src` → text) and returns the layer findings. */
function lint(files: Record<string, string>, pkg = "core"): Finding[] {
  const paths = Object.entries(files).map(([p, text]) => {
    const full = path.join(tmp, "packages", pkg, "src", p);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, text);
    return path.relative(tmp, full);
  });
  let out: string;
  try {
    out = execFileSync(biome, ["lint", "--reporter=json", ...paths], {
      cwd: tmp,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    out = String((e as { stdout?: unknown }).stdout ?? "");
  }
  const report = JSON.parse(out) as {
    diagnostics: { category: string; message: string; location: { path: string } }[];
  };
  return report.diagnostics
    .filter((d) => d.category === "lint/style/noRestrictedImports")
    .map((d) => ({ path: d.location.path, category: d.category, message: d.message }));
}

const probe = (spec: string) => `import { x } from "${spec}";\n\nexport const y = x;\n`;

describe("core's layer rule (biome.json overrides)", () => {
  const folders = [...rank.keys()];

  it("refuses every import up the stack or across siblings, from a folder and from a subfolder", () => {
    const files: Record<string, string> = {};
    const expected: string[] = [];
    for (const from of folders) {
      for (const to of folders) {
        if (to === from || rank.get(to)! < rank.get(from)!) continue;
        files[`${from}/up-${to}.ts`] = probe(`../${to}/x.js`);
        files[`${from}/deep/up-${to}.ts`] = probe(`../../${to}/x.js`);
        expected.push(`packages/core/src/${from}/up-${to}.ts`, `packages/core/src/${from}/deep/up-${to}.ts`);
      }
    }
    const found = lint(files);
    expect(found.map((f) => f.path).sort()).toEqual(expected.sort());
    for (const f of found) expect(f.message).toContain("one-way stack");
  });

  it("lets every folder import the layers below it, and itself", () => {
    const files: Record<string, string> = {};
    for (const from of folders) {
      files[`${from}/same.ts`] = probe("./x.js");
      for (const to of folders)
        if (rank.get(to)! < rank.get(from)!) files[`${from}/down-${to}.ts`] = probe(`../${to}/x.js`);
    }
    expect(lint(files)).toEqual([]);
  });

  it("keeps Automerge out of every folder of core", () => {
    const files: Record<string, string> = {};
    for (const f of folders) {
      files[`${f}/am.ts`] = probe("@automerge/automerge");
      files[`${f}/deep/am.ts`] = probe("@automerge/automerge-repo");
    }
    const found = lint(files);
    expect(found.map((f) => f.path).sort()).toEqual(
      folders.flatMap((f) => [`packages/core/src/${f}/am.ts`, `packages/core/src/${f}/deep/am.ts`]).sort(),
    );
    for (const f of found) expect(f.message).toContain("@kumiki-graph/storage-automerge");
  });
});

describe("the storage package's place (biome.json override for packages/storage-automerge)", () => {
  it("imports core's public entries and Automerge, never core's files or an edge", () => {
    const found = lint(
      {
        "ok-core.ts": probe("@kumiki-graph/core"),
        "ok-read.ts": probe("@kumiki-graph/core/read"),
        "ok-am.ts": probe("@automerge/automerge"),
        "deep-core.ts": probe("../../core/src/store/store.js"),
        "sub-core.ts": probe("@kumiki-graph/core/dist/store/store.js"),
        "edge-mcp.ts": probe("@kumiki-graph/mcp"),
        "edge-sync.ts": probe("@kumiki-graph/sync-server"),
      },
      "storage-automerge",
    );
    expect(found.map((f) => f.path).sort()).toEqual(
      ["deep-core.ts", "edge-mcp.ts", "edge-sync.ts", "sub-core.ts"].map(
        (f) => `packages/storage-automerge/src/${f}`,
      ),
    );
  });
});
