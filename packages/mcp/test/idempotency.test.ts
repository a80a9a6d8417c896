/**
 * An MCP server SIGKILLed while edits are in flight, a new one started, every edit retried with
 * its idempotency key: each edit is applied exactly once (an unkeyed retry of an edit that was
 * stored but not answered would apply it twice), and a retry of an answered edit gets its receipt.
 */
import { afterAll, describe, expect, it } from "vitest";
import { dispose, ok, serve, tempDir, workspaceFrom } from "./support/session.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

describe("idempotency keys across a crash", () => {
  it("each keyed edit is applied exactly once after a SIGKILL and retries on a new server", async () => {
    const dir = await tempDir("idempotency");
    dirs.push(dir);
    const N = 20;
    await workspaceFrom(dir, Array.from({ length: N }, (_, i) => `slot s${i} : Int = 0\n`).join("\n"));
    const edit = (i: number) => ({
      name: "kumiki_edit",
      arguments: {
        qname: `slot.s${i}`,
        patch: [{ find: "= 0", replace: "= 0 + 1" }],
        idempotency_key: `edit-${i}`,
      },
    });
    const first = await serve(dir);
    const answered = new Map<number, string[]>();
    let firstAnswer = (): void => undefined;
    const one = new Promise<void>((r) => {
      firstAnswer = r;
    });
    const calls = Array.from({ length: N }, async (_, i) => {
      try {
        const r = await first.client.callTool(edit(i));
        if (r.isError !== true) answered.set(i, (r.structuredContent as { opIds: string[] }).opIds);
        firstAnswer();
      } catch {
        // Unanswered: the server died.
      }
    });
    await one;
    process.kill(first.pid!, "SIGKILL");
    await Promise.all(calls);
    await first.close().catch(() => undefined);

    const second = await serve(dir);
    try {
      for (let i = 0; i < N; i++) {
        const r = ok(await second.call(edit(i).name, edit(i).arguments));
        // An answered edit is answered again with its own receipt.
        if (answered.has(i)) expect(r.opIds).toEqual(answered.get(i));
      }
      for (let i = 0; i < N; i++) {
        const text = ok(await second.call("kumiki_view", { selector: `slot.s${i}` })).text;
        expect(text, `slot.s${i}`).toBe(`slot s${i} : Int = 0 + 1\n`);
      }
      // The same key with other arguments is refused, naming it.
      const other = await second.call("kumiki_edit", {
        qname: "slot.s0",
        patch: [{ find: "+ 1", replace: "+ 2" }],
        idempotency_key: "edit-0",
      });
      expect(other.isError).toBe(true);
      expect((other.value.error as { code: string }).code).toBe("idempotency-key-reused");
    } finally {
      await second.close();
    }
    console.info(`answered before the SIGKILL: ${answered.size} of ${N}`);
  }, 60_000);
});
