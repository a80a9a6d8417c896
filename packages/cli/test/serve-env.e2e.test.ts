/**
 * `kumiki serve` configured by its environment, as a container or a unit file runs it: the real
 * bin started once with flags and once with only KUMIKI_SERVE_* variables says it listens with the
 * same storage and the same access; a flag wins over its variable; a bad value's error names the
 * variable the user set, and a variable that names no option is refused before anything starts.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, runBin, startBin, stopBin, tempDir } from "./support.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  cleanup(...dirs.splice(0));
});

const TOKENS = JSON.stringify({
  format: 1,
  tokens: [{ name: "agent:a", token: "a-token-0123456789abcdef", graphs: { "*": "write" } }],
});

/** Starts `kumiki serve --json` and returns what its first line says, less the port it was given. */
async function listening(
  args: readonly string[],
  env: Record<string, string>,
): Promise<Record<string, unknown>> {
  const started = await startBin(["serve", "--json", ...args], /(\{"listening".*\})\n/, env);
  children.push(started.child);
  const { listening: info } = JSON.parse(started.url) as { listening: Record<string, unknown> };
  expect(await stopBin(started.child)).toBe(0);
  const { port: _p, url: _u, ...rest } = info;
  return rest;
}

describe("kumiki serve from its environment", () => {
  it("listens the same way from KUMIKI_SERVE_* variables as from flags", async () => {
    const root = tempDir("serve-env");
    dirs.push(root);
    const tokens = path.join(root, "tokens.json");
    fs.writeFileSync(tokens, TOKENS);
    const data = path.join(root, "graphs");
    const byFlags = await listening(
      ["--port", "0", "--data", data, "--token-file", tokens, "--max-message", "2"],
      {},
    );
    const byEnv = await listening([], {
      KUMIKI_SERVE_PORT: "0",
      KUMIKI_SERVE_DATA: data,
      KUMIKI_SERVE_TOKEN_FILE: tokens,
      KUMIKI_SERVE_MAX_MESSAGE: "2",
    });
    expect(byEnv).toEqual(byFlags);
    expect(byEnv).toMatchObject({ data, auth: "tokens", host: "127.0.0.1" });
    // The command line wins over the variable.
    const other = path.join(root, "other");
    expect(
      await listening(["--data", other], { KUMIKI_SERVE_PORT: "0", KUMIKI_SERVE_DATA: data }),
    ).toMatchObject({
      data: other,
    });
  }, 60_000);

  it("names the variable in a bad value's error, and refuses one that names no option", () => {
    const root = tempDir("serve-env-bad");
    dirs.push(root);
    const bad = runBin(["serve"], { cwd: root, env: { KUMIKI_SERVE_PORT: "seventy" } });
    expect([bad.code, bad.err.trim()]).toEqual([
      2,
      'kumiki serve: KUMIKI_SERVE_PORT must be a number from 0 to 65535, got "seventy"',
    ]);
    const typo = runBin(["serve"], { cwd: root, env: { KUMIKI_SERVE_PROT: "7420" } });
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(
      /^kumiki serve: unknown environment variable KUMIKI_SERVE_PROT: the ones read are KUMIKI_SERVE_PORT, /,
    );
    // Nothing started or stored.
    expect(fs.readdirSync(root)).toEqual([]);
    const help = runBin(["serve", "--help"], { cwd: root, env: {} });
    expect(help.out).toContain("(or KUMIKI_SERVE_TOKEN_FILE)");
  });
});
