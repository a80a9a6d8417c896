/**
 * A clone onto a disk that fills up: an error that says so, and nothing left behind (it used to be
 * an "internal error" with a stack trace, and a half-made workspace naming a graph it never stored,
 * which blocked the next clone). A real full disk: a small tmpfs, mounted here when the test runs
 * as root (else skipped, saying why), grown afterwards to show the next clone succeeds.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { repoRoot } from "@kumiki-graph/test-support/corpus";
import { mountable } from "@kumiki-graph/test-support/tmpfs";
import { afterEach, describe, expect, it } from "vitest";
import { cloneWorkspace, type SyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, serve, TOKENS, tempDir, tokensFor, withStore } from "./helpers.js";

const dirs: string[] = [];
const mounts: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  // Lazily: a killed server process may still be letting go of its files.
  for (const m of mounts.splice(0)) execFileSync("umount", ["-l", m], { stdio: "ignore" });
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("a clone onto a full disk", () => {
  if (!mountable) it.skip("needs root to mount a small tmpfs (a real full disk): skipped", () => {});
  it.skipIf(!mountable)(
    "fails with storage-failed naming ENOSPC, leaves nothing, and the next clone works",
    async () => {
      const root = tempDir("full-disk");
      dirs.push(root);
      const a = path.join(root, "a");
      const graph = await newWorkspace(a);
      const server = await serve(path.join(root, "server"), tokensFor(graph));
      servers.push(server);
      await withStore(a, "agent:a", async (s) => {
        // About 300 KB of text: more than the 100 KB the clone will have.
        for (let i = 0; i < 3; i++)
          must(await s.add({ layer: "slot", name: `big${i}`, body: `Text = "${"x".repeat(100_000)}"` }));
      });
      must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 }));

      const disk = path.join(root, "disk");
      fs.mkdirSync(disk);
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=100k", "tmpfs", disk]);
      mounts.push(disk);
      const target = path.join(disk, "clone");
      const r = await cloneWorkspace(`${server.url}/${graph}`, target, {
        token: TOKENS.alice,
        timeoutMs: 20_000,
      });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("storage-failed");
        expect(r.error.message).toContain("ENOSPC");
        expect(r.error.message).toContain("nothing was kept");
      }
      expect(fs.readdirSync(disk)).toEqual([]);

      // Space comes back: the same clone now works.
      execFileSync("mount", ["-o", "remount,size=8m", disk]);
      const again = must(
        await cloneWorkspace(`${server.url}/${graph}`, target, { token: TOKENS.alice, timeoutMs: 20_000 }),
      );
      expect(again.ops).toBe(3);
    },
    60_000,
  );
});

describe("a sync server whose disk fills up", () => {
  const procs: ChildProcess[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.kill("SIGKILL");
  });
  if (!mountable) it.skip("needs root to mount a small tmpfs (a real full disk): skipped", () => {});
  it.skipIf(!mountable)(
    "keeps serving, says 503 on /health, confirms no push (the client says so at once), and resumes when space returns",
    async () => {
      const root = tempDir("server-full");
      dirs.push(root);
      const disk = path.join(root, "disk");
      fs.mkdirSync(disk);
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", disk]);
      mounts.unshift(disk);
      // The real server process: automerge-repo's failed background save was an unhandled
      // rejection that ended it (3 of 3 runs).
      const server = spawn(
        process.execPath,
        [
          path.join(repoRoot, "packages/cli/bin/kumiki.js"),
          "serve",
          "--port",
          "0",
          "--data",
          path.join(disk, "data"),
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      procs.push(server);
      let out = "";
      server.stdout!.on("data", (b: Buffer) => {
        out += b.toString();
      });
      const deadline = Date.now() + 20_000;
      while (!/listening on (ws:\/\/\S+)/.test(out) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const url = /listening on (ws:\/\/\S+)/.exec(out)![1]!;
      const health = async () => {
        const r = await fetch(`${url.replace("ws:", "http:")}/health`);
        return { status: r.status, body: (await r.json()) as { ok: boolean; storage?: { fault: string } } };
      };

      const a = path.join(root, "a");
      await newWorkspace(a);
      await withStore(a, "agent:a", async (s) => {
        must(await s.add({ layer: "slot", name: "small", body: "Int = 1" }));
      });
      must(await syncWorkspace(a, { url, timeoutMs: 20_000 }));
      // Incompressible text, larger than the disk has left.
      const noise = randomBytes(600_000).toString("base64");
      await withStore(a, "agent:a", async (s) => {
        must(await s.add({ layer: "slot", name: "big", body: `Text = "${noise}"` }));
      });
      const full = await syncWorkspace(a, { url, timeoutMs: 20_000 });
      expect(full.ok).toBe(false);
      if (!full.ok) {
        expect(full.error.code).toBe("storage-failed");
        expect(full.error.message).toContain("ENOSPC");
      }
      expect(server.exitCode).toBeNull();
      expect(await health()).toMatchObject({
        status: 503,
        body: { ok: false, storage: { fault: "ENOSPC" } },
      });
      expect(fs.readdirSync(path.join(disk, "data", ".tmp"))).toEqual([]);

      // Space returns: the next sync is confirmed, /health is green, a fresh clone has both ops.
      execFileSync("mount", ["-o", "remount,size=8m", disk]);
      must(await syncWorkspace(a, { url, timeoutMs: 20_000 }));
      expect(await health()).toMatchObject({ status: 200 });
      const graph = JSON.parse(fs.readFileSync(path.join(a, ".kumiki", "config.json"), "utf8"))
        .graph as string;
      const c = must(await cloneWorkspace(`${url}/${graph}`, path.join(root, "c"), { timeoutMs: 20_000 }));
      expect(c.ops).toBe(2);
    },
    60_000,
  );
});
