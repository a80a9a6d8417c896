/**
 * A write that loses a later merge is told to the session that made it, pushed, not left for it
 * to poll: two MCP servers (the real bin, the SDK's client) on one workspace, and ops of a peer
 * that wrote concurrently taken into the workspace by another process (as a sync does). The
 * session whose replace lost receives a `notifications/message` (warning) with the structured loss
 * within 1 s, and `notifications/resources/updated` for the `kumiki://conflicts` it subscribed to;
 * its next tool answer lists the loss once; the other session is told nothing.
 */
import { cpSync } from "node:fs";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { dispose, ok, type Session, serve, tempDir, workspaceFrom } from "./support/session.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

interface Heard {
  readonly at: number;
  readonly data: { kind: string; lost: { opId: string; retry: string }[]; conflicts: unknown[] };
}

function listen(s: Session): { messages: Heard[]; updated: string[] } {
  const messages: Heard[] = [];
  const updated: string[] = [];
  s.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    messages.push({ at: performance.now(), data: n.params.data as Heard["data"] });
  });
  s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  return { messages, updated };
}

async function until(done: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((r) => setTimeout(r, 10));
}

describe("loss notices", () => {
  it("the session whose write lost a later merge is told within 1 s; the other session is not", async () => {
    const dir = await tempDir("loss");
    const peerDir = await tempDir("loss-peer");
    dirs.push(dir, peerDir);
    const ROUNDS = 5;
    await workspaceFrom(dir, Array.from({ length: ROUNDS }, (_, i) => `slot x${i} : Int = 0\n`).join("\n"));
    // The peer: a replica of the graph as it is now, which will not see what the servers write.
    cpSync(dir, peerDir, { recursive: true });
    const a = await serve(dir);
    const b = await serve(dir);
    const heardA = listen(a);
    const heardB = listen(b);
    const peer = await openWorkspaceStore(peerDir, { author: "agent:peer" });
    const sync = await openWorkspaceStore(dir, { author: "agent:sync" });
    if (!peer.ok || !sync.ok) throw new Error("cannot open the peer or the sync store");
    const delays: number[] = [];
    try {
      await a.client.subscribeResource({ uri: "kumiki://conflicts" });
      for (let i = 0; i < ROUNDS; i++) {
        const mine = ok(await a.call("kumiki_replace", { qname: `slot.x${i}`, body: ": Int = 1" }));
        const [opId] = mine.opIds as string[];
        // B writes elsewhere in the meantime: its writes must not be told to anyone.
        ok(await b.call("kumiki_add", { layer: "slot", name: `b${i}`, body: ": Int = 5" }));
        // The peer replaces the same slot later, not having seen A's write: the newer replace wins.
        const theirs = await peer.value.store.replace({ qname: `slot.x${i}`, body: ": Int = 2" });
        if (!theirs.ok) throw new Error(theirs.error.message);
        const before = heardA.messages.length;
        const took = await sync.value.store.ingest(theirs.value.ops);
        if (!took.ok) throw new Error(took.error.message);
        const arrived = performance.now();
        await until(() => heardA.messages.length > before, 3_000);
        const heard = heardA.messages[before];
        expect(heard, `round ${i}: no notice within 3 s`).toBeDefined();
        delays.push(heard!.at - arrived);
        expect(heard!.data.kind).toBe("write-lost");
        expect(heard!.data.lost.map((l) => l.opId)).toEqual([opId]);
        expect(heard!.data.lost[0]!.retry.length).toBeGreaterThan(0);
        expect(heard!.data.conflicts.length).toBeGreaterThan(0);
        // The next answer lists it, once.
        const next = (await a.client.callTool({ name: "kumiki_list", arguments: { layer: "slot" } })) as {
          content: { text: string }[];
          _meta?: Record<string, unknown>;
        };
        const listed = next._meta?.["kumiki-graph/losses"] as { lost: { opId: string }[] }[] | undefined;
        expect(listed?.flatMap((m) => m.lost.map((l) => l.opId))).toEqual([opId]);
        expect(next.content[1]?.text).toMatch(/^NOTICE: op .* was lost in a later merge/);
        const again = (await a.client.callTool({ name: "kumiki_list", arguments: { layer: "slot" } })) as {
          _meta?: Record<string, unknown>;
        };
        expect(again._meta?.["kumiki-graph/losses"]).toBeUndefined();
      }
      expect(heardA.updated.filter((u) => u === "kumiki://conflicts").length).toBeGreaterThanOrEqual(ROUNDS);
      expect(heardA.messages).toHaveLength(ROUNDS);
      expect(heardB.messages).toEqual([]);
      // Writes that met: the peer added slot.n first, A adds it after (A keeps the name): when the
      // peer's add arrives, A is told its write met another (two definitions of one name, E0007).
      const first = await peer.value.store.add({ layer: "slot", name: "n", body: ": Int = 1" });
      if (!first.ok) throw new Error(first.error.message);
      const added = ok(await a.call("kumiki_add", { layer: "slot", name: "n", body: ": Int = 2" }));
      const before = heardA.messages.length;
      const took = await sync.value.store.ingest(first.value.ops);
      if (!took.ok) throw new Error(took.error.message);
      await until(() => heardA.messages.length > before, 3_000);
      const met = heardA.messages[before]?.data as {
        kind: string;
        conflicts: { kind: string; ops: string[] }[];
      };
      expect(met?.kind).toBe("write-met");
      expect(met.conflicts.map((c) => c.kind)).toEqual(["name-taken"]);
      expect(met.conflicts[0]!.ops).toContain((added.opIds as string[])[0]);
      expect(heardB.messages).toEqual([]);
      // logging/setLevel above warning silences the messages; the next answer still lists the loss.
      await a.client.setLoggingLevel("error");
      const quiet = heardA.messages.length;
      ok(await a.call("kumiki_replace", { qname: "slot.x0", body: ": Int = 7" }));
      const later = await peer.value.store.replace({ qname: "slot.x0", body: ": Int = 8" });
      if (!later.ok) throw new Error(later.error.message);
      const tookLater = await sync.value.store.ingest(later.value.ops);
      if (!tookLater.ok) throw new Error(tookLater.error.message);
      let listedLoss: unknown;
      for (let i = 0; i < 100 && listedLoss === undefined; i++) {
        const r = (await a.client.callTool({ name: "kumiki_list", arguments: { layer: "type" } })) as {
          _meta?: Record<string, unknown>;
        };
        listedLoss = r._meta?.["kumiki-graph/losses"];
        if (listedLoss === undefined) await new Promise((r) => setTimeout(r, 30));
      }
      expect(listedLoss).toBeDefined();
      // The message would have gone out before that answer (one stream, in order): none did.
      expect(heardA.messages.length).toBe(quiet);
      const sorted = [...delays].sort((x, y) => x - y);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const max = sorted[sorted.length - 1]!;
      console.info(
        `loss notice delay over ${ROUNDS} rounds: median ${median.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
      );
      // The 1 s of the issue, held by the median (the 3 s wait above bounds every round): one
      // round on a loaded machine may take longer without the design being wrong.
      expect(median).toBeLessThan(1_000);
    } finally {
      await a.close();
      await b.close();
      await peer.value.close();
      await sync.value.close();
    }
  }, 120_000);

  it("a merge that leaves errors no single write made is told to the session whose definition has them", async () => {
    const dir = await tempDir("merge-errors");
    const peerDir = await tempDir("merge-errors-peer");
    dirs.push(dir, peerDir);
    await workspaceFrom(dir, "type Point = { x: Int, y: Int }\n");
    cpSync(dir, peerDir, { recursive: true });
    const a = await serve(dir);
    const b = await serve(dir);
    const heardA = listen(a);
    const heardB = listen(b);
    const peer = await openWorkspaceStore(peerDir, { author: "agent:peer" });
    const sync = await openWorkspaceStore(dir, { author: "agent:sync" });
    if (!peer.ok || !sync.ok) throw new Error("cannot open the peer or the sync store");
    try {
      // A reads Point's field x; the peer, not having seen that, drops x from Point. Each write
      // checks clean where it was made; merged, A's fn reads a field Point no longer has.
      ok(await a.call("kumiki_add", { layer: "fn", name: "px", body: "(p: Point) -> Int = p.x" }));
      ok(await b.call("kumiki_add", { layer: "slot", name: "other", body: ": Int = 1" }));
      const theirs = await peer.value.store.replace({ qname: "type.Point", body: "= { y: Int, z: Int }" });
      if (!theirs.ok) throw new Error(theirs.error.message);
      const clean = ok(await a.call("kumiki_check", {})) as { diagnostics: { location: string }[] };
      expect(clean.diagnostics.filter((d) => d.location.startsWith("fn.px"))).toEqual([]);
      const before = heardA.messages.length;
      const took = await sync.value.store.ingest(theirs.value.ops);
      if (!took.ok) throw new Error(took.error.message);
      const arrived = performance.now();
      await until(() => heardA.messages.length > before, 3_000);
      const told = heardA.messages[before];
      expect(told, "no notice within 3 s").toBeDefined();
      console.info(`merge-error notice delay: ${(told!.at - arrived).toFixed(0)} ms`);
      const data = told!.data as unknown as {
        kind: string;
        diagnostics: { code: string; location: string; severity: string }[];
      };
      expect(data.kind).toBe("merge-errors");
      expect(data.diagnostics.length).toBeGreaterThan(0);
      expect(data.diagnostics.every((d) => d.severity === "error" && d.location.startsWith("fn.px"))).toBe(
        true,
      );
      // What kumiki_check now says of fn.px is what was told; B, whose writes are untouched, hears nothing.
      const checked = ok(await a.call("kumiki_check", {})) as {
        diagnostics: { code: string; location: string }[];
      };
      const inPx = checked.diagnostics.filter((d) => d.location.startsWith("fn.px")).map((d) => d.code);
      expect(data.diagnostics.map((d) => d.code).sort()).toEqual(inPx.sort());
      expect(heardB.messages).toEqual([]);
      // Told once: another arrival that changes nothing about it tells nothing more.
      const unrelated = await peer.value.store.add({ layer: "slot", name: "calm", body: ": Int = 0" });
      if (!unrelated.ok) throw new Error(unrelated.error.message);
      const quiet = heardA.messages.length;
      const tookMore = await sync.value.store.ingest(unrelated.value.ops);
      if (!tookMore.ok) throw new Error(tookMore.error.message);
      await new Promise((r) => setTimeout(r, 600));
      expect(heardA.messages.length).toBe(quiet);
    } finally {
      await a.close();
      await b.close();
      await peer.value.close();
      await sync.value.close();
    }
  }, 120_000);
});
