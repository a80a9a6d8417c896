/**
 * A server that is closed (SIGTERM in `kumiki serve`) drains: a request it received is answered
 * before it stops, a request that comes during the drain on a kept-alive connection is answered 503
 * `shutting-down` (nothing done), a new connection is not taken, and a connected peer's socket is
 * closed with 1001 (going away: reconnect later), not cut.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { CLOSE_GOING_AWAY, type SyncServer, startSyncServer } from "../src/index.js";
import { tempDir } from "./helpers.js";

const dirs: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A POST over `agent` (one kept-alive connection): its status and body, or the error's code. */
function post(url: string, agent: http.Agent): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: "POST", agent }, (res) => {
      let body = "";
      res.on("data", (b: Buffer) => {
        body += b.toString("utf8");
      });
      res.on("end", () => resolve(`${res.statusCode} ${body.trim()}`));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end("{}");
  });
}

describe("closing a server drains it", () => {
  it("answers what it received, turns away what comes after, and closes peers with 1001", async () => {
    const root = tempDir("drain");
    dirs.push(root);
    let received!: () => void;
    const arrived = new Promise<void>((r) => {
      received = r;
    });
    const started = await startSyncServer({
      dataDir: path.join(root, "server"),
      // A route that takes 300 ms to answer, as an MCP write storing durably does.
      routes: (req, res) => {
        if (req.url !== "/slow") return false;
        received();
        setTimeout(() => {
          res.writeHead(200, { "content-type": "text/plain" });
          res.end("done");
        }, 300);
        return true;
      },
    });
    if (!started.ok) throw new Error(started.error.message);
    const server = started.value;
    const base = server.url.replace(/^ws/, "http");

    const peer = new WebSocket(server.url);
    await new Promise((r) => peer.once("open", r));
    const peerClosed = new Promise<number>((r) => peer.once("close", (code) => r(code)));

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // The connection is opened and kept alive before the close starts.
    expect(await post(`${base}/nothing`, agent)).toMatch(/^404 /);
    const inFlight = post(`${base}/slow`, agent);
    await arrived;
    const closed = server.close();
    const during = await post(`${base}/slow`, new http.Agent({ keepAlive: false }));
    expect(await inFlight).toBe("200 done");
    expect(during).toBe("ECONNREFUSED");
    expect(await peerClosed).toBe(CLOSE_GOING_AWAY);
    await closed;
    agent.destroy();
  }, 30_000);

  it("answers a request that comes on a kept-alive connection during the drain with 503, doing nothing", async () => {
    const root = tempDir("drain-keepalive");
    dirs.push(root);
    let calls = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const started = await startSyncServer({
      dataDir: path.join(root, "server"),
      routes: (req, res) => {
        if (req.url !== "/work") return false;
        calls++;
        void held.then(() => {
          res.writeHead(200);
          res.end("done");
        });
        return true;
      },
    });
    if (!started.ok) throw new Error(started.error.message);
    const server = started.value;
    const base = server.url.replace(/^ws/, "http");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const inFlight = post(`${base}/work`, agent);
    while (calls === 0) await new Promise((r) => setTimeout(r, 5));
    // Queued on the same connection: sent once the first is answered, during the drain.
    const late = post(`${base}/work`, agent);
    const drained = server.drain();
    release();
    expect(await inFlight).toBe("200 done");
    const answer = await late;
    expect(answer.slice(0, 3)).toBe("503");
    expect(JSON.parse(answer.slice(4)).error.code).toBe("shutting-down");
    expect(calls).toBe(1);
    await drained;
    agent.destroy();
  }, 30_000);
});
