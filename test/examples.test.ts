/**
 * examples/: each program runs as a user would run it (`node examples/<file>` from the repository
 * root) and checks itself; here each must exit 0 and print what it says it does.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const EXAMPLES: readonly [string, RegExp][] = [
  [
    "quick-start.mjs",
    /check: 1 error\(s\): E0103 at reducer\.up\.body:1\nfix: 1 applied, errors 1 -> 0\n[\s\S]*check: clean/,
  ],
  ["two-agents.mjs", /one folder: both agents see 2 definitions[\s\S]*both workspaces hold the same 4 slots/],
  ["custom-validator.mjs", /refused: slot\.item_total: slot names are camelCase/],
  ["watch-changes.mjs", /local add slot\.mine by agent:watcher\nremote add slot\.theirs by agent:cli/],
  ["mcp-client.mjs", /16 tools: [\s\S]*both times\n[\s\S]*rejected \(duplicate-name\)/],
  ["open-store.mjs", /^slot count : Int = 0\n/],
];

describe("examples/", () => {
  it.each(EXAMPLES)(
    "%s runs, checks itself and prints what it did",
    (file, printed) => {
      const r = spawnSync(process.execPath, [path.join("examples", file)], {
        cwd: root,
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(printed);
    },
    150_000,
  );
});

describe("README.md", () => {
  it("quotes examples/open-store.mjs verbatim as its library quick start", () => {
    const readme = readFileSync(path.join(root, "README.md"), "utf8");
    const example = readFileSync(path.join(root, "examples/open-store.mjs"), "utf8");
    expect(readme).toContain(`\`\`\`js\n${example}\`\`\``);
  });
});
