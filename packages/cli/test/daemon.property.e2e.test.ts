/**
 * The CLI daemon (`kumiki daemon start`) is a cache of open stores, and a cache must never change an
 * answer: for random sequences of real `kumiki` calls by two agents, some through the daemon and
 * some in their own process (`KUMIKI_DAEMON=off`), with op-log.jsonl edited behind the store's
 * back, every read through the daemon answers as a call without it and without the read fast path
 * does. And the daemon is never trusted over the workspace: one of another build, one killed, and a
 * workspace made again under it are all answered correctly.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { logPath, socketPath } from "../src/daemon/protocol.js";
import { runDaemon } from "../src/daemon/server.js";
import {
  AGENT,
  authorOf,
  NAME,
  READS,
  type TamperCall,
  tamperOpLog,
  VALUE,
  type WriteCall,
  writeArgv,
} from "./agent-calls.js";
import { BIN, runBin, SMALL_PROGRAM, tempDir } from "./support.js";

const dirs: string[] = [];
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone: stopped by its test.
    }
  }
  for (const d of dirs) {
    rmSync(d, { recursive: true, force: true });
    // Its daemon's log, and the socket a killed daemon leaves, in the user's temp folder.
    rmSync(logPath(socketPath(d)), { force: true });
    rmSync(socketPath(d), { force: true });
  }
});

/**
 * Calls through a daemon `daemon start` started (`manual`: none started by a call), each waiting as
 * long as it takes for the daemon to take it: these tests count the calls it ran, and on a loaded
 * machine 50 ms can pass before a busy daemon answers (the call would then run itself, correctly).
 */
const env = (author: string, extra: Record<string, string> = {}) => ({
  KUMIKI_AUTHOR: author,
  KUMIKI_DAEMON: "manual",
  KUMIKI_DAEMON_WAIT: "10000",
  ...extra,
});
const OFF = { KUMIKI_DAEMON: "off", KUMIKI_READ_SNAPSHOT: "off" };

/** Starts the workspace's daemon through the bin and returns its pid (killed after the file if a test fails). */
function startDaemon(dir: string): number {
  const r = runBin(["daemon", "start", "--idle", "2", "--json"], { cwd: dir, env: env("agent:a") });
  expect(r.code, r.err).toBe(0);
  const info = JSON.parse(r.out) as { pid: number; launched: boolean };
  expect(info.launched).toBe(true);
  pids.push(info.pid);
  return info.pid;
}

function calls(dir: string): number {
  const r = runBin(["daemon", "status", "--json"], { cwd: dir, env: env("agent:a") });
  return (JSON.parse(r.out) as { calls?: number }).calls ?? -1;
}

/** A write through the daemon (`via`) or in its own process, or op-log.jsonl edited by hand. */
type Call = (WriteCall & { readonly via: boolean }) | TamperCall;

const via = fc.boolean();
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("add" as const, "replace" as const),
    agent: AGENT,
    via,
    name: NAME,
    value: VALUE,
  }),
  fc.record({ kind: fc.constant("remove" as const), agent: AGENT, via, name: NAME }),
  fc.constant({ kind: "tamper" as const }),
);

/** The reads of the fast-path test, and the references of a name. */
const DAEMON_READS: readonly (readonly string[])[] = [...READS, ["refs", "slot.alpha", "--json"]];

describe("the CLI daemon", () => {
  it("answers every read as a call without it, for random writes by two agents through it and beside it", async () => {
    const dir = tempDir("daemon-prop");
    dirs.push(dir);
    expect(runBin(["init"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    const pid = startDaemon(dir);
    let n = 0;
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 5 }), (sequence) => {
        for (const c of sequence) {
          if (c.kind === "tamper") {
            tamperOpLog(dir);
            continue;
          }
          const argv = writeArgv(c);
          const author = authorOf(c.agent);
          const through = runBin(argv, { cwd: dir, env: env(author, c.via ? {} : { KUMIKI_DAEMON: "off" }) });
          expect(through.code, through.err).toBeLessThan(2); // refusals (a name taken, absent) are part of it
          n++;
          const answer = (read: readonly string[], extra: Record<string, string>) => {
            const r = runBin(read, { cwd: dir, env: env("agent:a", extra) });
            return { read: read.join(" "), code: r.code, out: r.out, err: r.err };
          };
          const daemon = DAEMON_READS.map((read) => answer(read, {}));
          const own = DAEMON_READS.map((read) => answer(read, OFF));
          expect(daemon, `after ${JSON.stringify(c)}`).toEqual(own);
        }
      }),
      { numRuns: 4, endOnFailure: true },
    );
    // The reads and the writes marked `via` ran in the daemon (it counted them), and it still runs.
    expect(calls(dir)).toBeGreaterThan(n);
    expect(runBin(["list"], { cwd: dir, env: env("agent:a") }).out).not.toContain("ghost");
    expect(runBin(["daemon", "stop"], { cwd: dir, env: env("agent:a") }).out).toMatch(/stopped/);
    expect(existsSync(socketPath(dir))).toBe(false);
    await waitUntil(() => !alive(pid));
  }, 300_000);

  it("a write through it is durable when answered: a process without it reads it at once, standard input included", () => {
    const dir = tempDir("daemon-write");
    dirs.push(dir);
    expect(runBin(["init"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    writeFileSync(path.join(dir, "app.kumiki"), SMALL_PROGRAM);
    startDaemon(dir);
    expect(runBin(["import", "app.kumiki"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    const bundle = JSON.stringify([{ op: "add", layer: "slot", name: "piped", body: "Int = 3" }]);
    const applied = runBin(["patch", "apply", "-"], { cwd: dir, env: env("agent:b"), stdin: bundle });
    expect(applied.code, applied.err).toBe(0);
    expect(runBin(["view", "slot.piped"], { cwd: dir, env: env("agent:a", OFF) }).out).toMatch(/Int = 3/);
    // A refused write is refused the same, with the same words, and changes nothing.
    const refused = runBin(["add", "slot", "bad", 'Int = "x"'], { cwd: dir, env: env("agent:a") });
    const refusedOwn = runBin(["add", "slot", "bad", 'Int = "x"'], { cwd: dir, env: env("agent:a", OFF) });
    expect(refused).toEqual(refusedOwn);
    expect(refused.code).toBe(1);
    expect(runBin(["daemon", "stop"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
  }, 120_000);

  it("is never trusted over the workspace: another build is declined, a killed one is stepped around, a workspace made again is read anew", async () => {
    const dir = tempDir("daemon-stale");
    dirs.push(dir);
    expect(runBin(["init"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    expect(runBin(["add", "slot", "first", "Int = 1"], { cwd: dir, env: env("agent:a") }).code).toBe(0);

    // A daemon of another build on the workspace's socket (in this process): it declines every call,
    // and the bin runs each itself.
    const other = runDaemon({ root: dir, build: "another-build", idleMs: 60_000 });
    await waitUntil(() => existsSync(socketPath(dir)));
    const viaOther = spawnAsync(["view", "slot.first"], dir);
    expect((await viaOther).out).toMatch(/Int = 1/);
    const status = await spawnAsync(["daemon", "status", "--json"], dir);
    const info = JSON.parse(status.out) as { calls: number; current: boolean };
    expect(info.current).toBe(false);
    expect(info.calls).toBe(0);
    expect((await spawnAsync(["daemon", "stop"], dir)).out).toMatch(/stopped/);
    await other;

    // A daemon of this build, SIGKILLed: its socket is left behind, and calls run without it.
    const pid = startDaemon(dir);
    expect(runBin(["view", "slot.first"], { cwd: dir, env: env("agent:a") }).out).toMatch(/Int = 1/);
    process.kill(pid, "SIGKILL");
    await waitUntil(() => !alive(pid));
    expect(existsSync(socketPath(dir))).toBe(true);
    const after = runBin(["add", "slot", "second", "Int = 2"], { cwd: dir, env: env("agent:a") });
    expect(after.code, after.err).toBe(0);
    expect(runBin(["view", "slot.second"], { cwd: dir, env: env("agent:a") }).out).toMatch(/Int = 2/);

    // The workspace removed and made again while a daemon holds the old one open: read anew.
    startDaemon(dir);
    expect(runBin(["view", "slot.first"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    rmSync(path.join(dir, ".kumiki"), { recursive: true, force: true });
    expect(runBin(["init"], { cwd: dir, env: env("agent:a", { KUMIKI_DAEMON: "off" }) }).code).toBe(0);
    expect(runBin(["add", "slot", "renewed", "Int = 5"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    const listed = runBin(["list"], { cwd: dir, env: env("agent:a") }).out;
    expect(listed).toContain("renewed");
    expect(listed).not.toContain("first");
    expect(listed).toBe(runBin(["list"], { cwd: dir, env: env("agent:a", OFF) }).out);
    expect(runBin(["daemon", "stop"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
  }, 120_000);

  it("a chunk damaged in place after it opened: reports and refuses as a call without it does", () => {
    const dir = tempDir("daemon-damage");
    dirs.push(dir);
    expect(runBin(["init"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    for (const n of ["one", "two"])
      expect(runBin(["add", "slot", n, "Int = 1"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    startDaemon(dir);
    expect(runBin(["view", "slot.one"], { cwd: dir, env: env("agent:a") }).code).toBe(0); // the daemon holds the store
    const chunks = chunkFilesUnder(path.join(dir, ".kumiki", "automerge"));
    expect(chunks.length).toBeGreaterThan(0);
    truncateSync(chunks[0]!, 10);
    for (const argv of [["status"], ["add", "slot", "three", "Int = 3"]]) {
      const viaDaemon = runBin(argv, { cwd: dir, env: env("agent:a") });
      const own = runBin(argv, { cwd: dir, env: env("agent:a", OFF) });
      expect(viaDaemon, argv.join(" ")).toEqual(own);
    }
    expect(runBin(["status"], { cwd: dir, env: env("agent:a") }).out).toMatch(/DAMAGED/);
    expect(runBin(["daemon", "stop"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
  }, 120_000);

  it("runs interactive fixes and its own verbs in the caller's process; a call outside any workspace never looks for it", () => {
    const dir = tempDir("daemon-decline");
    dirs.push(dir);
    expect(runBin(["init"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    startDaemon(dir);
    const before = calls(dir);
    expect(runBin(["fix", "--interactive"], { cwd: dir, env: env("agent:a"), stdin: "" }).code).toBeLessThan(
      2,
    );
    expect(runBin(["--help"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    expect(calls(dir)).toBe(before);
    // What is not a kumiki client (bytes that are not JSON, a connection that never sends) is
    // hung up on or left waiting, and neither stops the daemon answering nor stopping.
    const garbage = net.createConnection(socketPath(dir));
    garbage.on("error", () => undefined);
    garbage.write("not json\nnull\n");
    const silent = net.createConnection(socketPath(dir));
    silent.on("error", () => undefined);
    expect(runBin(["status"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    expect(calls(dir)).toBe(before + 1);
    const stopped = runBin(["daemon", "stop"], { cwd: dir, env: env("agent:a") });
    expect(stopped.out).toMatch(/stopped/);
    expect(existsSync(socketPath(dir))).toBe(false);
    garbage.destroy();
    silent.destroy();
    startDaemon(dir);
    const outside = tempDir("daemon-outside");
    dirs.push(outside);
    const r = runBin(["status"], { cwd: outside, env: env("agent:a") });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/no workspace/);
    expect(runBin(["daemon", "stop"], { cwd: dir, env: env("agent:a") }).code).toBe(0);
    expect(readFileSync(path.join(dir, ".kumiki", "config.json"), "utf8")).toContain("automerge:");
  }, 120_000);
});

describe("the daemon by default (KUMIKI_DAEMON unset)", () => {
  it("starts a daemon on the first call that finds none, replaces one of another build, and the calls after run there", async () => {
    const dir = tempDir("daemon-auto");
    dirs.push(dir);
    const auto = env("agent:a", { KUMIKI_DAEMON: "" });
    expect(runBin(["init"], { cwd: dir, env: auto }).code).toBe(0);
    expect(existsSync(socketPath(dir))).toBe(false); // init is not a daemon's call: none started
    const first = runBin(["add", "slot", "one", "Int = 1"], { cwd: dir, env: auto });
    expect(first.code, first.err).toBe(0);
    const status = () =>
      JSON.parse(runBin(["daemon", "status", "--json"], { cwd: dir, env: env("agent:a") }).out) as {
        running: boolean;
        current?: boolean;
        pid?: number;
        calls?: number;
      };
    const running = async () => {
      await waitUntil(() => {
        const s = status();
        return s.running && s.current === true;
      });
      const s = status();
      if (s.pid !== undefined) pids.push(s.pid);
      return s;
    };
    const started = await running();
    expect(runBin(["view", "slot.one"], { cwd: dir, env: auto }).out).toMatch(/Int = 1/);
    expect(status().calls).toBe((started.calls ?? 0) + 1);
    expect(runBin(["daemon", "stop"], { cwd: dir, env: auto }).code).toBe(0);

    // One of another build: asked to stop, and a daemon of this build takes its place.
    const other = runDaemon({ root: dir, build: "another-build", idleMs: 60_000 });
    await waitUntil(() => existsSync(socketPath(dir)));
    const viaOther = await spawnAsync(["view", "slot.one"], dir, { KUMIKI_DAEMON: "auto" }); // the old name of the default
    expect(viaOther.out).toMatch(/Int = 1/);
    await other;
    await running();
    expect(runBin(["daemon", "stop"], { cwd: dir, env: auto }).code).toBe(0);
  }, 120_000);
});

describe("a call never waits on a daemon that does not take it", () => {
  it("steps around one that answers late or never, and one that answers late never runs the call", async () => {
    const dir = tempDir("daemon-late");
    dirs.push(dir);
    expect(runBin(["init"], { cwd: dir, env: env("agent:a", { KUMIKI_DAEMON: "off" }) }).code).toBe(0);
    // Something on the workspace's socket that reads calls and answers `accepted` 300 ms late, or never.
    const sock = socketPath(dir);
    mkdirSync(path.dirname(sock), { recursive: true, mode: 0o700 });
    const heard: string[] = [];
    let answerAfter: number | undefined = 300;
    const fake = net.createServer((c) => {
      c.on("error", () => undefined);
      c.on("data", (d) => heard.push(...d.toString().trim().split("\n")));
      if (answerAfter !== undefined)
        setTimeout(() => {
          if (!c.destroyed) c.write(`${JSON.stringify({ kind: "accepted" })}\n`);
        }, answerAfter);
    });
    await new Promise<void>((resolve) => fake.listen(sock, () => resolve()));
    try {
      const late = await spawnAsync(["add", "slot", "late", "Int = 1"], dir, { KUMIKI_DAEMON_WAIT: "50" });
      expect(late.code, late.err).toBe(0);
      answerAfter = undefined;
      const never = await spawnAsync(["add", "slot", "never", "Int = 2"], dir, { KUMIKI_DAEMON_WAIT: "50" });
      expect(never.code, never.err).toBe(0);
      await new Promise((r) => setTimeout(r, 400)); // the late answer has gone out
      // Each call asked once and, not taken in time, ran itself: once, and never confirmed to the socket.
      const kinds = heard.map((l) => (JSON.parse(l) as { kind: string }).kind);
      expect(kinds).toEqual(["run", "run"]);
      const listed = runBin(["list", "--json"], { cwd: dir, env: env("agent:a", OFF) });
      expect(listed.out).toMatch(/slot\.late/);
      expect(listed.out).toMatch(/slot\.never/);
    } finally {
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  }, 120_000);
});

describe("the daemon started by default", () => {
  it("is started once by calls at the same moment, stepped around when stopped (SIGSTOP), and gone with its workspace", async () => {
    const dir = tempDir("daemon-default");
    dirs.push(dir);
    const on = { KUMIKI_DAEMON: "" };
    expect(runBin(["init"], { cwd: dir, env: env("agent:a", on) }).code).toBe(0);
    // A setting that is not one is refused before anything runs.
    const bad = runBin(["add", "slot", "x", "Int = 1"], {
      cwd: dir,
      env: env("agent:a", { KUMIKI_DAEMON: "sometimes" }),
    });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/KUMIKI_DAEMON="sometimes" is not a setting: give off/);
    const at = await Promise.all(
      ["a", "b", "c", "d"].map((n) => spawnAsync(["add", "slot", n, "Int = 1"], dir, on)),
    );
    for (const r of at) expect(r.code, r.err).toBe(0);
    const status = () =>
      JSON.parse(runBin(["daemon", "status", "--json"], { cwd: dir, env: env("agent:a") }).out) as {
        running: boolean;
        pid?: number;
      };
    await waitUntil(() => status().running);
    const first = status().pid!;
    pids.push(first);
    // One daemon for the four: one serves. The others left the start to the first call; at most one
    // more was started (by a call the new daemon, busy opening the store, did not take within
    // 50 ms), and it left at once, finding the place taken.
    const log = readFileSync(logPath(socketPath(dir)), "utf8");
    expect(log.match(/kumiki daemon: serving/g)?.length, log).toBe(1);
    expect(log.match(/kumiki daemon: serving|already serves|EADDRINUSE/g)?.length, log).toBeLessThanOrEqual(
      2,
    );

    // Stopped: a call does not wait for it (it runs itself), and starts a daemon in its place.
    process.kill(first, "SIGSTOP");
    try {
      const r = await spawnAsync(["add", "slot", "whileStopped", "Int = 2"], dir, on);
      expect(r.code, r.err).toBe(0);
      await waitUntil(() => {
        const s = status();
        return s.running && s.pid !== first;
      });
    } finally {
      process.kill(first, "SIGCONT");
    }
    const second = status().pid!;
    pids.push(second);
    // The stopped one, let go on, finds its socket another's and leaves without removing it.
    await waitUntil(() => !alive(first));
    expect(status().pid).toBe(second);
    expect(runBin(["view", "slot.whileStopped"], { cwd: dir, env: env("agent:a") }).out).toMatch(/Int = 2/);

    // A write through it: its store now holds a check, which it keeps as it closes the store.
    expect(runBin(["add", "slot", "throughSecond", "Int = 3"], { cwd: dir, env: env("agent:a") }).code).toBe(
      0,
    );
    // The workspace removed: its daemon stops (within its watch's second) and takes its socket along.
    rmSync(path.join(dir, ".kumiki"), { recursive: true, force: true });
    await waitUntil(() => !alive(second));
    expect(existsSync(socketPath(dir))).toBe(false);
    // Closing its store kept no check there: nothing of the removed workspace was made again.
    expect(existsSync(path.join(dir, ".kumiki"))).toBe(false);
  }, 120_000);
});

/** The bin run without blocking this process (a daemon in this process must answer it). */
function spawnAsync(
  argv: readonly string[],
  cwd: string,
  extra: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  return import("node:child_process").then(
    ({ spawn }) =>
      new Promise((resolve) => {
        const p = spawn(process.execPath, [BIN, ...argv], {
          cwd,
          env: { PATH: process.env.PATH ?? "", KUMIKI_AUTHOR: "agent:a", KUMIKI_DAEMON: "manual", ...extra },
        });
        let out = "";
        let err = "";
        p.stdout.on("data", (d) => {
          out += d;
        });
        p.stderr.on("data", (d) => {
          err += d;
        });
        p.on("close", (code) => resolve({ code: code ?? -1, out, err }));
      }),
  );
}

/** The chunk files (snapshot and incremental) of a storage folder. */
function chunkFilesUnder(storage: string): string[] {
  return readdirSync(storage, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /[/\\](snapshot|incremental)$/.test(e.parentPath))
    .map((e) => path.join(e.parentPath, e.name));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(ok: () => boolean): Promise<void> {
  // Bounded by time: a check may itself take a while (runs the bin).
  const until = Date.now() + 15_000;
  while (Date.now() < until && !ok()) await new Promise((r) => setTimeout(r, 25));
  expect(ok()).toBe(true);
}
