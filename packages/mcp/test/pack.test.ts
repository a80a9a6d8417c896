/**
 * What a user installs: `npm pack` the five packages, install the tarballs into an empty prefix
 * (offline, from the npm cache), start the installed `kumiki` bin through a real MCP client, and
 * call every tool. Nothing from this checkout is on the installed copy's path.
 *
 * The packing and the install are scripts/packed-install.mjs (the container's context is made by
 * them too): the prefix gets the repository's lockfile, with the five packages at their tarballs.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "@kumiki-graph/test-support/corpus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPacked, PACKAGES, packAll } from "../../../scripts/packed-install.mjs";
import { type Called, connect, dispose, errorOf, type Session, tempDir } from "./support/session.js";

/**
 * Runs the checkout's TypeScript on `file` in `dir` as a user's project would: nodenext, strict,
 * skipLibCheck off, Node's own types and nothing else from this checkout (plus `options`).
 */
async function tsc(dir: string, file: string, options: Record<string, unknown>) {
  const compilerOptions = {
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    strict: true,
    skipLibCheck: false,
    typeRoots: [path.join(repoRoot, "node_modules/@types")],
    types: ["node"],
    ...options,
  };
  await writeFile(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: [file] }));
  return spawnSync(process.execPath, [path.join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", dir], {
    encoding: "utf8",
    timeout: 120_000,
  });
}

function ok(c: Called): Record<string, unknown> {
  expect(c.isError, JSON.stringify(c.value)).toBe(false);
  return c.value;
}

describe("the packed packages, installed", () => {
  let root: string | undefined;
  let prefix = "";
  let bin = "";
  let store = "";
  let s: Session | undefined;

  beforeAll(async () => {
    root = await tempDir("pack");
    const tarballs = path.join(root, "tarballs");
    await packAll(repoRoot, tarballs);
    expect(await readdir(tarballs)).toHaveLength(PACKAGES.length);
    prefix = path.join(root, "prefix");
    await installPacked(repoRoot, prefix, tarballs, { offline: true });
    bin = path.join(prefix, "node_modules", ".bin", "kumiki");
    store = path.join(root, "store");
    const init = spawnSync(bin, ["init", store], { encoding: "utf8" });
    expect(init.status, init.stderr).toBe(0);
    s = await connect(bin, ["mcp", "serve", "--store", store], { hostPath: store });
  }, 300_000);

  afterAll(async () => {
    await s?.close();
    await dispose(root);
  });

  it("ships what runs, its licence and a README: no build info, no source maps of sources it lacks", async () => {
    for (const p of PACKAGES) {
      const installed = path.join(prefix, "node_modules", "@kumiki-graph", p);
      const shipped = [
        "LICENSE",
        "README.md",
        ...(p === "cli" ? ["bin", "bundle"] : []),
        "dist",
        "package.json",
        // The live view's page (kumiki ui), served from the package as it is installed.
        ...(p === "sync-server" ? ["ui"] : []),
      ];
      expect((await readdir(installed)).sort(), p).toEqual(shipped);
      expect(await readFile(path.join(installed, "LICENSE"), "utf8")).toContain("Apache License");
      if (p === "sync-server")
        expect((await readdir(path.join(installed, "ui"))).sort()).toEqual([
          "app.js",
          "index.html",
          "map.js",
          "style.css",
        ]);
      const files = (await readdir(path.join(installed, "dist"), { recursive: true })).map(String);
      expect(
        files.filter((f) => /\.test\.|(^|[/\\])test[/\\]|\.map$|\.tsbuildinfo$/.test(f)),
        p,
      ).toEqual([]);
    }
  });

  it("type-checks a TypeScript consumer of every package with skipLibCheck off (every type they mention resolves)", async () => {
    await writeFile(
      path.join(prefix, "consumer.ts"),
      [
        'import * as cli from "@kumiki-graph/cli";',
        'import * as core from "@kumiki-graph/core";',
        'import * as mcp from "@kumiki-graph/mcp";',
        'import * as storage from "@kumiki-graph/storage-automerge";',
        'import * as sync from "@kumiki-graph/sync-server";',
        "export const all = [cli, core, mcp, storage, sync];",
        // Types the API's signatures mention are exported (Store.read() returns a GraphReader).
        'import type { DefinitionState, DefinitionView, GraphReader, StoreDamage } from "@kumiki-graph/core";',
        "export type Mentioned = [DefinitionState, DefinitionView, GraphReader, StoreDamage];",
        "export const reader = (s: core.Store): GraphReader => s.read();",
        // Inputs are typed: a bundle is items in either form, ingest takes ops with an op-id.
        "export const typed = (s: core.Store) => [",
        '  s.apply([{ op: "replace", layer: "slot", name: "count", body: "Int = 1" }]),',
        '  s.apply({ ops: [{ op: "rename", qname: "slot.count", newName: "step" }] }),',
        '  s.preview([{ op: "rename", layer: "slot", name: "count", "new-name": "step" }]),',
        '  s.ingest({ "op-id": "op_01JC0000000000000000000000" }),',
        "  // @ts-expect-error a bundle is a list of items (or { ops }), not a number",
        "  s.apply(42),",
        "  // @ts-expect-error an item names its kind with one of the op kinds",
        '  s.apply([{ op: "upsert", qname: "slot.count" }]),',
        '  s.list("slot"),',
        "  // @ts-expect-error a layer is one of the language's layers",
        '  s.list("slots"),',
        "  // @ts-expect-error ingest takes ops (JSON objects with an op-id)",
        '  s.ingest("op_01JC0000000000000000000000"),',
        "];",
        "",
      ].join("\n"),
    );
    const r = await tsc(prefix, "consumer.ts", { noEmit: true });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  }, 150_000);

  it("runs the core README's example as written, against the installed package", async () => {
    const readme = await readFile(path.join(repoRoot, "packages/core/README.md"), "utf8");
    const code = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    await writeFile(path.join(prefix, "readme-example.mjs"), code!);
    const run = () =>
      spawnSync(process.execPath, [path.join(prefix, "readme-example.mjs")], {
        cwd: prefix,
        encoding: "utf8",
      });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.trimEnd()).toBe("slot count : Int = 0");
    // A second run says why, as its comment promises.
    expect(run().stderr).toContain("duplicate-name");
  });

  it("ships exactly the pinned files (api/files.txt; a bundle chunk's hash as [hash])", async () => {
    for (const p of PACKAGES) {
      const tarball = path.join(root!, "tarballs", `kumiki-graph-${p}-0.1.0.tgz`);
      const listed = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
        .split("\n")
        .filter((f) => f !== "")
        .map((f) => f.replace(/^package\//, "").replace(/^(bundle\/[\w-]+?)-[\w-]{8}\.js$/, "$1-[hash].js"))
        .sort();
      const pinned = path.join(repoRoot, "packages", p, "api", "files.txt");
      const text = `${listed.join("\n")}\n`;
      if (process.env.KUMIKI_UPDATE_API === "1") await writeFile(pinned, text);
      expect(text, `${p}: run with KUMIKI_UPDATE_API=1 and review the diff`).toBe(
        await readFile(pinned, "utf8"),
      );
    }
  });

  it("compiles and runs a CommonJS and an ES module TypeScript consumer: require works (Node >= 20.19)", async () => {
    // The same program twice: in a "type": "commonjs" package tsc emits require() for its imports,
    // and Node (from 20.19 and 22.12, as the packages' engines say) loads ES modules that way.
    const program = (esm: boolean) =>
      [
        'import fs from "node:fs";',
        'import os from "node:os";',
        'import path from "node:path";',
        'import { parseSelector } from "@kumiki-graph/core";',
        'import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";',
        "async function main(): Promise<void> {",
        '  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-consumer-"));',
        "  const made = await initWorkspace(dir);",
        "  if (!made.ok) throw new Error(made.error.message);",
        "  await made.value.log.close();",
        '  const opened = await openWorkspaceStore(dir, { author: "agent:consumer" });',
        "  if (!opened.ok) throw new Error(opened.error.message);",
        '  const added = await opened.value.store.add({ layer: "slot", name: "count", body: ": Int = 0" });',
        "  if (!added.ok) throw new Error(added.error.message);",
        '  const view = opened.value.store.view("slot.count");',
        `  console.log(${esm ? '"esm"' : '"cjs"'}, typeof require, JSON.stringify(parseSelector("slot.*")));`,
        "  console.log(view.ok ? view.value.text.trimEnd() : view.error.message);",
        "  await opened.value.close();",
        "  fs.rmSync(dir, { recursive: true });",
        "}",
        "main().catch((e: unknown) => { console.error(e); process.exit(1); });",
        "",
      ].join("\n");
    const results: string[] = [];
    for (const kind of ["commonjs", "module"] as const) {
      const dir = path.join(prefix, `consumer-${kind}`);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: kind }));
      await writeFile(path.join(dir, "main.ts"), program(kind === "module"));
      const compiled = await tsc(dir, "main.ts", { esModuleInterop: true, outDir: "out" });
      expect(compiled.status, compiled.stdout + compiled.stderr).toBe(0);
      const emitted = await readFile(path.join(dir, "out", "main.js"), "utf8");
      // What makes it a CommonJS consumer: the package is loaded by require, not import.
      expect(emitted.includes('require("@kumiki-graph/core")'), emitted).toBe(kind === "commonjs");
      const run = spawnSync(process.execPath, [path.join(dir, "out", "main.js")], {
        cwd: dir,
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(run.status, run.stderr).toBe(0);
      // No experimental warning either: the require is an ordinary one.
      expect(run.stderr).toBe("");
      results.push(run.stdout);
    }
    const selector = JSON.stringify({ kind: "name", layer: "slot", pattern: "*", wildcard: true });
    expect(results).toEqual([
      `cjs function ${selector}\nslot count : Int = 0\n`,
      `esm undefined ${selector}\nslot count : Int = 0\n`,
    ]);
  }, 300_000);

  it("npx kumiki runs from the installed tarballs: --help, mcp serve --doctor, serve", async () => {
    const npx = (...argv: string[]) =>
      spawnSync("npx", ["--offline", "--no-install", "kumiki", ...argv], {
        cwd: prefix,
        encoding: "utf8",
        timeout: 120_000,
      });
    const help = npx("--help");
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^kumiki — edit a Kumiki program/);
    expect(help.stdout).toMatch(/\n {2}init {2,}/);
    const doctor = npx("mcp", "serve", "--doctor");
    expect(doctor.stdout).toContain("doctor: all checks passed");
    expect(doctor.status).toBe(0);
    // serve: its first line says where it listens; /health answers there; SIGTERM stops it (npx
    // and the server it started: the group is signalled).
    const data = path.join(root!, "served");
    const server = spawn(
      "npx",
      ["--offline", "--no-install", "kumiki", "serve", "--port", "0", "--data", data, "--json"],
      {
        cwd: prefix,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        let err = "";
        const timer = setTimeout(() => reject(new Error(`no listening line in 60 s: ${out}${err}`)), 60_000);
        server.stderr.on("data", (b: Buffer) => {
          err += b.toString("utf8");
        });
        server.stdout.on("data", (b: Buffer) => {
          out += b.toString("utf8");
          const nl = out.indexOf("\n");
          if (nl >= 0) {
            clearTimeout(timer);
            resolve(out.slice(0, nl));
          }
        });
        server.on("exit", (code) => {
          clearTimeout(timer);
          reject(new Error(`npx kumiki serve exited ${String(code)}: ${out}${err}`));
        });
      });
      const { listening } = JSON.parse(line) as { listening: { url: string } };
      const health = await fetch(`${listening.url.replace(/^ws/, "http")}/health`);
      expect(health.status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      if (server.exitCode === null && server.pid !== undefined) process.kill(-server.pid, "SIGTERM");
      await exited;
    }
  }, 300_000);

  it("installs the CLI without its optional part (sync): the graph verbs and the MCP server (in its bundle) work, and the sync verbs say what to install", async () => {
    const alone = path.join(root!, "cli-alone");
    await installPacked(repoRoot, alone, path.join(root!, "tarballs"), {
      offline: true,
      only: ["core", "storage-automerge", "cli"],
    });
    const installed = (await readdir(path.join(alone, "node_modules", "@kumiki-graph"))).sort();
    expect(installed).toEqual(["cli", "core", "storage-automerge"]);
    // Nothing installed for the MCP server or the sync server (express, hono, the MCP SDK): the
    // MCP server and its SDK come in the CLI's bundle.
    const top = await readdir(path.join(alone, "node_modules"));
    expect(top.filter((d) => ["express", "hono", "@modelcontextprotocol", "ws"].includes(d))).toEqual([]);
    // What the install weighs, beside the full set's (printed for the record, not asserted).
    const weigh = (dir: string) =>
      execFileSync("du", ["-sk", path.join(dir, "node_modules")], { encoding: "utf8" });
    process.stdout.write(
      `cli alone: ${weigh(alone).split("\t")[0]} KB; all five: ${weigh(prefix).split("\t")[0]} KB\n`,
    );
    const kumiki = path.join(alone, "node_modules", ".bin", "kumiki");
    const run = (...argv: string[]) =>
      spawnSync(kumiki, argv, { cwd: alone, encoding: "utf8", timeout: 60_000 });
    expect(run("--help").status).toBe(0);
    expect(run("init").status).toBe(0);
    expect(run("add", "slot", "count", "Int = 0").status).toBe(0);
    expect(run("view", "slot.count").stdout).toContain("slot count : Int = 0");
    // A program of one slot has no app yet (E0003): the checker ran.
    const checked = run("check");
    expect(checked.stdout).toContain("E0003");
    expect(checked.status).toBe(1);
    // The MCP server and its SDK are in the CLI's bundle: a real round trip, none of them installed.
    const doctor = run("mcp", "serve", "--doctor");
    expect(doctor.stdout).toContain("doctor: all checks passed");
    expect(doctor.status, doctor.stderr).toBe(0);
    for (const [argv, part] of [
      [["serve", "--port", "0"], "@kumiki-graph/sync-server"],
      [["remote", "list"], "@kumiki-graph/sync-server"],
    ] as const) {
      const r = run(...argv);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(`needs ${part}`);
      expect(r.stderr).toContain(`npm install ${part}`);
    }
  }, 300_000);

  it("--doctor passes on the installed copy", () => {
    const r = spawnSync(bin, ["mcp", "serve", "--doctor"], { encoding: "utf8", timeout: 60_000 });
    expect(r.stdout).toContain("doctor: all checks passed");
    expect(r.status).toBe(0);
  });

  it("answers every tool", async () => {
    const session = s!;
    const { tools } = await session.client.listTools();
    expect(tools).toHaveLength(16);
    const called = new Set<string>();
    const call = async (name: string, args: Record<string, unknown>): Promise<Called> => {
      called.add(name);
      return session.call(name, args);
    };
    expect(ok(await call("kumiki_list", {})).definitions).toEqual([]);
    ok(await call("kumiki_add", { layer: "slot", name: "count", body: ": Int = 0", task: "pack" }));
    ok(
      await call("kumiki_add", { layer: "tile", name: "Counter", body: "= text(count.show)", task: "pack" }),
    );
    expect(ok(await call("kumiki_view", { selector: "tile.Counter", with_deps: true })).text).toContain(
      "slot count",
    );
    ok(await call("kumiki_replace", { qname: "slot.count", body: ": Int = 1", task: "pack" }));
    ok(
      await call("kumiki_edit", {
        qname: "slot.count",
        patch: [{ find: "= 1", replace: "= 2" }],
        task: "pack",
      }),
    );
    ok(await call("kumiki_rename", { qname: "slot.count", new_name: "step", task: "pack" }));
    expect(ok(await call("kumiki_view", { selector: "tile.Counter" })).text).toContain("text(step.show)");
    const refs = ok(await call("kumiki_refs", { qname: "slot.step" }));
    expect((refs.referrers as { qname: string }[]).map((r) => r.qname)).toEqual(["tile.Counter"]);
    expect((ok(await call("kumiki_history", { qname: "slot.step" })).definitions as unknown[]).length).toBe(
      1,
    );
    expect((ok(await call("kumiki_episode", { episode_id: "pack" })).entries as unknown[]).length).toBe(5);
    const check = ok(await call("kumiki_check", {}));
    expect(Array.isArray(check.diagnostics)).toBe(true);
    expect(ok(await call("kumiki_fix", { error_code: "E0103" })).proposals).toEqual([]);
    expect(ok(await call("kumiki_fix_apply", { error_code: "E0103" }))).toMatchObject({
      applied: [],
      refused: [],
    });
    expect(ok(await call("kumiki_conflicts", {}))).toEqual({ policy: "strict", conflicts: [] });
    const bundled = ok(
      await call("kumiki_apply", {
        ops: [
          { op: "add", layer: "slot", name: "extra", body: "Int = 0" },
          { op: "replace", layer: "slot", name: "extra", body: "Int = 1" },
        ],
      }),
    );
    expect((bundled.opIds as string[]).length).toBe(2);
    expect(
      (ok(await call("kumiki_revert", { op_id: (bundled.opIds as string[])[1]! })).opIds as string[]).length,
    ).toBe(1);
    expect(errorOf(await call("kumiki_remove", { qname: "slot.step" })).code).toBe("referenced");
    ok(await call("kumiki_remove", { qname: "tile.Counter" }));
    expect(ok(await call("kumiki_remove", { qname: "slot.step" })).removed).toEqual(["slot.step"]);
    expect([...called].sort()).toEqual(tools.map((t) => t.name).sort());
  });
});
