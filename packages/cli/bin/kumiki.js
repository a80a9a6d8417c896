#!/usr/bin/env node
// A committed launcher, so the bin link npm makes at install time points at a file that exists
// and is executable before `prepare` compiles src/ into dist/ and bundles it into bundle/
// (scripts/bundle-cli.mjs: one file per verb family, a third less CPU per call than dist/).
import { main } from "../bundle/main.js";

// `kumiki view … | head`: the reader went away. Nothing more can be shown; leave quietly (as a
// shell pipeline expects), not with an unhandled EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
// A failed command has said why and written nothing more: leave now. A store whose open failed
// (a damaged chunk) leaves automerge-repo's 60 s load timers behind, which would keep the process
// alive for a minute after the error. Standard output and error are written synchronously to
// files, pipes and terminals on POSIX, so nothing printed is lost.
if (code !== 0) process.exit(code);
