#!/usr/bin/env node
// The build context of the repository's Containerfile (`kumiki serve` as a service), made from this
// checkout as a user installs the packages: OUT/tarballs (`npm pack` of the five), OUT/prefix (them
// installed with the repository's lockfile, no dev dependencies), OUT/data (the data volume's
// folder, empty). Build the packages first (`npm ci` does). Usage:
//   node scripts/container-context.mjs OUT [--offline]
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { installPacked, packAll } from "./packed-install.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const offline = args.includes("--offline");
const rest = args.filter((a) => a !== "--offline");
if (rest.length !== 1 || rest[0].startsWith("-")) {
  process.stderr.write("usage: node scripts/container-context.mjs OUT [--offline]\n");
  process.exit(2);
}
const out = path.resolve(rest[0]);
if (existsSync(out) && readdirSync(out).length > 0) {
  process.stderr.write(`container-context: ${out} is not empty: give a new or empty folder\n`);
  process.exit(2);
}
await packAll(repoRoot, path.join(out, "tarballs"));
await installPacked(repoRoot, path.join(out, "prefix"), path.join(out, "tarballs"), { offline });
mkdirSync(path.join(out, "data"), { recursive: true });
process.stdout.write(
  `${out}: podman build --format docker -f ${path.join(repoRoot, "Containerfile")} -t kumiki-serve ${out}\n`,
);
