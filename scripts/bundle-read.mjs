// Bundles @kumiki-graph/core's read entry (dist/read.js, compiled by tsc -b) and what it imports
// into dist/read.bundle.js, the file the package's "./read" export points at. Part of `npm run build`.
import { fileURLToPath } from "node:url";
import { rolldown } from "rolldown";

const dist = fileURLToPath(new URL("../packages/core/dist/", import.meta.url));
const bundle = await rolldown({ input: `${dist}read.js`, platform: "node", logLevel: "warn" });
await bundle.write({ file: `${dist}read.bundle.js`, format: "esm" });
await bundle.close();
