/**
 * `kumiki serve --log-format json`: the real bin's stderr is one JSON object per line (pino) with a
 * level, a time and the event's fields, so a log collector can filter refusals by code and follow
 * one connection from `connected` to `closed` by its id. A format it does not know is refused.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { syncWorkspace } from "@kumiki-graph/sync-server";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { cleanup, runBin, startServe, stopBin, tempDir } from "./support.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  cleanup(...dirs.splice(0));
});

const TOKEN = "log-token-0123456789abcdef";

interface Line {
  readonly level: string;
  readonly time: string;
  readonly msg: string;
  readonly event?: string;
  readonly [field: string]: unknown;
}

describe("kumiki serve --log-format json", () => {
  it("writes each event as a JSON line: refusals by code, a connection followed by its id", async () => {
    const root = tempDir("serve-log");
    dirs.push(root);
    const ws = path.join(root, "ws");
    const opened = await openWorkspaceStore(ws, { author: "agent:a", create: true });
    if (!opened.ok) throw new Error(opened.error.message);
    expect((await opened.value.store.add({ layer: "slot", name: "n", body: ": Int = 1" })).ok).toBe(true);
    await opened.value.close();
    fs.writeFileSync(
      path.join(root, "tokens.json"),
      JSON.stringify({ format: 1, tokens: [{ name: "agent:a", token: TOKEN, graphs: { "*": "write" } }] }),
    );
    const started = await startServe(root, ["--log-format", "json"]);
    children.push(started.child);
    let err = "";
    started.child.stderr!.on("data", (b: Buffer) => {
      err += b.toString("utf8");
    });
    // Refused: no token.
    await new Promise<void>((resolve) => {
      const raw = new WebSocket(started.url);
      raw.on("unexpected-response", () => {
        raw.terminate();
        resolve();
      });
      raw.on("error", () => resolve());
    });
    expect((await syncWorkspace(ws, { url: started.url, token: TOKEN, timeoutMs: 20_000 })).ok).toBe(true);
    expect(await stopBin(started.child)).toBe(0);

    const lines = err.trimEnd().split("\n");
    const parsed = lines.map((l) => JSON.parse(l) as Line);
    for (const l of parsed) {
      expect(["info", "warn", "error"]).toContain(l.level);
      expect(Number.isNaN(Date.parse(l.time))).toBe(false);
      expect(typeof l.msg).toBe("string");
    }
    const refused = parsed.find((l) => l.event === "refused");
    expect(refused).toMatchObject({ level: "warn", code: "unauthorized", token: "(none)" });
    const connected = parsed.find((l) => l.event === "connected");
    expect(connected).toMatchObject({ level: "info", token: "agent:a" });
    expect(connected?.connection).toMatch(/^c\d+$/);
    expect(parsed.find((l) => l.event === "closed" && l.connection === connected?.connection)).toBeDefined();
  }, 60_000);

  it("refuses a format it does not know", () => {
    const root = tempDir("serve-log-bad");
    dirs.push(root);
    const r = runBin(["serve", "--log-format", "xml"], { cwd: root, env: {} });
    expect([r.code, r.err.trim()]).toEqual([2, 'kumiki serve: --log-format takes text or json, got "xml"']);
  });
});
