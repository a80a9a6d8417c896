/**
 * The public API of @kumiki-graph/mcp, runtime and types, pinned by a report read off the built
 * declarations (test-support/api-report.ts): packages/mcp/api/index.api.txt. A change to the API
 * changes it in the same commit: run
 * `KUMIKI_UPDATE_API=1 npx vitest run packages/mcp/test/api-report.test.ts` and review the diff.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pinApi } from "@kumiki-graph/test-support/api-report";

pinApi("mcp's public API", path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."), {
  index: "index.d.ts",
});
