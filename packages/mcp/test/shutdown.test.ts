/**
 * A signal while writes are in flight: every call the server took is answered before it exits,
 * and every write it stored was answered as a success (a client that retries an unanswered
 * write must not write it twice). Calls that arrive during the shutdown are answered
 * `unavailable`, retryable, with nothing done.
 */

import { openWorkspace } from "@kumiki-graph/storage-automerge";
import { afterAll, describe, expect, it } from "vitest";
import { dispose, serve, tempDir, workspaceFrom } from "./support/session.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

describe("kumiki mcp serve shuts down gracefully", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "on %s: no write stored and left unanswered",
    async (signal) => {
      const dir = await tempDir(`shutdown-${signal}`);
      dirs.push(dir);
      await workspaceFrom(dir, "");
      const s = await serve(dir);
      const N = 60;
      const answers = new Map<string, "ok" | "unavailable" | "other" | "unanswered">();
      let firstAnswer = (): void => undefined;
      const first = new Promise<void>((r) => {
        firstAnswer = r;
      });
      const calls = Array.from({ length: N }, async (_, i) => {
        const name = `s${i}`;
        try {
          const r = await s.client.callTool({
            name: "kumiki_add",
            arguments: { layer: "slot", name, body: `Int = ${i}` },
          });
          const kind = (r.structuredContent as { error?: { kind: string } } | undefined)?.error?.kind;
          answers.set(name, r.isError !== true ? "ok" : kind === "unavailable" ? "unavailable" : "other");
          firstAnswer();
        } catch {
          answers.set(name, "unanswered");
        }
      });
      // Signal as soon as the first answer comes back, while the rest are in flight.
      await first;
      process.kill(s.pid!, signal);
      await Promise.all(calls);
      await s.close().catch(() => undefined);
      // The reason the session ended is on the operator's stderr.
      expect(s.stderr()).toContain(`session ended: ${signal}`);
      const ws = await openWorkspace(dir);
      if (!ws.ok) throw new Error(ws.error.message);
      const stored = new Set(
        ws.value.log
          .all()
          .map((o) => (o as { name?: string }).name ?? "")
          .filter((n) => n !== ""),
      );
      await ws.value.log.close();
      const answeredOk = [...answers].filter(([, a]) => a === "ok").map(([n]) => n);
      // Every write stored was answered as a success, and every success is stored.
      expect([...stored].sort(), JSON.stringify([...answers])).toEqual(answeredOk.sort());
      expect([...answers.values()].filter((a) => a === "other")).toEqual([]);
      expect(answeredOk.length).toBeGreaterThan(0);
      const counts: Record<string, number> = {};
      for (const a of answers.values()) counts[a] = (counts[a] ?? 0) + 1;
      console.info(`${signal}: ${JSON.stringify(counts)}`);
    },
    60_000,
  );
});
