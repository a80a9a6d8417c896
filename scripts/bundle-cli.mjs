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
// its own files), and the MCP server and the sync server (their own packages, loaded only by their
// verbs).
import { fileURLToPath } from "node:url";
import { rolldown } from "rolldown";

const cli = fileURLToPath(new URL("../packages/cli/", import.meta.url));
const bundle = await rolldown({
  input: { main: `${cli}dist/main.js` },
  platform: "node",
  logLevel: "warn",
  external: [
    /^@automerge\/automerge(\/.*)?$/,
    /^@modelcontextprotocol\//,
    /^@kumiki-graph\/(mcp|sync-server)(\/.*)?$/,
  ],
});
await bundle.write({
  dir: `${cli}bundle`,
  format: "esm",
  entryFileNames: "[name].js",
  chunkFileNames: "[name]-[hash].js",
  codeSplitting: {
    groups: [
      { name: "core-read", test: /packages[\\/]core[\\/]dist[\\/]read\.bundle\.js$/ },
      { name: "core", test: /packages[\\/]core[\\/]/ },
      {
        name: "storage-read",
        test: /storage-automerge[\\/]dist[\\/](read|workspace-read|workspace-layout|chunk-files|file-lock|op-log-file)\.js$/,
      },
      { name: "storage", test: /storage-automerge[\\/]/ },
      { name: "automerge-repo", test: /node_modules[\\/]/ },
    ],
  },
});
await bundle.close();
