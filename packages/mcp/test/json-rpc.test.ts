/**
 * JSON-RPC 2.0 errors as the specification defines them, from the real server process over stdio:
 * a line that is not JSON is answered -32700, JSON that is no JSON-RPC 2.0 message -32600 (with its
 * id when it has one), params a method does not take -32602 in one sentence (was: no answer at
 * all for six kinds of malformed line, and -32603 with a schema dump for missing params); and an
 * unknown tool's error says "MCP error -32602:" once through the SDK's client (was: twice).
 */
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { dispose, kumikiBin, serve, tempDir, workspaceFrom } from "./support/session.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

interface Answer {
  id: string | number | null;
  error?: { code: number; message: string };
  result?: unknown;
}

/** Writes `lines` to a server on `dir`, then closes its input; resolves with every answer it wrote. */
function exchange(dir: string, lines: readonly string[]): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [kumikiBin, "mcp", "serve", "--store", dir], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      // Every request below is answered once: close the input when all have been.
      if (out.split("\n").filter((l) => l.trim() !== "").length >= EXPECTED) child.stdin.end();
    });
    child.on("error", reject);
    child.on("close", () =>
      resolve(
        out
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Answer),
      ),
    );
    for (const l of lines) child.stdin.write(`${l}\n`);
    // Bounded: a server that leaves one unanswered is shown by the assertions, not a hang.
    setTimeout(() => child.stdin.end(), 20_000).unref();
  });
}

const INIT =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';
const LINES = [
  INIT,
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  "not json at all",
  '{"jsonrpc":"2.0","id":1,"method":',
  "[1,2,3]",
  "42",
  '{"id":2,"method":"tools/list"}',
  '{"jsonrpc":"1.0","id":3,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":4}',
  '{"jsonrpc":"2.0","id":5,"method":"tools/call"}',
  '{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{}}',
  '{"jsonrpc":"2.0","id":7,"method":"tools/list"}',
];
/** Answers: initialize, four malformed lines, three invalid requests with ids, two bad params, tools/list. */
const EXPECTED = 11;

describe("JSON-RPC errors", () => {
  it("answers every malformed line and bad params with the code JSON-RPC 2.0 gives, and serves on", async () => {
    const dir = await tempDir("jsonrpc");
    dirs.push(dir);
    await workspaceFrom(dir, "slot n : Int = 0\n");
    const answers = await exchange(dir, LINES);
    const codes = answers.filter((a) => a.error !== undefined).map((a) => [a.id, a.error!.code]);
    expect(codes).toEqual([
      [null, -32700],
      [null, -32700],
      [null, -32600],
      [null, -32600],
      [2, -32600],
      [3, -32600],
      [4, -32600],
      [5, -32602],
      [6, -32602],
    ]);
    for (const a of answers.filter((x) => x.error !== undefined)) {
      // One short sentence: no schema dump, no code repeated in the message.
      expect(a.error!.message.length).toBeLessThan(300);
      expect(a.error!.message).not.toMatch(/\n|MCP error/);
    }
    expect(answers.find((a) => a.id === 6)?.error?.message).toBe(
      "Invalid params of resources/read: params.uri: Invalid input: expected string, received undefined",
    );
    // Still serving: the last request is answered.
    const listed = answers.find((a) => a.id === 7)?.result as { tools: unknown[] } | undefined;
    expect(listed?.tools.length).toBeGreaterThan(10);
  }, 60_000);

  it("an unknown tool is -32602, said once through the SDK's client", async () => {
    const dir = await tempDir("jsonrpc-tool");
    dirs.push(dir);
    await workspaceFrom(dir, "slot n : Int = 0\n");
    const s = await serve(dir);
    try {
      const e = await s.client.callTool({ name: "kumiki_nope", arguments: {} }).then(
        () => undefined,
        (x: unknown) => x as { code: number; message: string },
      );
      expect(e?.code).toBe(-32602);
      expect(e?.message).toMatch(/^MCP error -32602: no tool "kumiki_nope"; the tools are kumiki_view/);
      expect(e?.message.match(/MCP error/g)).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 60_000);
});
