#!/usr/bin/env node
// A committed launcher, so the bin link npm makes at install time points at a file that exists
// and is executable before `prepare` compiles src/ into dist/ and bundles it into bundle/
// (scripts/bundle-cli.mjs: one file per verb family, a third less CPU per call than dist/).
import module from "node:module";
import os from "node:os";
import path from "node:path";

// Node 22.1 and later keep V8's compiled code of the modules a call loads (the bundle's chunks), so
// the next call does not compile them again: measured on Node 22.12, `kumiki add` on the
// 180-definition example 108 -> 94 and 128 -> 98 ms of CPU (two runs, medians of 5, interleaved
// with NODE_DISABLE_COMPILE_CACHE=1), `view` 79 -> 69 ms. In
// the user's own cache folder, not the shared temporary one (compiled code is code: no other user
// may write it). On Node 20 there is no such cache and this does nothing; NODE_DISABLE_COMPILE_CACHE=1
// turns it off.
module.enableCompileCache?.(
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "kumiki", "compile-cache"),
);
const { runThroughDaemon } = await import("../bundle/client.js");

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
// The call is over when its verb returns (stores closed, writes flushed): leave as soon as what it
// printed has reached the reader. A store whose open failed (a damaged chunk) leaves
// automerge-repo's 60 s load timers behind, and a daemon that stopped its stores may too, which
// would keep the process alive after its work, so the exit is explicit. But on Linux a write to a
// pipe is asynchronous once the pipe's 64 KiB buffer is full (libuv queues the rest), and
// process.exit drops that queue: `kumiki patch export | wc -c` got 65,536 bytes. So wait until
// each stream has handed everything to the kernel (the callback of an empty write runs after every
// earlier write), however slowly the reader reads; a reader that went away ends the call through
// the EPIPE handler above.
process.exitCode = code;
await Promise.all([process.stdout, process.stderr].map(drained));
process.exit(code);

/** Resolves when everything written to `stream` so far has been handed to the kernel. */
function drained(stream) {
  if (stream.writableLength === 0 || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => stream.write("", () => resolve()));
}
