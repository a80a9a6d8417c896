import { describe, expect, it } from "vitest";
import { resolveCommand } from "../src/command.js";
import { COMMANDS } from "../src/commands/index.js";
import { mainHelp } from "../src/help.js";

describe("lazy verbs", () => {
  it("say in commands/index.ts exactly the summary their command has, so --help needs not load them", async () => {
    const lazy = COMMANDS.filter((c) => !("run" in c));
    expect(lazy.map((c) => c.name)).toEqual(
      expect.arrayContaining(["mcp serve", "serve", "sync", "clone", "remote add"]),
    );
    // Loading checks the summary (and throws when it differs); the help is the same either way.
    const loaded = await Promise.all(COMMANDS.map(resolveCommand));
    for (const [i, c] of COMMANDS.entries()) expect(c.summary).toBe(loaded[i]!.summary);
    expect(mainHelp(COMMANDS)).toBe(mainHelp(loaded));
  });
});
