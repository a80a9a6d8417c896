/**
 * The real `kumiki` binary (the bundled CLI: run `npm run build` first) on temporary workspaces
 * built from ../shared/kumiki/examples/apps/02-todomvc: a round trip, reads served from the
 * workspace's op-log.jsonl staying current across processes, what `view` loads, and the two-agent scenario of ai-edit.md §9.4 on
 * one machine (two workspaces exchanging ops as bundles).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, type Dirent, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { corpusProgram } from "@kumiki-graph/test-support/corpus";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, cleanup, runBin, tempDir, testEnv } from "./support.js";

const todo = corpusProgram("apps/02-todomvc/app.kumiki");

const dirs: string[] = [];
afterEach(() => cleanup(...dirs.splice(0)));

function workspace(
  name: string,
  cache: string,
): { dir: string; k: (argv: string[], stdin?: string) => ReturnType<typeof runBin> } {
  const dir = tempDir(name);
  dirs.push(dir);
  const env = testEnv(cache, { KUMIKI_AUTHOR: `agent:${name}` });
  const k = (argv: string[], stdin?: string) =>
    runBin(argv, { cwd: dir, env, ...(stdin === undefined ? {} : { stdin }) });
  const init = k(["init"]);
  expect(init.code, init.err).toBe(0);
  return { dir, k };
}

// Each run of the binary is a process start and a store open: generous timeouts on a busy machine.
describe.skipIf(todo === undefined)("the kumiki binary on 02-todomvc", { timeout: 180_000 }, () => {
  it("imports, views, edits and exports the program byte for byte", () => {
    const cache = tempDir("cache");
    dirs.push(cache);
    const { dir, k } = workspace("a", cache);
    writeFileSync(path.join(dir, "app.kumiki"), todo!.source);
    const imp = k(["import", "app.kumiki", "--json"]);
    expect(imp.code, imp.err).toBe(0);
    expect(JSON.parse(imp.out).opIds.length).toBeGreaterThan(30);
    expect(k(["export"]).out).toBe(todo!.source);
    const v = k(["view", "slot.todos"]);
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/slot todos +: Map\(TodoId, Todo\)/);
    expect(k(["view", "--refs", "slot.draft"]).out).toMatch(/^slot\.draft is referenced by/);
    const removed = k(["remove", "slot.draft"]);
    expect(removed.code).toBe(1);
    expect(removed.err).toMatch(/^kumiki remove: cannot remove slot\.draft \(referenced by/);
    expect(removed.out).toBe("");
  });

  it("serves reads from op-log.jsonl only while it is current: a write by another process shows at once", () => {
    const cache = tempDir("cache");
    dirs.push(cache);
    const { dir, k } = workspace("a", cache);
    writeFileSync(path.join(dir, "app.kumiki"), todo!.source);
    expect(k(["import", "app.kumiki"]).code).toBe(0);
    expect(k(["list", "slot"]).out).not.toContain("slot.newer");
    expect(k(["list", "slot"]).out).not.toContain("slot.newer"); // served from op-log.jsonl
    // Another process writes through the full store (here: the same binary with the fast path off).
    const other = runBin(["add", "slot", "newer", "Int = 1"], {
      cwd: dir,
      env: testEnv(cache, { KUMIKI_READ_SNAPSHOT: "off" }),
    });
    expect(other.code, other.err).toBe(0);
    expect(k(["list", "slot"]).out).toContain("slot.newer");
    expect(k(["view", "slot.newer"]).out).toBe("slot newer : Int = 1\n");
  });

  it("kumiki --help lists every verb without loading core, the MCP server and SDK or the sync server", () => {
    const dir = tempDir("help");
    dirs.push(dir);
    const { p, loaded } = runRecordingLoads(dir, ["--help"], {});
    expect(p.status, p.stderr).toBe(0);
    for (const verb of ["mcp serve", "serve", "sync", "clone", "remote add"])
      expect(p.stdout).toContain(`  ${verb} `);
    // The bin runs the bundle (scripts/bundle-cli.mjs), whose shared chunks are named for what they
    // hold: neither core (main or read entry) nor the storage is loaded for help.
    expect(loaded).toContain("/cli/bundle/main.js");
    expect(loaded).not.toMatch(
      /@automerge|@modelcontextprotocol|sync-server|\/mcp\/dist|\/core\/dist|\/bundle\/(core|storage|mcp)/,
    );
  });

  it("loads neither Automerge, the MCP SDK nor the sync server for view, the first read after a write included", () => {
    const cache = tempDir("cache");
    dirs.push(cache);
    const { dir, k } = workspace("a", cache);
    writeFileSync(path.join(dir, "app.kumiki"), todo!.source);
    expect(k(["import", "app.kumiki"]).code).toBe(0);
    // A write just before: the writer left op-log.jsonl current, so the read is served from it.
    expect(k(["add", "slot", "recent", "Int = 1"]).code).toBe(0);
    const { p, loaded } = runRecordingLoads(dir, ["view", "slot.todos"], {
      ...testEnv(cache),
      PATH: process.env.PATH ?? "",
    });
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/slot todos/);
    // The storage's read side and core's read entry; not the storage's Automerge side nor the checker.
    expect(loaded).toMatch(/\/cli\/bundle\/storage-read-[^/]*\.js/);
    expect(loaded).toMatch(/\/cli\/bundle\/core-read-[^/]*\.js/);
    expect(loaded).not.toMatch(
      /@automerge|@modelcontextprotocol|sync-server|\/mcp\/dist|\/bundle\/mcp|\/bundle\/(core|storage)-(?!read)/,
    );
    // `check` adds the checker to the same read code: core's read modules are compiled once.
    const checked = runRecordingLoads(dir, ["check"], { ...testEnv(cache), PATH: process.env.PATH ?? "" });
    expect(checked.p.status, checked.p.stderr).toBe(0);
    expect(checked.loaded).toMatch(/\/cli\/bundle\/core-(?!read)[^/]*\.js/);
    expect(checked.loaded).toMatch(/\/cli\/bundle\/core-read-[^/]*\.js/);
    expect(checked.loaded).not.toMatch(/@automerge|\/bundle\/storage-(?!read)/);
    const parsers = checked.loaded
      .split("\n")
      .filter((url) => url.startsWith("file:") && url.includes("/cli/bundle/"))
      .filter((url) => readFileSync(new URL(url), "utf8").includes("function parseDefinition("));
    expect(parsers).toHaveLength(1);
  });

  it("mcp serve over stdio answers without loading the SDK's HTTP transport (its Hono adapter and Node's fetch)", () => {
    const cache = tempDir("cache");
    dirs.push(cache);
    const { dir, k } = workspace("stdio", cache);
    expect(k(["add", "slot", "count", "Int = 0"]).code).toBe(0);
    // An agent's session: initialize, a call, then stdin closes and the server exits.
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "kumiki_view", arguments: { selector: "slot.count" } },
      },
    ];
    const { p, loaded } = runRecordingLoads(
      dir,
      ["mcp", "serve", "--store", dir],
      { ...testEnv(cache), PATH: process.env.PATH ?? "" },
      `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
    );
    expect(p.status, p.stderr).toBe(0);
    const answers = p.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id?: number; result?: unknown });
    expect(JSON.stringify(answers.find((a) => a.id === 2)?.result)).toContain("slot count");
    expect(loaded).toMatch(/\/cli\/bundle\/mcp-server-[^/]*\.js/);
    // The HTTP transport is a chunk of its own, which `mcp serve --http` loads (packages/mcp's
    // http.test): no code loaded holds Hono's Node adapter.
    const code = loaded
      .split("\n")
      .filter((url) => url.startsWith("file:"))
      .map((url) => readFileSync(new URL(url), "utf8"));
    expect(code.length).toBeGreaterThan(0);
    expect(code.filter((text) => text.includes("getRequestListener"))).toEqual([]);
  });

  it("two agents, two workspaces, B empty at first, ops exchanged as bundles: A removes a slot B binds a new tile to (§9.4)", () => {
    const cache = tempDir("cache");
    dirs.push(cache);
    const a = workspace("a", cache);
    writeFileSync(path.join(a.dir, "app.kumiki"), todo!.source);
    expect(a.k(["import", "app.kumiki"]).code).toBe(0);
    expect(a.k(["add", "slot", "note", 'Text = ""']).code).toBe(0);
    // B starts EMPTY and takes A's ops as `patch export` writes them (an imported program's forward
    // references are adds followed by links: taken as a set); one op alone is a valid file too.
    const bDir = tempDir("b");
    dirs.push(bDir);
    const bEnv = testEnv(cache, { KUMIKI_AUTHOR: "agent:b" });
    const b = {
      dir: bDir,
      k: (argv: string[], stdin?: string) =>
        runBin(argv, { cwd: bDir, env: bEnv, ...(stdin === undefined ? {} : { stdin }) }),
    };
    expect(b.k(["init"]).code).toBe(0);
    const exported = a.k(["patch", "export"]).out.trim().split("\n");
    const first = b.k(["patch", "apply", "-"], JSON.stringify(JSON.parse(exported[0]!), null, 2));
    expect(first.code, first.err).toBe(0);
    const rest = b.k(["patch", "apply", "-"], exported.join("\n"));
    expect(rest.code, rest.err).toBe(0);
    expect(b.k(["export"]).out).toBe(a.k(["export"]).out);
    // Concurrently: A removes slot.note (nothing references it yet), B adds a tile bound to it.
    expect(a.k(["remove", "slot.note"]).code).toBe(0);
    const added = b.k(["add", "tile", "NoteField", "input(bind=note)"]);
    expect(added.code, added.err).toBe(0);
    // Exchange both ways.
    const fromA = a.k(["patch", "export"]).out;
    const fromB = b.k(["patch", "export"]).out;
    const inB = b.k(["patch", "apply", "-", "--json"], fromA);
    const inA = a.k(["patch", "apply", "-", "--json"], fromB);
    expect(inB.code, inB.err).toBe(0);
    expect(inA.code, inA.err).toBe(0);
    // Same ops, same graph, the same decision on both replicas (strict: both rolled back, a conflict).
    for (const verb of [["export"], ["conflicts", "--json"], ["list"], ["status", "--json"]]) {
      const x = a.k(verb);
      const y = b.k(verb);
      if (verb[0] === "status") {
        // Who asks and which document holds it differ; the graph's state must not.
        const { author: _a, graph: _ga, ...sa } = JSON.parse(x.out);
        const { author: _b, graph: _gb, ...sb } = JSON.parse(y.out);
        expect(sa).toEqual(sb);
      } else expect(x.out).toBe(y.out);
    }
    const conflicts = JSON.parse(a.k(["conflicts", "--json"]).out).conflicts as { ops: string[] }[];
    expect(conflicts.length).toBeGreaterThan(0);
    expect(inA.err + inB.err).toMatch(/warning: conflict /);
    // Strict: the dangling reference never shows: either the slot is back or the tile is gone.
    const slot = a.k(["view", "slot.note"]).code;
    const tile = a.k(["view", "tile.NoteField"]).code;
    expect(slot === 0 || tile === 1).toBe(true);
  });
});

/** Runs the bin in `dir` with a loader hook that records every module URL it loads (ESM modules are not in require.cache). */
function runRecordingLoads(
  dir: string,
  args: readonly string[],
  env: Record<string, string>,
  input?: string,
) {
  const hook = path.join(dir, "hook.mjs");
  const log = path.join(dir, "loaded.txt");
  writeFileSync(log, "");
  writeFileSync(
    hook,
    `import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + "\\n"); return next(url, context); }\n`,
  );
  const reg = path.join(dir, "register.mjs");
  writeFileSync(
    reg,
    `import { register } from "node:module"; register(${JSON.stringify(`file://${hook}`)});\n`,
  );
  const p = spawnSync(process.execPath, ["--import", reg, BIN, ...args], {
    cwd: dir,
    encoding: "utf8",
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(input === undefined ? {} : { input }),
  });
  return { p, loaded: readFileSync(log, "utf8") };
}

describe("a workspace whose newest chunk is damaged", () => {
  it("a write says why and exits at once (was: the error, then a minute's wait on the library's load timer)", () => {
    const cache = tempDir("damaged-cache");
    dirs.push(cache);
    const { dir, k } = workspace("damaged", cache);
    expect(k(["add", "slot", "a", "Int = 1"]).code).toBe(0);
    const docDir = path.join(dir, ".kumiki/automerge");
    const chunks = readdirSync(docDir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\/(snapshot|incremental)$/.test(e.parentPath))
      .map((e) => path.join(e.parentPath, e.name));
    expect(chunks.length).toBeGreaterThan(0);
    for (const c of chunks) {
      const b = readFileSync(c);
      for (let i = b.length >> 1; i < Math.min(b.length, (b.length >> 1) + 4); i++) b[i] = b[i]! ^ 0xff;
      writeFileSync(c, b);
    }
    // Bounded well below the 60 s the library's timer would hold the process for.
    const r = spawnSync(process.execPath, [BIN, "add", "slot", "b", "Int = 2"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", ...testEnv(cache) },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^kumiki add: the workspace's stored document is damaged \(\S+: checksum mismatch/,
    );
    expect(r.stderr).toContain("kumiki repair");
  });
});

describe("a workspace this process cannot write (another user's, or a read-only mount)", () => {
  it("status, view, list, export and check work, take no lock and write nothing; a write says why", (ctx) => {
    const cache = tempDir("ro-cache");
    dirs.push(cache);
    const { dir, k } = workspace("readonly", cache);
    expect(k(["add", "slot", "a", "Int = 1"]).code).toBe(0);
    const store = path.join(dir, ".kumiki");
    // Root may write anywhere: a read-only bind mount of .kumiki takes its write access away (as
    // a read-only mount does); any other user loses it by the files' modes (as another user's
    // workspace does). Running as another user would also need the clone readable by it.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      try {
        execFileSync("mount", ["--bind", store, store], { stdio: "ignore" });
      } catch {
        ctx.skip("as root this needs a read-only bind mount, and mount is not allowed here");
      }
      try {
        execFileSync("mount", ["-o", "remount,bind,ro", store], { stdio: "ignore" });
      } catch (e) {
        execFileSync("umount", [store], { stdio: "ignore" });
        throw e;
      }
    } else chmodRecursive(store, false);
    const readerCache = tempDir("ro-reader-cache");
    dirs.push(readerCache);
    const before = listing(store);
    const as = (argv: string[]) =>
      spawnSync(process.execPath, [BIN, ...argv], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: readerCache, ...testEnv(readerCache) },
        encoding: "utf8",
        timeout: 30_000,
      });
    try {
      expect(as(["status"]).stdout).toMatch(/^1 definition · 1 op/);
      expect(as(["view", "slot.a"]).stdout).toBe("slot a : Int = 1\n");
      expect(as(["list"]).stdout).toBe("slot.a\n");
      expect(as(["export"]).stdout).toBe("slot a : Int = 1");
      expect(as(["check", "--json"]).status).toBe(1); // no app: an error, not a failure to open
      const w = as(["add", "slot", "b", "Int = 2"]);
      expect(w.status).toBe(1);
      expect(w.stderr).toContain("read-only (no write access to");
      expect(listing(store)).toEqual(before);
    } finally {
      if (asRoot) execFileSync("umount", [store], { stdio: "ignore" });
      else chmodRecursive(store, true);
    }
  });
});

/** Every file under `root` with its size and content hash-free identity (path, size, mtime). */
function listing(root: string): string[] {
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .map((e) => {
      const p = path.join(e.parentPath, e.name);
      const st = statSync(p);
      return `${path.relative(root, p)} ${e.isFile() ? st.size : "dir"} ${st.mtimeMs}`;
    })
    .sort();
}

function chmodRecursive(root: string, write: boolean): void {
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[]) {
    const p = path.join(e.parentPath, e.name);
    chmodSync(p, e.isDirectory() ? (write ? 0o755 : 0o555) : write ? 0o644 : 0o444);
  }
  chmodSync(root, write ? 0o755 : 0o555);
}
