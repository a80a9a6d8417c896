/**
 * The public API of @kumiki-graph/storage-automerge, runtime and types, pinned by a report read off
 * the built declarations (test-support/api-report.ts): packages/storage-automerge/api/<entry>.api.txt
 * for the main entry, `./read`, `./quick` and `./browser`.
 * A change to the API changes it in the same commit: run
 * `KUMIKI_UPDATE_API=1 npx vitest run packages/storage-automerge/test/api-report.test.ts`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pinApi } from "@kumiki-graph/test-support/api-report";

pinApi("storage-automerge's public API", path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."), {
  index: "index.d.ts",
  read: "read.d.ts",
  quick: "quick.d.ts",
  browser: "browser.d.ts",
});
