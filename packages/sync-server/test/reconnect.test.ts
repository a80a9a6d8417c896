/**
 * A client whose server is down backs off: it tries again after 250 ms, then 0.5 s, 1 s, 2 s, …
 * (up to 10 s), not every 250 ms for as long as the server is gone, and connects once the server is
 * back, its delay back to the start. A real KumikiClientAdapter and a real sync server on 127.0.0.1.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { PeerId } from "@automerge/automerge-repo";
import { afterEach, describe, expect, it } from "vitest";
import { KumikiClientAdapter } from "../src/client-adapter.js";
import { type SyncServer, startSyncServer } from "../src/server.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on (taken, then let go). */
async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe("KumikiClientAdapter: reconnecting", () => {
  it("backs off while the server is down, and connects when it is back", async () => {
    const port = await freePort();
    const client = new KumikiClientAdapter(`ws://127.0.0.1:${port}`);
    cleanups.push(() => client.disconnect());
    client.connect("backoff-test" as PeerId, {});
    await new Promise((r) => setTimeout(r, 3_000));
    // Every 250 ms would be 12 or 13 tries in 3 s; backing off (0, 0.25, 0.75, 1.75 s, then 3.75)
    // it is 4 or 5, whatever the jitter.
    const tried = client.stats.attempts;
    expect(tried).toBeGreaterThanOrEqual(3);
    expect(tried).toBeLessThanOrEqual(6);
    expect(client.lastProblem?.code).toBe("unreachable");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-reconnect-"));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const started = await startSyncServer({ dataDir: dir, port });
    if (!started.ok) throw new Error(started.error.message);
    const server: SyncServer = started.value;
    cleanups.push(() => server.close());
    // The next try is at most 10 s away (bounded wait: 15 s).
    for (let i = 0; i < 150 && !client.connected; i++) await new Promise((r) => setTimeout(r, 100));
    expect(client.connected).toBe(true);
    expect(client.stats.connections).toBe(1);
  }, 30_000);
});

describe("a one-off sync or clone against no server", () => {
  it("refuses a malformed server URL at once, and gives up on a server not there after a few tries, not at its timeout", async () => {
    const { initWorkspace, openWorkspaceStore } = await import("@kumiki-graph/storage-automerge");
    const { cloneWorkspace, syncWorkspace } = await import("../src/client.js");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-unreachable-"));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ws = path.join(dir, "ws");
    const init = await initWorkspace(ws);
    if (!init.ok) throw new Error(init.error.message);
    const graph = init.value.log.url;
    await init.value.log.close();
    const store = await openWorkspaceStore(ws, { author: "agent:a" });
    if (!store.ok) throw new Error(store.error.message);
    expect((await store.value.store.add({ layer: "slot", name: "kept", body: "Int = 1" })).ok).toBe(true);
    await store.value.close();
    const listing = () => fs.readdirSync(path.join(ws, ".kumiki"), { recursive: true }).sort();
    const before = listing();

    for (const url of ["htp://x", "not a url", "ws://u:p@127.0.0.1:1/"]) {
      const r = await syncWorkspace(ws, { url, timeoutMs: 20_000 });
      expect(r.ok ? "ok" : r.error.code, url).toBe("invalid-url");
    }
    const alternate = await syncWorkspace(ws, {
      url: "ws://127.0.0.1:1",
      alternates: ["http://x"],
      timeoutMs: 20_000,
    });
    expect(alternate.ok ? "ok" : alternate.error.code).toBe("invalid-url");

    // Ended by its tries (four with the back-off: 0, 0.25, 0.75, 1.75 s), not by the 20 s timeout,
    // which would answer `timeout`, "did not finish within 20 s".
    const port = await freePort();
    const sync = await syncWorkspace(ws, { url: `ws://127.0.0.1:${port}`, timeoutMs: 20_000 });
    expect(sync.ok).toBe(false);
    if (sync.ok) return;
    expect(sync.error.code).toBe("unreachable");
    expect(sync.error.message).toMatch(
      /ECONNREFUSED \(4 tries over [\d.]+ s, none answered\); nothing was exchanged/,
    );
    expect(listing()).toEqual(before);

    const clone = await cloneWorkspace(`ws://127.0.0.1:${port}/${graph}`, path.join(dir, "copy"), {
      timeoutMs: 20_000,
    });
    expect(clone.ok ? "ok" : `${clone.error.code}: ${clone.error.message}`).toMatch(
      /^unreachable: .*4 tries/,
    );
    expect(fs.existsSync(path.join(dir, "copy"))).toBe(false);
  }, 60_000);
});
