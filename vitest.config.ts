import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // Two cores here and in CI: more workers only thrash.
    maxWorkers: 2,
    // A `kumiki` call starts the workspace's daemon by default: a test (and what it spawns with
    // this environment) runs each call in its own process unless it turns the daemon on itself.
    env: { KUMIKI_DAEMON: "off" },
    // One line when ../shared/kumiki is absent (the tests that read it are skipped).
    globalSetup: ["test/shared-notice.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
