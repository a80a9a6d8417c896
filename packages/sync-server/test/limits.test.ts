/**
 * The server's bounds on what a peer sends: a message over `maxMessageBytes` is not read (the
 * connection is closed, 1009) and the client says why and stops, where it used to retry; a change
 * whose bundle is over `maxChangeBytes` is refused with its size and the limit. The server serves
 * on in both cases. A real server and real workspaces on 127.0.0.1.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cloneWorkspace, type SyncServer, startSyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, tempDir, withStore } from "./helpers.js";

const dirs: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function serveWith(root: string, limits: { maxMessageBytes?: number; maxChangeBytes?: number }) {
  const s = await startSyncServer({ dataDir: path.join(root, "server"), ...limits });
  if (!s.ok) throw new Error(s.error.message);
  servers.push(s.value);
  return s.value;
}

/** `n` characters of text that Automerge's compression cannot shrink much. */
function noise(n: number): string {
  let s = "";
  let x = 12345;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    s += x.toString(36);
  }
  return s.slice(0, n);
}

describe("what a peer may send", () => {
  it("a change over maxChangeBytes is refused with its size and the limit; a smaller graph is taken", async () => {
    const root = tempDir("limit-change");
    dirs.push(root);
    const server = await serveWith(root, { maxChangeBytes: 100_000 });
    const small = path.join(root, "small");
    await newWorkspace(small);
    await withStore(small, "agent:a", async (s) =>
      must(await s.add({ layer: "slot", name: "note", body: `Text = "${noise(50_000)}"` })),
    );
    expect(must(await syncWorkspace(small, { url: server.url, timeoutMs: 20_000 })).unpushed).toBe(0);
    const big = path.join(root, "big");
    const graph = await newWorkspace(big);
    await withStore(big, "agent:a", async (s) =>
      must(await s.add({ layer: "slot", name: "blob", body: `Text = "${noise(150_000)}"` })),
    );
    const r = await syncWorkspace(big, { url: server.url, timeoutMs: 20_000 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("refused");
    expect(r.error.message).toMatch(
      /a bundle of 150,\d{3} bytes, over this server's limit of 100,000 bytes per change/,
    );
    // Nothing of it is held, and the server serves on.
    expect(server.health().ok).toBe(true);
    const c = await cloneWorkspace(`${server.url}/${graph}`, path.join(root, "check"), { timeoutMs: 5_000 });
    expect(c.ok && c.value.ops).not.toBe(1);
  });

  it("a message over maxMessageBytes closes the connection unread: the client says why at once and does not retry", async () => {
    const root = tempDir("limit-message");
    dirs.push(root);
    const server = await serveWith(root, { maxMessageBytes: 64 * 1024 });
    const ws = path.join(root, "ws");
    await newWorkspace(ws);
    await withStore(ws, "agent:a", async (s) =>
      must(await s.add({ layer: "slot", name: "blob", body: `Text = "${noise(200_000)}"` })),
    );
    const r = await syncWorkspace(ws, { url: server.url, timeoutMs: 30_000 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("refused");
    expect(r.error.message).toMatch(/a message was over its size limit.*--max-message/);
    // A refusal, not a timeout: it stopped, where it used to send the same message until the deadline.
    expect(server.health().ok).toBe(true);
    expect(server.refusals().at(-1)?.reason).toMatch(
      /a message over 65,536 bytes \(maxMessageBytes\): connection closed unread/,
    );
  });
});
