/**
 * A request larger than the server takes does not end the session: the SDK's stdio transport alone
 * closes it past 10 MiB of unread input (and `kumiki mcp serve` then exited 0, silently). Through
 * a real SDK client over stdio: a 16 MB call is answered with a JSON-RPC error naming its size and
 * the limit, and the next call works. The line splitter itself is checked on every chunking.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LineLimiter, type OversizedRequest } from "../src/line-limit.js";
import { dispose, ok, type Session, serve, tempDir, workspaceFrom } from "./support/session.js";

describe("a request over the size limit", () => {
  let dir: string | undefined;
  let s: Session;
  beforeAll(async () => {
    dir = await tempDir("request-size");
    await workspaceFrom(dir, "slot count : Int = 0\n");
    s = await serve(dir);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await dispose(dir);
  });

  it("is answered with an error naming its size and the limit; the session goes on", {
    timeout: 60_000,
  }, async () => {
    const huge = s.client.callTool({
      name: "kumiki_add",
      arguments: { layer: "slot", name: "big", body: `Text = "${"x".repeat(16_000_000)}"` },
    });
    await expect(huge).rejects.toMatchObject({ code: -32600 });
    await expect(huge).rejects.toThrow(/at most 8,388,608 bytes/);
    expect(ok(await s.call("kumiki_view", { selector: "slot.count" })).text).toContain("Int = 0");
    expect(s.stderr()).toMatch(/the request is 16,0\d\d,\d\d\d bytes/);
  });
});

describe("LineLimiter", () => {
  it("passes every line up to the limit whole and reports each longer one, however the input is cut", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(40), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 30 }),
        (lengths, cuts) => {
          const lines = lengths.map((n, i) => `{"id":${i},"p":"${"y".repeat(n)}"}`);
          const input = Buffer.from(lines.map((l) => `${l}\n`).join(""));
          const dropped: OversizedRequest[] = [];
          const limiter = new LineLimiter((r) => dropped.push(r), 30);
          const out: Buffer[] = [];
          limiter.on("data", (b: Buffer) => out.push(b));
          let at = 0;
          for (let i = 0; at < input.length; i++) {
            const n = cuts[i % cuts.length]!;
            limiter.write(input.subarray(at, at + n));
            at += n;
          }
          limiter.end();
          const passed = Buffer.concat(out)
            .toString()
            .split("\n")
            .filter((l) => l !== "");
          expect(passed).toEqual(lines.filter((l) => l.length <= 30));
          expect(dropped).toEqual(
            lines.flatMap((l, i) => (l.length > 30 ? [{ id: i, bytes: l.length }] : [])),
          );
        },
      ),
      { seed: 20261203, numRuns: 200 },
    );
  });
});
