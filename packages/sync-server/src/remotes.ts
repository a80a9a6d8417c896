/**
 * A workspace's remotes: `.kumiki/remotes.json` (docs/sync.md), written atomically.
 *
 * ```json
 * { "format": 1, "remotes": [ { "name": "origin", "url": "ws://127.0.0.1:7420", "tokenFile": "/home/a/.kumiki-token" } ] }
 * ```
 *
 * A remote names a server; the graph is the workspace's own (`config.json`). Tokens are never
 * stored here, only the path of the file that holds one.
 */
import fs from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "@kumiki-graph/core";
import { graphSocketUrl, type WorkspacePaths } from "@kumiki-graph/storage-automerge";
import { fail, ok, type SyncResult } from "./result.js";

/** One remote. */
export interface Remote {
  readonly name: string;
  /** The server, `ws://host:port` or `wss://…`. */
  readonly url: string;
  /**
   * Other servers of the same service (sharing one database): `kumiki sync` carries on through
   * them, in turn, when the server drops or cannot be reached.
   */
  readonly alternates?: readonly string[];
  /** Absolute path of the file holding the bearer token, when the server wants one. */
  readonly tokenFile?: string;
}

/** The remotes file format this code writes and reads. */
export const REMOTES_FORMAT = 1;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `.kumiki/remotes.json` of a workspace. */
export function remotesFile(paths: WorkspacePaths): string {
  return path.join(paths.dir, "remotes.json");
}

/** Checks a server URL: `ws:` or `wss:`, a host, no credentials, query or fragment. */
export function checkServerUrl(url: string): SyncResult<string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return fail("invalid-url", `${JSON.stringify(url)} is not a URL (expected ws://host:port)`, { url });
  }
  if (u.protocol !== "ws:" && u.protocol !== "wss:")
    return fail("invalid-url", `${url}: a sync server URL starts with ws:// or wss://`, { url });
  if (u.username !== "" || u.password !== "" || u.search !== "" || u.hash !== "")
    return fail(
      "invalid-url",
      `${url}: no credentials, query or fragment in a server URL (give the token with --token-file)`,
      { url },
    );
  return ok(url.replace(/\/+$/, ""));
}

/**
 * Splits a graph address `ws://host:port[/path]/automerge:…` into the server URL (with its path,
 * as `sync` takes it: a server behind a proxy at `/kumiki`) and the graph URL.
 */
export function parseGraphAddress(address: string): SyncResult<{ server: string; graph: string }> {
  // The graph's own path (`/g/automerge:…`, what clients connect to) is taken too.
  const m = /^(wss?:\/\/[^/]+(?:\/[^/]+)*?)(?:\/+g)?\/+(automerge:[1-9A-HJ-NP-Za-km-z]+)\/?$/.exec(address);
  if (m === null) {
    return fail(
      "invalid-url",
      `${JSON.stringify(address)} is not a graph address: expected ws://host:port/automerge:… (the server's URL, a slash, the graph's URL from \`kumiki status --json\` or .kumiki/config.json)`,
      { address },
    );
  }
  const server = checkServerUrl(m[1]!);
  if (!server.ok) return server;
  return ok({ server: server.value, graph: m[2]! });
}

// The WebSocket URL of a graph on a server is storage's (the browser entry's opener builds it too).
export { graphSocketUrl };

/** The remotes of a workspace (none when the file is absent). */
export function readRemotes(paths: WorkspacePaths): SyncResult<Remote[]> {
  const file = remotesFile(paths);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return ok([]);
    return fail("remotes-corrupt", `cannot read ${file}: ${(e as Error).message}`, { path: file });
  }
  const corrupt = (why: string) =>
    fail<Remote[]>("remotes-corrupt", `${file}: ${why} (fix or delete it, then kumiki remote add)`, {
      path: file,
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return corrupt(`not valid JSON: ${(e as Error).message}`);
  }
  const r = raw as { format?: unknown; remotes?: unknown };
  if (typeof raw !== "object" || raw === null || r.format !== REMOTES_FORMAT || !Array.isArray(r.remotes))
    return corrupt(`expected {"format": ${REMOTES_FORMAT}, "remotes": [...]}`);
  const out: Remote[] = [];
  for (const [i, e] of r.remotes.entries()) {
    const x = e as { name?: unknown; url?: unknown; tokenFile?: unknown; alternates?: unknown };
    if (typeof x?.name !== "string" || !NAME.test(x.name) || typeof x.url !== "string")
      return corrupt(`remotes[${i}] needs a "name" and a "url"`);
    if (x.tokenFile !== undefined && typeof x.tokenFile !== "string")
      return corrupt(`remotes[${i}].tokenFile must be a path`);
    if (
      x.alternates !== undefined &&
      (!Array.isArray(x.alternates) || !x.alternates.every((a) => typeof a === "string"))
    )
      return corrupt(`remotes[${i}].alternates must be a list of server URLs`);
    out.push({
      name: x.name,
      url: x.url,
      ...(x.alternates === undefined ? {} : { alternates: x.alternates as string[] }),
      ...(x.tokenFile === undefined ? {} : { tokenFile: x.tokenFile }),
    });
  }
  return ok(out);
}

function writeRemotes(paths: WorkspacePaths, remotes: readonly Remote[]): SyncResult<void> {
  const file = remotesFile(paths);
  try {
    writeFileAtomic(file, `${JSON.stringify({ format: REMOTES_FORMAT, remotes }, null, 2)}\n`);
    return ok(undefined);
  } catch (e) {
    return fail("storage-failed", `cannot write ${file}: ${(e as Error).message}`, { path: file });
  }
}

/** Adds a remote; refuses a bad name or URL, and a name already used. */
export function addRemote(paths: WorkspacePaths, remote: Remote): SyncResult<Remote> {
  if (!NAME.test(remote.name))
    return fail(
      "invalid-remote",
      `invalid remote name ${JSON.stringify(remote.name)}: letters, digits, . _ - (at most 64, e.g. origin)`,
      { name: remote.name },
    );
  const url = checkServerUrl(remote.url);
  if (!url.ok) return url;
  const alternates: string[] = [];
  for (const a of remote.alternates ?? []) {
    const checked = checkServerUrl(a);
    if (!checked.ok) return checked;
    alternates.push(checked.value);
  }
  const list = readRemotes(paths);
  if (!list.ok) return list;
  if (list.value.some((r) => r.name === remote.name))
    return fail(
      "remote-exists",
      `remote ${remote.name} exists (kumiki remote remove ${remote.name} first to change it)`,
      { name: remote.name },
    );
  const added: Remote = {
    name: remote.name,
    url: url.value,
    ...(alternates.length === 0 ? {} : { alternates }),
    ...(remote.tokenFile === undefined ? {} : { tokenFile: path.resolve(remote.tokenFile) }),
  };
  const written = writeRemotes(paths, [...list.value, added]);
  return written.ok ? ok(added) : written;
}

/** Removes a remote by name. */
export function removeRemote(paths: WorkspacePaths, name: string): SyncResult<Remote> {
  const list = readRemotes(paths);
  if (!list.ok) return list;
  const found = list.value.find((r) => r.name === name);
  if (found === undefined) return missing(list.value, name);
  const written = writeRemotes(
    paths,
    list.value.filter((r) => r.name !== name),
  );
  return written.ok ? ok(found) : written;
}

function missing<T>(remotes: readonly Remote[], name: string): SyncResult<T> {
  const known = remotes.map((r) => r.name);
  return fail(
    "remote-not-found",
    `no remote named ${name}${known.length > 0 ? ` (remotes: ${known.join(", ")})` : " (kumiki remote add NAME URL)"}`,
    { name, remotes: known },
  );
}

/** The remote to sync with: `name`, else the only one, else `origin`. */
export function pickRemote(paths: WorkspacePaths, name: string | undefined): SyncResult<Remote> {
  const list = readRemotes(paths);
  if (!list.ok) return list;
  if (name !== undefined) {
    const found = list.value.find((r) => r.name === name);
    return found === undefined ? missing(list.value, name) : ok(found);
  }
  if (list.value.length === 1) return ok(list.value[0]!);
  const origin = list.value.find((r) => r.name === "origin");
  if (origin !== undefined) return ok(origin);
  return fail(
    "remote-not-found",
    list.value.length === 0
      ? "this workspace has no remote: kumiki remote add origin ws://host:port [--token-file F]"
      : `several remotes and none named origin: say which (kumiki sync NAME; remotes: ${list.value.map((r) => r.name).join(", ")})`,
    { remotes: list.value.map((r) => r.name) },
  );
}

/** Reads a token file (the token is its content, trimmed). */
export function readTokenFile(file: string): SyncResult<string> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8").trim();
  } catch (e) {
    return fail("token-file-invalid", `cannot read the token file ${file}: ${(e as Error).message}`, {
      path: file,
    });
  }
  if (text === "" || /\s/.test(text))
    return fail("token-file-invalid", `${file} must hold one token (no spaces or line breaks inside)`, {
      path: file,
    });
  return ok(text);
}
