/**
 * The API reference (`npm run docs`: typedoc over the five packages' entries, into docs/api/)
 * builds with zero warnings: every export and its members documented, every `{@link}` resolving,
 * every type a signature mentions exported (typedoc.json treats a warning as an error). Run here
 * without writing the site (`--emit none`), on the packages as built.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

describe("npm run docs", () => {
  it("builds the API reference with no warning", () => {
    const r = spawnSync(
      process.execPath,
      [path.join(root, "node_modules", "typedoc", "bin", "typedoc"), "--emit", "none"],
      {
        cwd: root,
        encoding: "utf8",
        timeout: 240_000,
      },
    );
    // Without colour codes (ESC [ … m) around the level.
    const said = `${r.stdout}${r.stderr}`.replace(
      new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"),
      "",
    );
    expect(said.split("\n").filter((l) => /^\[(warning|error)\]/.test(l))).toEqual([]);
    expect(r.status, said).toBe(0);
  }, 300_000);
});
