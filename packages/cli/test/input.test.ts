/**
 * What the CLI reads from a file or standard input is UTF-8 text, checked: a Latin-1 file or a
 * binary is refused naming the first bad byte (never stored with U+FFFD in place of what the user
 * wrote), a byte-order mark is dropped, and an error never prints raw control characters.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, cleanup, run, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
afterEach(() => cleanup(...dirs.splice(0)));

async function workspace(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = tempDir("input");
  const cache = tempDir("input-cache");
  dirs.push(dir, cache);
  const env = testEnv(cache);
  expect((await run(["init"], { cwd: dir, env })).code).toBe(0);
  return { dir, env };
}

describe("text the CLI reads", () => {
  it("refuses a Latin-1 file naming the byte, and stores nothing", async () => {
    const { dir, env } = await workspace();
    writeFileSync(path.join(dir, "latin1.txt"), Buffer.from('Text = "caf\xe9"', "latin1"));
    const r = await run(["add", "slot", "s", "--body-file", "latin1.txt"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.err).toContain("latin1.txt is not UTF-8 text (byte 11 is 0xe9)");
    expect((await run(["status", "--json"], { cwd: dir, env })).out).toMatch(/"ops":0/);
  });

  it("refuses random bytes without echoing them, and a NUL as binary", async () => {
    const { dir, env } = await workspace();
    // Deterministic "random" bytes: every byte value, shuffled by a fixed rule.
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 167 + 13) & 0xff));
    writeFileSync(path.join(dir, "noise.bin"), bytes);
    const r = await run(["add", "slot", "s", "--body-file", "noise.bin"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^kumiki add: noise\.bin is not UTF-8 text \(byte \d+ is 0x[0-9a-f]{2}\)/);
    expect(r.err.length).toBeLessThan(400);
    writeFileSync(path.join(dir, "nul.txt"), "Int = 1\u0000");
    const n = await run(["add", "slot", "s", "--body-file", "nul.txt"], { cwd: dir, env });
    expect(n.err).toContain("nul.txt holds a NUL character");
  });

  it("names the limit a too long body exceeds, in our words", async () => {
    const { dir, env } = await workspace();
    writeFileSync(path.join(dir, "huge.txt"), `Text = "${"x".repeat(1_290_000)}"`);
    const r = await run(["add", "slot", "s", "--body-file", "huge.txt"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      "kumiki add: invalid add: body: too long: at most 1,000,000 characters (the bodyChars limit: split the definition)\n",
    );
  });

  it("drops a byte-order mark", async () => {
    const { dir, env } = await workspace();
    writeFileSync(path.join(dir, "bom.txt"), "\ufeffInt = 5\n");
    expect((await run(["add", "slot", "s", "--body-file", "bom.txt"], { cwd: dir, env })).code).toBe(0);
    expect((await run(["view", "slot.s"], { cwd: dir, env })).out).toBe("slot s : Int = 5\n");
  });

  it("prints control characters of a parse error as \\xNN, never raw", async () => {
    const { dir, env } = await workspace();
    writeFileSync(path.join(dir, "esc.txt"), "Int = \u001b[31mred\n");
    const r = await run(["add", "slot", "s", "--body-file", "esc.txt"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.err).toContain("\\x1b[31mred");
    expect(r.err).not.toContain("\u001b");
  });

  it("standard input is checked alike (the real bin)", async () => {
    const { dir, env } = await workspace();
    const r = spawnSync(process.execPath, [BIN, "add", "slot", "s", "--body-file", "-"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", ...env },
      input: Buffer.from('Text = "caf\xe9"', "latin1"),
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("standard input is not UTF-8 text (byte 11 is 0xe9)");
  });

  it("a command-line argument with bytes that are not UTF-8 is refused, not stored as U+FFFD (the real bin)", async () => {
    const { dir, env } = await workspace();
    // The shell hands the bin the raw byte 0xE9 (a Latin-1 é); Node reads argv as UTF-8.
    const r = spawnSync(
      "sh",
      ["-c", `"$0" "$1" add slot s "$(printf 'Text = "caf\\351"')"`, process.execPath, BIN],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", ...env },
        encoding: "utf8",
        timeout: 30_000,
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /argument 4 .* holds U\+FFFD where the command line had bytes that are not UTF-8.*nothing was done/,
    );
    expect((await run(["status", "--json"], { cwd: dir, env })).out).toMatch(/"ops":0/);
  });

  it("a reader that goes away (| head) ends the command quietly, not with an EPIPE stack trace", async () => {
    const { dir, env } = await workspace();
    // A view far larger than a pipe's buffer, so the write meets the closed pipe.
    writeFileSync(path.join(dir, "big.txt"), `Text = "${"x".repeat(300_000)}"\n`);
    expect((await run(["add", "slot", "big", "--body-file", "big.txt"], { cwd: dir, env })).code).toBe(0);
    const k = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;
    const r = spawnSync("sh", ["-c", `${k} view slot.big | head -c 10 >/dev/null`], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.stderr).not.toContain("EPIPE");
    expect(r.stderr).toBe("");
  });
});
