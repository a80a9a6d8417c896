import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cloneWorkspace, type SyncServer, syncWorkspace } from "../src/index.js";
import { must, newWorkspace, serve, TOKENS, tempDir, tokensFor, viewOf, withStore } from "./helpers.js";

const dirs: string[] = [];
const servers: SyncServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

describe("sync through a server", () => {
  it("clones and syncs through a server URL with a path (a server behind a proxy), as sync takes it", async () => {
    const root = temp("path");
    const a = path.join(root, "a");
    const graph = await newWorkspace(a);
    const server = await serve(path.join(root, "server"), tokensFor(graph));
    servers.push(server);
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "slot", name: "count", body: "Int = 0" }));
    });
    const url = `${server.url}/kumiki/graphs`;
    must(await syncWorkspace(a, { url, token: TOKENS.alice, author: "agent:a", timeoutMs: 20_000 }));
    const b = path.join(root, "b");
    must(await cloneWorkspace(`${url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 20_000 }));
    expect(await viewOf(b)).toBe(await viewOf(a));
    expect(await viewOf(b)).toContain("slot count : Int = 0");
  });

  it("three workspaces with concurrent conflicting ops converge to identical views", async () => {
    const root = temp("three");
    const a = path.join(root, "a");
    const graph = await newWorkspace(a);
    const server = await serve(path.join(root, "server"), tokensFor(graph));
    servers.push(server);
    await withStore(a, "agent:a", async (s) => {
      must(await s.add({ layer: "type", name: "TodoId", body: "nominal Text where uuid" }));
    });
    const first = must(
      await syncWorkspace(a, { url: server.url, token: TOKENS.alice, author: "agent:a", timeoutMs: 20_000 }),
    );
    expect(first.sent).toBe(1);
    const b = path.join(root, "b");
    const c = path.join(root, "c");
    must(await cloneWorkspace(`${server.url}/${graph}`, b, { token: TOKENS.bob, timeoutMs: 20_000 }));
    must(await cloneWorkspace(`${server.url}/${graph}`, c, { token: TOKENS.admin, timeoutMs: 20_000 }));
    // Concurrent: the same name added on all three, plus one distinct op each.
    for (const [dir, who, n] of [
      [a, "agent:a", 1],
      [b, "agent:b", 2],
      [c, "agent:c", 3],
    ] as const) {
      await withStore(dir, who, async (s) => {
        must(await s.add({ layer: "slot", name: "count", body: `Int = ${n}` }));
        must(await s.add({ layer: "slot", name: `only${n}`, body: `Int = ${n}` }));
      });
    }
    const tokens = { [a]: TOKENS.alice, [b]: TOKENS.bob, [c]: TOKENS.admin };
    const authors = { [a]: "agent:a", [b]: "agent:b", [c]: "agent:c" };
    const reports = [];
    for (const dir of [a, b, c, a, b])
      reports.push(
        must(
          await syncWorkspace(dir, {
            url: server.url,
            token: tokens[dir],
            author: authors[dir],
            timeoutMs: 20_000,
          }),
        ),
      );
    const views = await Promise.all([viewOf(a), viewOf(b), viewOf(c)]);
    expect(views[1]).toBe(views[0]);
    expect(views[2]).toBe(views[0]);
    const parsed = JSON.parse(views[0]!) as { texts: string[]; conflicts: { kind: string }[] };
    expect(parsed.texts.filter((t) => t.includes("only")).length).toBe(3);
    expect(parsed.conflicts.length).toBe(2);
    // Two of the three same-name adds lost: their authors were told (rolled back, exit 1 in the CLI).
    const losers = reports.flatMap((r) => r.rolledBack.map((x) => x.opId));
    expect(new Set(losers).size).toBe(2);
  });
});
