/**
 * What the real `kumiki` bin prints reaches whoever reads it, whole, on every kind of standard
 * output: a Node parent capturing it, a slow reader, Python's `subprocess.run(capture_output=True)`,
 * and `| head -1` (which leaves early: the call must end quietly). Each for `patch export`, `export`
 * and `view --json` of an output over 1 MB with multi-byte text, run by the bin itself and relayed
 * by the workspace's daemon. (Was: cut at 65,536 bytes on a pipe, exit 0; the relay turned a UTF-8
 * sequence split across two socket chunks into U+FFFD.)
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logPath, socketPath } from "../src/daemon/protocol.js";
import { BIN, run, runBin, tempDir } from "./support.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) {
    runBin(["daemon", "stop"], { cwd: d, env: ENV });
    rmSync(d, { recursive: true, force: true });
    rmSync(logPath(socketPath(d)), { force: true });
  }
});

const ENV = { KUMIKI_AUTHOR: "agent:pipe", KUMIKI_DAEMON: "off" };

/** 2,500 slots of multi-byte text: 1.3 MB of source, every verb below prints over 1 MB. */
function bigProgram(): string {
  let s = "";
  for (let i = 0; i < 2500; i++) s += `slot note${i} : Text = "${"木組みの継手 joint ".repeat(20)}${i}"\n`;
  return s;
}

const VERBS: readonly (readonly string[])[] = [["patch", "export"], ["export"], ["view", "slot.*", "--json"]];

const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** The bin's stdout read by this process as it arrives, pausing `pauseMs` after each chunk. */
function captured(
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
  pauseMs: number,
): Promise<{ code: number | null; out: Buffer; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], {
      cwd,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out.push(c);
      if (pauseMs > 0) {
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), pauseMs);
      }
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out: Buffer.concat(out), err }));
  });
}

/** What `python3 -c subprocess.run(..., capture_output=True)` got: exit code, bytes, sha-256. */
function python(argv: readonly string[], cwd: string, env: Record<string, string>) {
  const script = [
    "import hashlib, json, subprocess, sys",
    "r = subprocess.run(json.loads(sys.argv[1]), capture_output=True)",
    "print(json.dumps([r.returncode, len(r.stdout), hashlib.sha256(r.stdout).hexdigest(), r.stderr.decode()]))",
  ].join("\n");
  const printed = execFileSync("python3", ["-c", script, JSON.stringify([process.execPath, BIN, ...argv])], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  const [code, bytes, hash, err] = JSON.parse(printed) as [number, number, string, string];
  return { code, bytes, hash, err };
}

/** `kumiki … | head -1` under bash: the bin's exit code and what it wrote to stderr. */
function headOne(argv: readonly string[], cwd: string, env: Record<string, string>) {
  const quoted = [process.execPath, BIN, ...argv].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const r = spawnSync("bash", ["-c", `${quoted} 2>stderr.txt | head -1 >/dev/null; echo \${PIPESTATUS[0]}`], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: Number(r.stdout.trim()), err: readFileSync(path.join(cwd, "stderr.txt"), "utf8") };
}

describe("the kumiki bin's output on a pipe", { timeout: 240_000 }, () => {
  let dir = "";
  const expected = new Map<string, Buffer>();
  beforeAll(async () => {
    dir = tempDir("pipe");
    dirs.push(dir);
    writeFileSync(path.join(dir, "big.kumiki"), bigProgram());
    expect(runBin(["init"], { cwd: dir, env: ENV }).code).toBe(0);
    const imported = runBin(["import", "big.kumiki"], { cwd: dir, env: ENV });
    expect(imported.code, imported.err).toBe(0);
    // The reference: the same verb run in this process, whose output is a string, not a pipe.
    for (const argv of VERBS) {
      const r = await run(argv, { cwd: dir, env: ENV });
      expect(r.code, r.err).toBe(0);
      expect(Buffer.byteLength(r.out)).toBeGreaterThan(1 << 20);
      expected.set(argv.join(" "), Buffer.from(r.out));
    }
  }, 120_000);

  for (const daemon of [false, true]) {
    it(`reaches a Node parent, a slow reader and Python whole, and ends quietly under head -1${daemon ? ", relayed by the daemon" : ""}`, async () => {
      // With the daemon, a call waits for it up to 10 s, not 50 ms: what is shown here is the relay
      // (every call below runs there); under a loaded suite a call that waited only 50 ms ran in
      // its own process instead, as it should (daemon.property covers that), and the count fell
      // short (11 of 12 in a fresh clone's run).
      const env = daemon ? { KUMIKI_AUTHOR: ENV.KUMIKI_AUTHOR, KUMIKI_DAEMON_WAIT: "10000" } : ENV;
      if (daemon) {
        const started = runBin(["daemon", "start", "--idle", "60"], { cwd: dir, env });
        expect(started.code, started.err).toBe(0);
      }
      for (const argv of VERBS) {
        const want = expected.get(argv.join(" "))!;
        const label = `${argv.join(" ")}${daemon ? " (daemon)" : ""}`;
        const fast = await captured(argv, dir, env, 0);
        expect({ label, code: fast.code, err: fast.err }).toEqual({ label, code: 0, err: "" });
        expect(fast.out.length, label).toBe(want.length);
        expect(sha(fast.out), label).toBe(sha(want));
        const slow = await captured(argv, dir, env, 3);
        expect(slow.code, label).toBe(0);
        expect(sha(slow.out), label).toBe(sha(want));
        const py = python(argv, dir, env);
        expect({ label, ...py }).toEqual({ label, code: 0, bytes: want.length, hash: sha(want), err: "" });
        expect({ label, ...headOne(argv, dir, env) }).toEqual({ label, code: 0, err: "" });
      }
      if (daemon) {
        const status = runBin(["daemon", "status", "--json"], { cwd: dir, env });
        // Every call above ran in the daemon (3 verbs × 4 readers), not in its own process.
        expect((JSON.parse(status.out) as { calls: number }).calls).toBeGreaterThanOrEqual(12);
        expect(runBin(["daemon", "stop"], { cwd: dir, env }).code).toBe(0);
      }
    });
  }
});
