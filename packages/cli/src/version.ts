/** The CLI's version, read from its own package.json (beside `dist/` and `bundle/` alike). */
import { readFileSync } from "node:fs";

/** The package version, read from this package's own package.json. */
export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
