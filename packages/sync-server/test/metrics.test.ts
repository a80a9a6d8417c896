/**
 * `GET /metrics`: a real server, a real workspace synced to it, a real refused upgrade, scraped over
 * HTTP as Prometheus does. The counts follow what happened (ops accepted, refusals by reason, a
 * durable flush timed), the gauges what stands (graphs loaded), and the text is Prometheus' format.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type SyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, serve, TOKENS, tempDir, tokensFor, withStore } from "./helpers.js";

const dirs: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** One sample's value from Prometheus' text format (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    if (line.slice(0, at) === series) return Number(line.slice(at + 1));
  }
  return undefined;
}

async function scrape(server: SyncServer): Promise<{ status: number; type: string; text: string }> {
  const r = await fetch(`${server.url.replace(/^ws/, "http")}/metrics`);
  return { status: r.status, type: r.headers.get("content-type") ?? "", text: await r.text() };
}

/** A WebSocket upgrade without a token: refused (401) before it opens. */
function upgradeWithoutToken(server: SyncServer): Promise<void> {
  return new Promise((resolve) => {
    const ws = new WebSocket(server.url);
    ws.on("unexpected-response", () => {
      ws.terminate();
      resolve();
    });
    ws.on("error", () => resolve());
  });
}

describe("GET /metrics", () => {
  it("counts what the server did and shows what stands, in Prometheus' text format", async () => {
    const root = tempDir("metrics");
    dirs.push(root);
    const a = path.join(root, "a");
    const graph = await newWorkspace(a);
    const server = await serve(path.join(root, "server"), tokensFor(graph));
    servers.push(server);

    const before = await scrape(server);
    expect(before.status).toBe(200);
    expect(before.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(before.text, "kumiki_ops_accepted_total")).toBe(0);
    expect(sample(before.text, "kumiki_graphs_loaded")).toBe(0);
    expect(sample(before.text, "kumiki_storage_fault")).toBe(0);
    expect(before.text).toMatch(/^process_cpu_user_seconds_total \d/m);

    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "one", body: "Int = 1" }));
      must(await s.add({ layer: "slot", name: "two", body: "Int = 2" }));
      must(await s.add({ layer: "slot", name: "three", body: "Int = 3" }));
    });
    must(await syncWorkspace(a, { url: server.url, token: TOKENS.alice, timeoutMs: 20_000 }));
    await upgradeWithoutToken(server);
    await upgradeWithoutToken(server);

    const after = await scrape(server);
    expect(sample(after.text, "kumiki_ops_accepted_total")).toBe(3);
    expect(sample(after.text, 'kumiki_refusals_total{reason="unauthorized"}')).toBe(2);
    expect(sample(after.text, "kumiki_graphs_loaded")).toBe(1);
    expect(sample(after.text, "kumiki_sync_flush_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(sample(after.text, "kumiki_sync_check_seconds_count")).toBeGreaterThanOrEqual(1);
    // The same counts through the library, and nothing labelled by graph or token.
    expect(sample(await server.metrics(), "kumiki_ops_accepted_total")).toBe(3);
    expect(after.text).not.toContain(graph.slice("automerge:".length));
    expect(after.text).not.toContain(TOKENS.alice);
    const head = await fetch(`${server.url.replace(/^ws/, "http")}/metrics`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  }, 60_000);
});
