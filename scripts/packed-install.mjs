// The five packages as a user installs them: `npm pack` each, and the tarballs installed into an
// empty prefix with a lockfile — the repository's, with the five pointing at their tarballs. Without
// one, npm 11 resolves every range from full registry metadata, which an offline cache need not
// hold; with it, npm installs exactly the versions the repository is tested with (from the cache
// when offline). Used by the container's context (container-context.mjs) and the pack test.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/** The published packages, by folder under packages/. */
export const PACKAGES = ["core", "storage-automerge", "mcp", "sync-server", "cli"];

/** `npm pack`s every package of `repoRoot` into `tarballs` (made if need be). */
export async function packAll(repoRoot, tarballs) {
  await mkdir(tarballs, { recursive: true });
  for (const p of PACKAGES) {
    execFileSync("npm", ["pack", "--silent", "--pack-destination", tarballs], {
      cwd: path.join(repoRoot, "packages", p),
      stdio: ["ignore", "pipe", "pipe"],
    });
  }
}

/**
 * The prefix's package.json and lockfile: the tarballs of `only` (default: all five) in `tarballs`
 * as its dependencies (named relative to the prefix, `../tarballs/<file>`), the repository's lock
 * for the rest.
 */
export async function prefixManifests(repoRoot, tarballs, only = PACKAGES) {
  const rootLock = JSON.parse(await readFile(path.join(repoRoot, "package-lock.json"), "utf8"));
  const dependencies = {};
  const packages = {};
  for (const [key, entry] of Object.entries(rootLock.packages)) {
    if (!key.startsWith("node_modules/") || entry.dev === true || entry.link === true) continue;
    // The repository's lock omits `resolved`; without it npm would look the tarball up in registry
    // metadata. With it (and the lock's integrity) the cached tarball is used as is.
    const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    const resolved = `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${String(entry.version)}.tgz`;
    packages[key] = { ...entry, resolved };
  }
  for (const file of await readdir(tarballs)) {
    const dir = PACKAGES.find((p) => file === `kumiki-graph-${p}-0.1.0.tgz`);
    if (dir === undefined) throw new Error(`unexpected tarball ${file}`);
    if (!only.includes(dir)) continue;
    const pkg = JSON.parse(await readFile(path.join(repoRoot, "packages", dir, "package.json"), "utf8"));
    const resolved = `file:../tarballs/${file}`;
    dependencies[pkg.name] = resolved;
    const digest = createHash("sha512")
      .update(await readFile(path.join(tarballs, file)))
      .digest("base64");
    packages[`node_modules/${pkg.name}`] = {
      version: pkg.version,
      resolved,
      integrity: `sha512-${digest}`,
      ...(pkg.dependencies === undefined ? {} : { dependencies: pkg.dependencies }),
      ...(pkg.peerDependencies === undefined ? {} : { peerDependencies: pkg.peerDependencies }),
      ...(pkg.peerDependenciesMeta === undefined ? {} : { peerDependenciesMeta: pkg.peerDependenciesMeta }),
      ...(pkg.bin === undefined ? {} : { bin: pkg.bin }),
      ...(pkg.engines === undefined ? {} : { engines: pkg.engines }),
    };
  }
  const name = "kumiki-packed";
  return {
    manifest: { name, private: true, dependencies },
    lock: { name, lockfileVersion: 3, requires: true, packages: { "": { name, dependencies }, ...packages } },
  };
}

/**
 * Installs the tarballs of `only` from `tarballs` into `prefix` (a sibling of `tarballs`), with the
 * lockfile of {@link prefixManifests}; `offline`: from the npm cache only.
 */
export async function installPacked(repoRoot, prefix, tarballs, { offline = false, only = PACKAGES } = {}) {
  await mkdir(prefix, { recursive: true });
  const { manifest, lock } = await prefixManifests(repoRoot, tarballs, only);
  await writeFile(path.join(prefix, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(path.join(prefix, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  execFileSync(
    "npm",
    ["install", ...(offline ? ["--offline"] : []), "--no-audit", "--no-fund", "--loglevel=error"],
    { cwd: prefix, stdio: ["ignore", "pipe", "pipe"] },
  );
}
