#!/usr/bin/env node
// A committed launcher, so the bin link npm makes at install time points at a file that exists
// and is executable before `prepare` compiles src/ into dist/ and bundles it into bundle/
// (scripts/bundle-cli.mjs: one file per verb family, a third less CPU per call than dist/).
import { runThroughDaemon } from "../bundle/client.js";

// `kumiki view … | head`: the reader went away. Nothing more can be shown; leave quietly (as a
// shell pipeline expects), not with an unhandled EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const argv = process.argv.slice(2);
// When `kumiki daemon start` left a daemon of this build for the workspace, the call runs there
// (src/daemon/client.ts); otherwise (no daemon: one stat) it runs here.
const served = await runThroughDaemon({
  argv,
  cwd: process.cwd(),
  env: process.env,
  isTTY: process.stderr.isTTY === true,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: async () => {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return Buffer.concat(chunks).toString("utf8");
  },
  entry: new URL("../bundle/main.js", import.meta.url),
});
const code = served ?? (await (await import("../bundle/main.js")).main(argv));
// The call is over when its verb returns (stores closed, writes flushed): leave now. A store whose
// open failed (a damaged chunk) leaves automerge-repo's 60 s load timers behind, and a daemon that
// stopped its stores may too, which would keep the process alive after its work. Standard output
// and error are written synchronously to files, pipes and terminals on POSIX, so nothing printed
// is lost.
process.exit(code);
