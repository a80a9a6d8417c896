/**
 * The public API of each of core's entries (`.`, `./browser`, `./lang`, `./ops`, `./read`, `./rejection`, `./testing`), runtime and types, pinned
 * by a report read off the built declarations (see test-support/api-report.ts). A change to the API
 * changes packages/core/api/<entry>.api.txt in the same commit: run
 * `KUMIKI_UPDATE_API=1 npx vitest run packages/core/test/api-report.test.ts` and review the diff.
 *
 * Also: every type an exported signature mentions (a parameter, a return, a class member) that is
 * declared in core is itself exported, so a user can name what the API gives and takes.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pinApi } from "@kumiki-graph/test-support/api-report";

pinApi("core's public API", path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."), {
  index: "index.d.ts",
  browser: "browser.d.ts",
  lang: "lang.d.ts",
  ops: "ops.d.ts",
  read: "read.d.ts",
  rejection: "rejection.d.ts",
  testing: "testing.d.ts",
});
