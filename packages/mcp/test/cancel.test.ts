/**
 * Cancellation as the MCP spec has it, through the SDK's client over stdio to the real server
 * process: a write whose request is cancelled (`notifications/cancelled`) before it is stored stores
 * nothing; one whose cancellation came too late is kept, and a retry with its idempotency key
 * answers the first write's op-ids instead of writing again. (Was: 10 adds each cancelled at once
 * were all 10 stored, none answered.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { dispose, kumikiBin, ok, serve, tempDir, workspaceFrom } from "./support/session.js";

/**
 * The SDK's stdio transport, except that what the client sends in one turn of the event loop goes
 * out in one write: a request and the cancellation right behind it reach the server together,
 * whatever the machine's load (with two writes, a loaded machine can run the server's whole write
 * between them, and the cancellation is then rightly too late).
 */
class OneWriteStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private pending = "";
  private readonly buffer = new ReadBuffer();
  constructor(private readonly argv: readonly string[]) {}
  async start(): Promise<void> {
    const child = spawn(process.execPath, [...this.argv], {
      env: { ...process.env, KUMIKI_AUTHOR: "agent:test" },
      stdio: ["pipe", "pipe", "ignore"],
    });
    this.child = child;
    child.on("close", () => this.onclose?.());
    child.on("error", (e) => this.onerror?.(e));
    child.stdout!.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m !== null; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
  }
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.pending === "")
      setImmediate(() => {
        const out = this.pending;
        this.pending = "";
        this.child?.stdin?.write(out);
      });
    this.pending += serializeMessage(message);
  }
  async close(): Promise<void> {
    this.child?.stdin?.end();
    await new Promise<void>((resolve) => {
      if (this.child === undefined || this.child.exitCode !== null) resolve();
      else this.child.once("close", () => resolve());
    });
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

/** The add op of `slot.name` as the graph holds it, or undefined when there is none. */
async function addOf(
  call: (
    name: string,
    args: Record<string, unknown>,
  ) => Promise<{ isError: boolean; value: Record<string, unknown> }>,
  name: string,
): Promise<string | undefined> {
  const h = await call("kumiki_history", { qname: `slot.${name}` });
  if (h.isError) return undefined;
  const defs = h.value.definitions as { entries: { op: string; opId: string }[] }[];
  const adds = defs.flatMap((d) => d.entries.filter((e) => e.op === "add").map((e) => e.opId));
  expect(adds.length, `slot.${name} added once`).toBeLessThanOrEqual(1);
  return adds[0];
}

describe("cancelled MCP writes", () => {
  it("10 adds each cancelled at once: none stored, none answered, the server serves on", async () => {
    const dir = await tempDir("cancel");
    dirs.push(dir);
    await workspaceFrom(dir, "slot base : Int = 0\n");
    const client = new Client({ name: "kumiki-cancel-test", version: "0.0.0" });
    await client.connect(new OneWriteStdioTransport([kumikiBin, "mcp", "serve", "--store", dir]));
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        structuredContent: Record<string, unknown>;
      };
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => {
          const controller = new AbortController();
          const p = client.callTool(
            { name: "kumiki_add", arguments: { layer: "slot", name: `c${i}`, body: ": Int = 0" } },
            undefined,
            { signal: controller.signal },
          );
          // The SDK has sent the request by now (callTool sends it before it first awaits): the
          // cancellation follows it at once.
          controller.abort("the agent changed its mind");
          return p;
        }),
      );
      expect(outcomes.map((o) => o.status)).toEqual(Array(10).fill("rejected"));
      // An add made now queues behind the cancelled ones' writes (one write at a time, in order):
      // once it is answered, whatever they were going to store is stored. It is, and only it is.
      const after = await call("kumiki_add", { layer: "slot", name: "after", body: ": Int = 1" });
      expect(after.isError, JSON.stringify(after.structuredContent)).toBe(false);
      const listed = await call("kumiki_list", { layer: "slot" });
      const names = (listed.structuredContent.definitions as { qname: string }[]).map((d) => d.qname);
      expect(names).toEqual(["slot.after", "slot.base"]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("adds cancelled at staggered moments: each is stored at most once, and a retry with its key answers the stored op", async () => {
    const dir = await tempDir("cancel-late");
    dirs.push(dir);
    await workspaceFrom(dir, "slot base : Int = 0\n");
    const s = await serve(dir);
    const N = 12;
    const args = (i: number) => ({
      layer: "slot",
      name: `k${i}`,
      body: `: Int = ${i}`,
      idempotency_key: `add-k${i}`,
    });
    try {
      // Cancelled 0–330 ms after the request went out: early ones before the append, late ones after.
      await Promise.allSettled(
        Array.from({ length: N }, async (_, i) => {
          const controller = new AbortController();
          const p = s.client.callTool({ name: "kumiki_add", arguments: args(i) }, undefined, {
            signal: controller.signal,
          });
          setTimeout(() => controller.abort("late"), i * 30);
          return p;
        }),
      );
      const storedBefore = new Map<number, string>();
      for (let i = 0; i < N; i++) {
        const op = await addOf(s.call, `k${i}`);
        if (op !== undefined) storedBefore.set(i, op);
      }
      // Every retry with its key: a stored write is answered with its own op, not written again.
      for (let i = 0; i < N; i++) {
        const r = ok(await s.call("kumiki_add", args(i)));
        const opIds = r.opIds as string[];
        if (storedBefore.has(i)) expect(opIds, `k${i}`).toEqual([storedBefore.get(i)]);
        expect(await addOf(s.call, `k${i}`), `k${i}`).toBe(opIds[0]);
      }
      console.info(
        `cancelled at 0-${(N - 1) * 30} ms: ${storedBefore.size} of ${N} were stored before the retries`,
      );
    } finally {
      await s.close();
    }
  }, 60_000);

  it("kumiki_fix_apply sends progress, stops between fixes when cancelled, and a retry with its key reports what it wrote", async () => {
    const dir = await tempDir("cancel-fix");
    dirs.push(dir);
    const N = 120;
    let program = 'slot count : Int = 0\ntile Btn = button("go")\n';
    for (let i = 0; i < N; i++) program += `reducer inc${i} on=ui.click(Btn) do= count := cuont + ${i}\n`;
    await workspaceFrom(dir, program, { withErrors: true });
    const s = await serve(dir);
    const args = { error_code: "E0103", idempotency_key: "fix-all" };
    try {
      const progress: { progress: number; total?: number }[] = [];
      const controller = new AbortController();
      const first = await s.client
        .callTool({ name: "kumiki_fix_apply", arguments: args }, undefined, {
          signal: controller.signal,
          onprogress: (p) => {
            progress.push(p);
            if (progress.length === 5) controller.abort("enough");
          },
        })
        .then(
          () => "answered",
          () => "cancelled",
        );
      expect(first).toBe("cancelled");
      expect(progress.length).toBeGreaterThanOrEqual(5);
      // Progress only grows, and never past its total.
      for (let i = 1; i < progress.length; i++)
        expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
      for (const p of progress) expect(p.progress).toBeLessThanOrEqual(p.total ?? Number.POSITIVE_INFINITY);
      expect(progress[0]!.total).toBe(N);
      // The retry with the key: the first call's answer, which stopped midway.
      const retry = ok(await s.call("kumiki_fix_apply", args));
      expect(retry.replayed).toBe(true);
      expect(retry.cancelled).toBe(true);
      const applied = (retry.applied as unknown[]).length;
      expect(applied).toBeGreaterThanOrEqual(5);
      expect(applied).toBeLessThan(N);
      // What it reports is what the graph holds: the other misspellings are still there.
      const check = ok(await s.call("kumiki_check", {}));
      const left = (check.diagnostics as { code: string }[]).filter((d) => d.code === "E0103").length;
      expect(left).toBe(N - applied);
      // A new key finishes the job.
      const rest = ok(await s.call("kumiki_fix_apply", { error_code: "E0103", idempotency_key: "fix-rest" }));
      expect((rest.applied as unknown[]).length).toBe(N - applied);
      expect(rest.cancelled).toBeUndefined();
      console.info(
        `kumiki_fix_apply of ${N} fixes cancelled after 5 progress notifications: ${applied} written`,
      );
    } finally {
      await s.close();
    }
  }, 120_000);

  it("kumiki_apply of a large bundle sends progress as its items are read, ending at the total", async () => {
    const dir = await tempDir("apply-progress");
    dirs.push(dir);
    await workspaceFrom(dir, "slot base : Int = 0\n");
    const s = await serve(dir);
    try {
      const N = 400;
      const ops = Array.from({ length: N }, (_, i) => ({
        op: "add",
        layer: "slot",
        name: `p${i}`,
        body: `: Int = ${i}`,
      }));
      const progress: { progress: number; total?: number }[] = [];
      const r = (await s.client.callTool({ name: "kumiki_apply", arguments: { ops } }, undefined, {
        onprogress: (p) => progress.push(p),
      })) as unknown as { isError?: boolean; structuredContent: { opIds: string[] } };
      expect(r.isError).toBe(false);
      expect(r.structuredContent.opIds).toHaveLength(N);
      expect(progress.length).toBeGreaterThanOrEqual(10);
      expect(progress.length).toBeLessThanOrEqual(21);
      expect(progress.every((p) => p.total === N)).toBe(true);
      expect(progress.at(-1)?.progress).toBe(N);
      for (let i = 1; i < progress.length; i++)
        expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    } finally {
      await s.close();
    }
  }, 60_000);
});
