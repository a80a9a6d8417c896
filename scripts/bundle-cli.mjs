// Bundles the kumiki CLI (packages/cli/dist/main.js, compiled by tsc -b) with what it imports into
// packages/cli/bundle/, the files bin/kumiki.js runs (beside dist/, so that `../package.json` is the
// CLI's own from either). Part of `npm run build`.
//
// Why: every call is a new process, and resolving and compiling the few hundred modules of core,
// the storage, automerge-repo and their CommonJS dependencies one by one was a third of a write's
// CPU (measured on the 180-definition example, 6 runs each, interleaved: `kumiki add` 750 -> 535 ms,
// `kumiki check` 360 -> 230 ms, `kumiki view` 160 -> 145 ms). Verbs are still loaded on demand:
// each lazy verb is its own chunk, and what several share is split into chunks named for what they
// hold (core, storage, automerge-repo), so a read never loads the storage's Automerge side.
// Left out, loaded from node_modules as before: Automerge itself (its WebAssembly is found next to
// its own files), and the sync server (its own package, loaded only by its verbs). The MCP server
// and the MCP SDK are bundled (a chunk only `mcp serve` loads): loaded from node_modules, the server
// brought a second copy of core and the storage and a few hundred modules, and every agent's new
// session paid for them — `kumiki mcp serve` to its first answer at 180 definitions cost about 850 ms
// of CPU, 490 bundled (5 runs each, interleaved; bundling the server alone: 570).
import { readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { rolldown } from "rolldown";

const cli = fileURLToPath(new URL("../packages/cli/", import.meta.url));
/** A workspace package's version, as its package.json says. */
const versionOf = (pkg) =>
  JSON.parse(readFileSync(new URL(`../packages/${pkg}/package.json`, import.meta.url), "utf8")).version;
// Core's read entry is bundled here from its modules (dist/read.js): the modules it reaches are
// grouped into one chunk, and the rest of core (the checker, fixes, projection) imports from it, so
// `check` and every write compile them once.
const coreRead = fileURLToPath(new URL("../packages/core/dist/read.js", import.meta.url));
const readPass = await rolldown({ input: coreRead, platform: "node", logLevel: "warn" });
const readModules = new Set((await readPass.generate({ format: "esm" })).output[0].moduleIds);
await readPass.close();
// Core's dependency-free entry (refusal codes, remedies): every verb's error path imports it, so it
// is a small chunk of its own, out of the core chunks.
const coreRejection = fileURLToPath(new URL("../packages/core/dist/rejection.js", import.meta.url));
const lightPass = await rolldown({ input: coreRejection, platform: "node", logLevel: "warn" });
const lightModules = new Set((await lightPass.generate({ format: "esm" })).output[0].moduleIds);
await lightPass.close();
const bundle = await rolldown({
  // client: what the bin runs first, to hand the call to the workspace's daemon (Node's modules only).
  input: { main: `${cli}dist/main.js`, client: `${cli}dist/daemon/client.js` },
  platform: "node",
  logLevel: "warn",
  external: [/^@automerge\/automerge(\/.*)?$/, /^@kumiki-graph\/sync-server(\/.*)?$/],
  plugins: [
    {
      // The server's version.ts reads its own package.json and core's beside the file it runs
      // from; in this bundle that is the CLI's folder, so the versions it was built with are
      // written in instead.
      name: "mcp-versions",
      transform(code, id) {
        if (!/packages[\\/]mcp[\\/]dist[\\/]version\.js$/.test(id)) return undefined;
        const out = code
          .replace('versionAt(new URL("../package.json", import.meta.url))', JSON.stringify(versionOf("mcp")))
          .replace('versionAt(new URL("../package.json", coreEntry))', JSON.stringify(versionOf("core")));
        if (out.split("versionAt(").length !== 2)
          throw new Error("bundle-cli: mcp's version.js changed shape");
        return out;
      },
    },
    {
      name: "core-read-from-modules",
      resolveId: (id) =>
        id === "@kumiki-graph/core/read"
          ? coreRead
          : id === "@kumiki-graph/core/rejection"
            ? coreRejection
            : undefined,
    },
  ],
});
// Chunk names carry a content hash: without emptying the folder, every build left its old chunks
// beside the new ones (and the package shipped them).
rmSync(`${cli}bundle`, { recursive: true, force: true });
await bundle.write({
  dir: `${cli}bundle`,
  format: "esm",
  entryFileNames: "[name].js",
  chunkFileNames: "[name]-[hash].js",
  codeSplitting: {
    groups: [
      // A chunk of their own: left to the default placement, rolldown merged them into core's
      // chunks, which every verb would then load (seen: main importing core-read).
      { name: "rejection", test: (id) => lightModules.has(id) },
      { name: "core-read", test: (id) => readModules.has(id) && !lightModules.has(id) },
      { name: "core", test: (id) => /packages[\\/]core[\\/]/.test(id) && !lightModules.has(id) },
      {
        name: "storage-read",
        test: /storage-automerge[\\/]dist[\\/](read|workspace-read|workspace-layout|chunk-files|file-lock|op-log-file|op-log-lines|held-ops|check-cache-file|pending-bundles)\.js$/,
      },
      // A write in its own process (the quick entry: core and the checker, no Automerge).
      {
        name: "storage-quick",
        test: /storage-automerge[\\/]dist[\\/](quick|quick-write|store-over)\.js$/,
      },
      { name: "storage", test: /storage-automerge[\\/]/ },
      // What only `mcp serve` loads: the server, and the MCP SDK with the JSON Schema validator it
      // brings (rolldown places the SDK's modules that the server imports statically with it).
      { name: "mcp-server", test: /packages[\\/]mcp[\\/]dist[\\/]/ },
      // The rest of the SDK: its Streamable HTTP transport and Hono's Node adapter, which the server
      // imports when an HTTP endpoint is made (packages/mcp/src/http.ts), never over stdio.
      {
        name: "mcp-sdk",
        test: /node_modules[\\/](@modelcontextprotocol|ajv|ajv-formats|fast-uri|fast-deep-equal|json-schema-traverse|@hono)[\\/]/,
      },
      { name: "automerge-repo", test: /node_modules[\\/]/ },
    ],
  },
});
await bundle.close();
