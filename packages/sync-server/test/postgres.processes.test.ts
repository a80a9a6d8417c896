/**
 * The sync server on PostgreSQL (`kumiki serve --storage postgres://…`), as real processes on the
 * machine's real PostgreSQL, each test in a schema of its own (dropped after): a server SIGKILLed
 * while a client pushes loses nothing it confirmed, and two servers on one database serve one set
 * of graphs.
 */
import fs from "node:fs";
import path from "node:path";
import { type AutomergeUrl, type PeerId, Repo } from "@automerge/automerge-repo";
import { WebSocketClientAdapter } from "@automerge/automerge-repo-network-websocket";
import { freshTable, POSTGRES_URL, skipWithoutPostgres, sql } from "@kumiki-graph/test-support/postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cloneWorkspace, syncWorkspace } from "../src/index.js";
import { must, TOKENS, viewOf, withStore } from "./helpers.js";
import { addMany, cleanUp, opsOfFreshClone, setup, startServer, stopServers } from "./support/processes.js";

const skip = await skipWithoutPostgres();

/** Polls `ok` every 25 ms for at most 15 s. */
async function until(ok: () => boolean): Promise<void> {
  const end = Date.now() + 15_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error("not within 15 s");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(skip)("the sync server on PostgreSQL, real processes", () => {
  let schema = "";
  let url = "";
  beforeEach(async () => {
    schema = freshTable("kumiki_test_schema");
    await sql(`CREATE SCHEMA "${schema}"`);
    // The server's table goes in the test's own schema (first on its search path).
    url = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  });
  afterEach(async () => {
    cleanUp();
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it("a server killed (SIGKILL) mid-push loses no op it confirmed: a restart on the same database serves them all", async () => {
    const { root, a, graph } = await setup("pg-kill");
    await addMany(a, "agent:a", "s", 400);
    let server = await startServer(root, 0, url);
    const sync = syncWorkspace(a, {
      url: server.url,
      token: TOKENS.alice,
      author: "agent:a",
      timeoutMs: 60_000,
    });
    await server.child.waitFor(/connected: /);
    server.child.proc.kill("SIGKILL");
    await server.child.exited();
    server = await startServer(root, server.port, url);
    expect(must(await sync).ops).toBe(400);
    server.child.proc.kill("SIGKILL");
    await server.child.exited();
    // Nothing on the local disk: a new server process on the database alone, and a fresh clone.
    server = await startServer(root, 0, url);
    expect(await opsOfFreshClone(server.url, graph, path.join(root, "c"))).toBe(400);
    expect(await stopServers(server)).toEqual([0]);
  });

  it("three servers on one database: a change confirmed by one reaches a peer connected to another live, and three agents' conflicting ops converge", async () => {
    const { root, a, graph } = await setup("pg-three");
    const servers = [
      await startServer(root, 0, url),
      await startServer(root, 0, url),
      await startServer(root, 0, url),
    ];
    // Three workspaces, each syncing with its own server: clones of one graph.
    expect(
      must(
        await syncWorkspace(a, {
          url: servers[0]!.url,
          token: TOKENS.alice,
          author: "agent:a",
          timeoutMs: 30_000,
        }),
      ).ops,
    ).toBe(0);
    const dirs = [a];
    for (const i of [1, 2]) {
      const dir = path.join(root, `w${i}`);
      must(
        await cloneWorkspace(`${servers[i]!.url}/${graph}`, dir, { token: TOKENS.alice, timeoutMs: 30_000 }),
      );
      dirs.push(dir);
    }
    // A peer of server 3 that stays connected (automerge-repo's own client): it must see what
    // server 1 confirms without asking again.
    const peer = new Repo({
      network: [new WebSocketClientAdapter(`${servers[2]!.url}/?token=${TOKENS.bob}`, 60_000)],
      peerId: "live-peer" as PeerId,
    });
    try {
      await until(() => peer.peers.length > 0);
      const handle = await peer.find(graph as AutomergeUrl);
      await withStore(a, "agent:a", async (s) =>
        must(await s.add({ layer: "slot", name: "liveProbe", body: "Int = 1" })),
      );
      const pushed = Date.now();
      must(
        await syncWorkspace(a, {
          url: servers[0]!.url,
          token: TOKENS.alice,
          author: "agent:a",
          timeoutMs: 30_000,
        }),
      );
      await until(() => JSON.stringify(handle.doc()).includes("liveProbe"));
      process.stdout.write(
        `a change confirmed by server 1 reached a peer of server 3 in ${Date.now() - pushed} ms (push included)\n`,
      );
    } finally {
      await peer.shutdown();
    }
    // Concurrent, conflicting: every agent adds the same name, and a name of its own.
    await Promise.all(
      dirs.map((dir, i) =>
        withStore(dir, `agent:w${i}`, async (s) => {
          must(await s.add({ layer: "slot", name: "shared", body: `Int = ${i}` }));
          must(await s.add({ layer: "slot", name: `own${i}`, body: `Int = ${i}` }));
        }),
      ),
    );
    await Promise.all(
      dirs.map((dir, i) =>
        syncWorkspace(dir, {
          url: servers[i]!.url,
          token: TOKENS.alice,
          author: `agent:w${i}`,
          timeoutMs: 30_000,
        }),
      ),
    );
    // More rounds, one workspace after another, until the three views agree: what one server
    // confirmed reaches another through the database, which on a loaded machine can take longer
    // than the next workspace's sync (seen once in a full run: w0's second round missed own1). At
    // most 5 rounds: convergence, not its first round, is the property.
    let views: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (const [i, dir] of dirs.entries())
        must(
          await syncWorkspace(dir, {
            url: servers[i]!.url,
            token: TOKENS.alice,
            author: `agent:w${i}`,
            timeoutMs: 30_000,
          }),
        );
      views = await Promise.all(dirs.map((dir) => viewOf(dir)));
      if (views.every((v) => v === views[0]) && ["own0", "own1", "own2"].every((n) => views[0]!.includes(n)))
        break;
    }
    expect(views[1]).toBe(views[0]);
    expect(views[2]).toBe(views[0]);
    for (const name of ["liveProbe", "own0", "own1", "own2", "shared"]) expect(views[0]).toContain(name);
    expect(await stopServers(...servers)).toEqual(servers.map(() => 0));
  });

  it("a server SIGKILLed while its client pushes: the client finishes through another server of the service, losing nothing", async () => {
    const { root, a, graph } = await setup("pg-failover");
    await addMany(a, "agent:a", "f", 400);
    const one = await startServer(root, 0, url);
    const two = await startServer(root, 0, url);
    const sync = syncWorkspace(a, {
      url: one.url,
      alternates: [two.url],
      token: TOKENS.alice,
      author: "agent:a",
      timeoutMs: 60_000,
    });
    await one.child.waitFor(/connected: /);
    one.child.proc.kill("SIGKILL");
    await one.child.exited();
    const report = must(await sync);
    expect(report.ops).toBe(400);
    expect(report.server).toBe(two.url);
    // Server 1 stays dead: a fresh clone through server 2 holds every op the sync confirmed.
    expect(await opsOfFreshClone(two.url, graph, path.join(root, "c"))).toBe(400);
    expect(await stopServers(two)).toEqual([0]);
  });

  it("tokens live in the database: a server started without a token file serves them, and SIGHUP to another withdraws one for both", async () => {
    const { root, a, graph } = await setup("pg-hup");
    await addMany(a, "agent:a", "h", 2);
    const first = await startServer(root, 0, url);
    const second = await startServer(root, 0, url, false);
    const bobSyncs = async (server: { url: string }) => {
      const dir = path.join(root, `bob-${Math.random().toString(36).slice(2)}`);
      const r = await cloneWorkspace(`${server.url}/${graph}`, dir, { token: TOKENS.bob, timeoutMs: 20_000 });
      return r.ok ? "ok" : r.error.code;
    };
    must(
      await syncWorkspace(a, { url: second.url, token: TOKENS.alice, author: "agent:a", timeoutMs: 30_000 }),
    );
    expect(await bobSyncs(second)).toBe("ok");
    // bob taken out of the file; the first server told to read it again.
    const file = JSON.parse(fs.readFileSync(path.join(root, "tokens.json"), "utf8")) as {
      tokens: { name: string }[];
    };
    file.tokens = file.tokens.filter((t) => t.name !== "bob");
    fs.writeFileSync(path.join(root, "tokens.json"), JSON.stringify(file));
    first.child.proc.kill("SIGHUP");
    await first.child.waitFor(/SIGHUP: 4 tokens from .* stored/);
    expect(await bobSyncs(second)).toBe("forbidden");
    expect(await bobSyncs(first)).toBe("forbidden");
    must(
      await syncWorkspace(a, { url: second.url, token: TOKENS.alice, author: "agent:a", timeoutMs: 30_000 }),
    );
    expect(await stopServers(first, second)).toEqual([0, 0]);
  });

  it("every server of the service refuses alike: a read-only token's op is stored by none, an unknown token is refused by each", async () => {
    const { root, a, graph } = await setup("pg-tokens");
    await addMany(a, "agent:a", "r", 3);
    const servers = [await startServer(root, 0, url), await startServer(root, 0, url)];
    must(
      await syncWorkspace(a, {
        url: servers[0]!.url,
        token: TOKENS.alice,
        author: "agent:a",
        timeoutMs: 30_000,
      }),
    );
    for (const [i, server] of servers.entries()) {
      const reader = path.join(root, `reader${i}`);
      must(
        await cloneWorkspace(`${server.url}/${graph}`, reader, { token: TOKENS.reader, timeoutMs: 30_000 }),
      );
      await withStore(reader, "agent:reader", async (st) =>
        must(await st.add({ layer: "slot", name: `fromReader${i}`, body: "Int = 1" })),
      );
      const pushed = must(
        await syncWorkspace(reader, {
          url: server.url,
          token: TOKENS.reader,
          author: "agent:reader",
          timeoutMs: 30_000,
        }),
      );
      expect(pushed.access).toBe("read");
      expect(pushed.unpushed).toBe(1);
      const refused = await syncWorkspace(a, {
        url: server.url,
        token: "not-a-token-0123456789",
        timeoutMs: 10_000,
      });
      expect(refused.ok ? "" : refused.error.code).toBe("forbidden");
    }
    // Through either server, the graph holds alice's 3 ops and none of the reader's.
    for (const [i, server] of servers.entries())
      expect(await opsOfFreshClone(server.url, graph, path.join(root, `check${i}`))).toBe(3);
    expect(await stopServers(...servers)).toEqual(servers.map(() => 0));
  });

  it("two servers on one database: what one confirmed, a clone through the other holds", async () => {
    const { root, a, graph } = await setup("pg-two");
    await addMany(a, "agent:a", "t", 50);
    const one = await startServer(root, 0, url);
    const two = await startServer(root, 0, url);
    expect(
      must(
        await syncWorkspace(a, { url: one.url, token: TOKENS.alice, author: "agent:a", timeoutMs: 30_000 }),
      ).ops,
    ).toBe(50);
    expect(await opsOfFreshClone(two.url, graph, path.join(root, "c"))).toBe(50);
    expect(await stopServers(one, two)).toEqual([0, 0]);
  });
});
