/**
 * `kumiki check`'s cache (.kumiki/cache/check.json): a check of ops nobody changed answers from it,
 * and never with another state's findings — after a write by another process, with other options,
 * after a hand edit of the cache, or from another version of the checker.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { plantInKeptCheck, readKeptCheck, writeKeptCheck } from "@kumiki-graph/test-support/kept-check";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, runBin, SMALL_PROGRAM, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

const cacheFile = (dir: string) => path.join(dir, ".kumiki", "cache", "check.json");

interface CacheFile {
  v: number;
  stamp: string;
  entries: { key: string; diagnostics: { code: string; message: string; severity: string }[] }[];
}

function workspace(): { dir: string; bin: (argv: string[], extra?: Record<string, string>) => string } {
  const dir = tempDir("check-cache");
  dirs.push(dir);
  writeFileSync(path.join(dir, "prog.kumiki"), SMALL_PROGRAM);
  const env = testEnv(dir);
  const bin = (argv: string[], extra: Record<string, string> = {}) =>
    runBin(argv, { cwd: dir, env: { ...env, ...extra } }).out;
  expect(runBin(["init"], { cwd: dir, env }).code).toBe(0);
  expect(runBin(["import", "prog.kumiki"], { cwd: dir, env }).code).toBe(0);
  return { dir, bin };
}

describe("kumiki check answers from its cache only for the state it was computed from", () => {
  it("answers as a full check does, before and after writes that add and mend an error", () => {
    const { dir, bin } = workspace();
    const uncached = (argv: string[]) => bin(argv, { KUMIKI_CHECK_CACHE: "off" });
    const same = () => {
      for (const argv of [
        ["check", "--json"],
        ["check", "--refs", "--json"],
        ["check", "--types"],
        ["check"],
      ])
        expect(bin(argv), argv.join(" ")).toBe(uncached(argv));
    };
    same();
    expect(JSON.parse(readFileSync(cacheFile(dir), "utf8")).entries).toHaveLength(1);
    // A forced remove leaves tile.Field's reference to slot.draft dangling: an error the cache had not seen.
    expect(runBin(["remove", "slot.draft", "--force"], { cwd: dir, env: testEnv(dir) }).code).toBe(0);
    const broken = JSON.parse(bin(["check", "--json"]));
    expect(broken.ok).toBe(false);
    expect(broken.diagnostics.map((d: { location: string }) => d.location).join(" ")).toMatch(
      /draft|Field|clear/,
    );
    same();
    expect(runBin(["add", "slot", "draft", 'Text = ""'], { cwd: dir, env: testEnv(dir) }).code).toBe(0);
    same();
    expect(JSON.parse(readFileSync(cacheFile(dir), "utf8")).entries.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("serves what it kept for this state (a planted finding shows) and drops it once the ops change", () => {
    const { dir, bin } = workspace();
    expect(JSON.parse(bin(["check", "--json"])).ok).toBe(true);
    const file = JSON.parse(readFileSync(cacheFile(dir), "utf8")) as CacheFile;
    const planted = {
      code: "E0101",
      kind: "undef-ref",
      severity: "error",
      location: "slot.count",
      message: "planted",
    };
    file.entries[0]!.diagnostics.push(planted as never);
    writeFileSync(cacheFile(dir), JSON.stringify(file));
    // Proof that a check of the same state reads the cache (and only the cache: no check ran).
    expect(bin(["check"])).toContain("planted");
    expect(runBin(["add", "slot", "other", "Int = 1"], { cwd: dir, env: testEnv(dir) }).code).toBe(0);
    expect(bin(["check"])).not.toContain("planted");
    expect(bin(["check"])).toBe(bin(["check"], { KUMIKI_CHECK_CACHE: "off" }));
  }, 60_000);

  it("is a miss when unreadable, of another checker, or for another capability manifest", () => {
    const { dir, bin } = workspace();
    const truth = bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" });
    // A workspace made before the cache existed: its .gitignore does not name the folder yet.
    const ignore = path.join(dir, ".kumiki", ".gitignore");
    writeFileSync(ignore, readFileSync(ignore, "utf8").replace("cache/\n", ""));
    rmSync(path.join(dir, ".kumiki", "cache"), { recursive: true, force: true });
    expect(bin(["check", "--json"])).toBe(truth);
    expect(readFileSync(ignore, "utf8").split("\n")).toContain("cache/");
    writeFileSync(cacheFile(dir), "{ not json");
    expect(bin(["check", "--json"])).toBe(truth);
    const file = JSON.parse(readFileSync(cacheFile(dir), "utf8")) as CacheFile;
    file.entries[0]!.diagnostics.push({ code: "E0101", severity: "error", message: "stale" });
    writeFileSync(cacheFile(dir), JSON.stringify({ ...file, stamp: "file:///an/older/kumiki.js" }));
    expect(bin(["check", "--json"])).toBe(truth);
    // The cache was rewritten for this checker: planted again, then the manifest changes.
    const again = JSON.parse(readFileSync(cacheFile(dir), "utf8")) as CacheFile;
    again.entries[0]!.diagnostics.push({ code: "E0101", severity: "error", message: "stale" });
    writeFileSync(cacheFile(dir), JSON.stringify(again));
    expect(bin(["check"])).toContain("stale");
    writeFileSync(path.join(dir, "kumiki.caps.json"), JSON.stringify({ capabilities: [] }));
    expect(bin(["check"])).not.toContain("stale");
  }, 60_000);
});

describe("a write keeps the check its gate made for the state it leaves", () => {
  it("so the next kumiki check answers from it (a planted finding shows), and equals a full check", () => {
    const { dir, bin } = workspace();
    const write = (argv: string[]) => runBin(argv, { cwd: dir, env: testEnv(dir) });
    expect(write(["add", "slot", "other", "Int = 1"]).code).toBe(0);
    const file = JSON.parse(readFileSync(cacheFile(dir), "utf8")) as CacheFile;
    // The import's and the add's, the latest first.
    expect(file.entries).toHaveLength(2);
    const clean = bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" });
    file.entries[0]!.diagnostics.push({ code: "E0101", severity: "error", message: "planted by the test" });
    writeFileSync(cacheFile(dir), JSON.stringify(file));
    expect(bin(["check"])).toContain("planted by the test");
    // A forced remove leaves errors: kept as the gate saw them, equal to a full check's.
    expect(write(["remove", "slot.draft", "--force"]).code).toBe(0);
    expect(bin(["check", "--json"])).toBe(bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" }));
    expect(bin(["check", "--json"])).not.toBe(clean);
    // A refused write leaves nothing for a state it did not make.
    const refused = write(["add", "slot", "broken", "Int = nowhere"]);
    expect(refused.code).not.toBe(0);
    expect(bin(["check", "--json"])).toBe(bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" }));
    // KUMIKI_CHECK_CACHE=off keeps nothing either.
    const before = readFileSync(cacheFile(dir), "utf8");
    expect(
      runBin(["add", "slot", "third", "Int = 3"], {
        cwd: dir,
        env: testEnv(dir, { KUMIKI_CHECK_CACHE: "off" }),
      }).code,
    ).toBe(0);
    expect(readFileSync(cacheFile(dir), "utf8")).toBe(before);
  }, 60_000);
});

const keptFile = (dir: string) => path.join(dir, ".kumiki", "cache", "live-check.jsonl");

describe("a write in its own process goes on from the check the call before it kept", () => {
  it("gates as a full check does (a reader's new error refused), and checks only what it touches", () => {
    const { dir, bin } = workspace();
    const write = (argv: string[], extra: Record<string, string> = {}) =>
      runBin(argv, { cwd: dir, env: testEnv(dir, extra) });
    expect(write(["add", "slot", "other", "Int = 1"]).code).toBe(0);
    const kept = readKeptCheck(keptFile(dir));
    expect(kept.entries.length).toBeGreaterThanOrEqual(1);
    // Every live definition of the graph is in the state: 10 of the program and the add.
    expect(kept.entries[0]!.state.checker.defs).toHaveLength(11);
    // slot.count's new type breaks reducer.inc (count + 1): the write touches only count, so the
    // error is found through what inc's check read, as kept by the call before.
    const refused = write(["replace", "slot.count", "Bool = true", "--json"]);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain("reducer.inc");
    expect(refused.out).toContain("E0201");
    const same = write(["replace", "slot.count", "Bool = true", "--json"], { KUMIKI_CHECK_CACHE: "off" });
    expect(refused.out).toBe(same.out);
    // Definitions the kept state holds unread, renamed and removed (the gate reads their old names).
    expect(write(["rename", "slot.other", "renamed"]).code).toBe(0);
    expect(write(["remove", "slot.renamed"]).code).toBe(0);
    expect(bin(["check", "--json"])).toBe(bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" }));
    // Proof that the next write's gate reads the kept state and checks nothing else: a finding
    // planted on a definition the write does not touch is carried into the check it keeps.
    const file = readKeptCheck(keptFile(dir));
    const tile = file.entries[0]!.state.checker.defs.find((d) => !d.diagnostics)!;
    tile.diagnostics = [
      {
        code: "W0001",
        kind: "planted",
        severity: "warning",
        location: "x",
        message: "planted in the state",
        definition: tile.id,
      },
    ];
    writeKeptCheck(keptFile(dir), file);
    expect(write(["add", "slot", "third", "Int = 3"]).code).toBe(0);
    expect(bin(["check"])).toContain("planted in the state");
    // A damaged file is not read: the next write checks in full, and what it keeps is a full check's.
    writeFileSync(keptFile(dir), "{ not json");
    expect(write(["add", "slot", "fourth", "Int = 4"]).code).toBe(0);
    expect(bin(["check", "--json"])).toBe(bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" }));
    expect(bin(["check"])).not.toContain("planted");
    expect(readKeptCheck(keptFile(dir)).entries).toHaveLength(1);
  }, 60_000);

  it("a check after another process's write that kept nothing keeps its own for the next write", () => {
    const { dir, bin } = workspace();
    rmSync(path.join(dir, ".kumiki", "cache"), { recursive: true, force: true });
    expect(JSON.parse(bin(["check", "--json"])).ok).toBe(true);
    const kept = readKeptCheck(keptFile(dir));
    expect(kept.entries).toHaveLength(1);
    const refused = runBin(["replace", "slot.count", "Bool = true"], { cwd: dir, env: testEnv(dir) });
    expect(refused.code).not.toBe(0);
    expect(refused.out + refused.err).toContain("E0201");
  }, 60_000);
});

describe("a call after writes that kept no check goes on from the state kept before them", () => {
  it("re-checks what changed since (as `kumiki sync` taking in a peer's ops leaves it)", () => {
    const { dir, bin } = workspace();
    expect(JSON.parse(bin(["check", "--json"])).ok).toBe(true);
    plantInKept(dir, "planted in the state before the writes");
    const [at] = readKeptCheck(keptFile(dir)).entries.map((e) => e.state.at);
    // Writes that keep no check: a forced remove leaves tile.Field's reference dangling, a rename.
    const unkept = testEnv(dir, { KUMIKI_CHECK_CACHE: "off" });
    expect(runBin(["remove", "slot.draft", "--force"], { cwd: dir, env: unkept }).code).toBe(0);
    expect(runBin(["rename", "slot.count", "total"], { cwd: dir, env: unkept }).code).toBe(0);
    const before = readKeptCheck(keptFile(dir));
    expect(before.entries.map((e) => e.state.at)).toEqual([at]);
    type Report = { ok: boolean; diagnostics: { message: string; location: string }[] };
    const resumed = JSON.parse(bin(["check", "--json"])) as Report;
    const full = JSON.parse(bin(["check", "--json"], { KUMIKI_CHECK_CACHE: "off" })) as Report;
    // Gone on from the state (its planted finding is there), with what changed found as in full.
    const planted = (d: { message: string }) => d.message.includes("planted");
    expect(resumed.diagnostics.filter(planted)).toHaveLength(1);
    expect(resumed.diagnostics.filter((d) => !planted(d))).toEqual(full.diagnostics);
    expect(full.ok).toBe(false);
    expect(full.diagnostics.map((d) => d.location).join(" ")).toMatch(/Field|clear/);
    // What it kept is of the graph now: the next write goes on from it.
    const after = readKeptCheck(keptFile(dir));
    expect(after.entries.map((e) => e.state.at)).not.toEqual([at]);
    expect(runBin(["add", "slot", "fifth", "Int = 5"], { cwd: dir, env: testEnv(dir) }).code).toBe(0);
    expect(bin(["check"])).toContain("planted in the state before the writes");
  }, 60_000);
});

/** Plants a finding in the kept state (test-support/kept-check.ts). */
const plantInKept = (dir: string, message: string) => plantInKeptCheck(keptFile(dir), message);

describe("kumiki fix goes on from what check kept, as check does", () => {
  it("answers from the cached result, else from the kept check, as a full check would", () => {
    const dir = tempDir("fix-kept");
    dirs.push(dir);
    // A misspelt slot (E0103, with an auto-patch), imported as written.
    writeFileSync(
      path.join(dir, "prog.kumiki"),
      SMALL_PROGRAM.replace("count := count + 1", "conut := count + 1"),
    );
    const env = testEnv(dir);
    const k = (argv: string[], extra: Record<string, string> = {}) =>
      runBin(argv, { cwd: dir, env: { ...env, ...extra } });
    expect(k(["init"]).code).toBe(0);
    expect(k(["import", "prog.kumiki"]).code).toBe(0);
    expect(k(["check"]).code).toBe(1);
    type Fix = { proposals: { id: string; diagnostic: { message: string } }[]; errors: number };
    const fix = (extra: Record<string, string> = {}) => {
      const r = k(["fix", "--json"], extra);
      expect(r.code, r.err).toBe(1);
      return JSON.parse(r.out) as Fix;
    };
    const full = fix({ KUMIKI_CHECK_CACHE: "off" });
    expect(full.proposals.map((p) => p.id)).toEqual([expect.stringMatching(/^E0103@reducer\.inc/)]);
    expect(fix()).toEqual(full);
    // The result check cached for this state, its finding's message changed: fix answers from it.
    const cached = JSON.parse(readFileSync(cacheFile(dir), "utf8")) as CacheFile;
    const e0103 = cached.entries[0]!.diagnostics.find((d) => d.code === "E0103")!;
    e0103.message = "planted in the cache";
    writeFileSync(cacheFile(dir), JSON.stringify(cached));
    expect(fix().proposals[0]!.diagnostic.message).toBe("planted in the cache");
    // No cached result: it goes on from the check kept for the graph (a planted error counts).
    rmSync(cacheFile(dir));
    plantInKeptCheck(keptFile(dir), "planted in the kept check", "error");
    const resumed = fix();
    expect(resumed.errors).toBe(full.errors + 1);
    expect(resumed.proposals).toEqual(full.proposals);
    // `fix --apply` too: its count before the fixes is the kept check's.
    const applied = k(["fix", "--apply", "--json"]);
    const report = JSON.parse(applied.out) as { before: { errors: number }; applied: unknown[] };
    expect(report.before.errors).toBe(full.errors + 1);
    expect(report.applied).toHaveLength(1);
  }, 60_000);
});

describe("the daemon goes on from the check a call kept, and keeps its own when it stops", () => {
  it("its first write reads the kept state; once stopped, the next call in its own process reads the daemon's", () => {
    const { dir, bin } = workspace();
    plantInKept(dir, "planted before the daemon");
    const viaDaemon = testEnv(dir, { KUMIKI_DAEMON: "manual", KUMIKI_DAEMON_WAIT: "10000" });
    const daemon = (argv: string[]) => runBin(argv, { cwd: dir, env: viaDaemon });
    const started = daemon(["daemon", "start", "--idle", "30", "--json"]);
    expect(started.code, started.err).toBe(0);
    try {
      expect(daemon(["add", "slot", "third", "Int = 3"]).code).toBe(0);
      const check = daemon(["check"]);
      expect(check.out).toContain("planted before the daemon");
      // Both went through the daemon (its count of calls), not through a process of their own.
      expect(JSON.parse(daemon(["daemon", "status", "--json"]).out).calls).toBeGreaterThanOrEqual(2);
    } finally {
      expect(daemon(["daemon", "stop"]).code).toBe(0);
    }
    // The daemon kept its check as it stopped: at the state after its write, the planted finding
    // carried (nothing checked it again), so a write in its own process goes on from it.
    expect(readFileSync(keptFile(dir), "utf8")).toContain("planted before the daemon");
    expect(runBin(["add", "slot", "fourth", "Int = 4"], { cwd: dir, env: testEnv(dir) }).code).toBe(0);
    expect(bin(["check"])).toContain("planted before the daemon");
    // And a full check knows nothing of it.
    expect(bin(["check"], { KUMIKI_CHECK_CACHE: "off" })).not.toContain("planted");
  }, 60_000);
});

describe("a read that finds op-log.jsonl unreadable only once it parses it", () => {
  it("runs again from the full open: same answers as with the fast path off", () => {
    const { dir, bin } = workspace();
    const truth = ["check --json", "view slot.*", "list --json"].map((a) =>
      bin(a.split(" "), { KUMIKI_READ_SNAPSHOT: "off" }),
    );
    // A line damaged in place, its sidecar vouching for the damage (size, inode and mtime as now):
    // what a crash between the file's write and the sidecar's could leave.
    const log = path.join(dir, ".kumiki", "op-log.jsonl");
    const text = readFileSync(log, "utf8");
    writeFileSync(log, `#${text.slice(1)}`);
    const st = statSync(log, { bigint: true });
    const side = JSON.parse(readFileSync(`${log}.state`, "utf8"));
    writeFileSync(
      `${log}.state`,
      JSON.stringify({ ...side, size: String(st.size), ino: String(st.ino), mtimeNs: String(st.mtimeNs) }),
    );
    rmSync(path.join(dir, ".kumiki", "cache"), { recursive: true, force: true });
    expect(["check --json", "view slot.*", "list --json"].map((a) => bin(a.split(" ")))).toEqual(truth);
  }, 60_000);
});
