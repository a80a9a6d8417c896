/**
 * The verb matrix, in-process: every verb's exit codes 0 (done), 1 (done, the operation failed)
 * and 2 (wrong argument shape, nothing read), in one workspace, in order (later rows see what
 * earlier ones wrote). Rows marked `json` also parse stdout as the verb's JSON.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, run, SMALL_PROGRAM, tempDir, testEnv } from "./support.js";

interface Row {
  readonly argv: readonly string[] | ((s: State) => readonly string[]);
  readonly exit: 0 | 1 | 2;
  readonly out?: RegExp;
  readonly err?: RegExp;
  readonly stdin?: string;
  /** Where to run (default: the workspace). */
  readonly cwd?: "workspace" | "outside" | "partial";
  /** Exit 1 as a result printed on stdout (check found errors), not as an error on stderr. */
  readonly reported?: true;
  /** Parse stdout as JSON and hand it on. */
  readonly json?: (value: unknown, s: State) => void;
}

interface State {
  opId?: string;
  fingerprint?: string;
}

let ws = "";
let outside = "";
let partial = "";
let cache = "";
const s: State = {};

const bundle = JSON.stringify({ ops: [{ op: "add", layer: "slot", name: "fromBundle", body: "Int = 1" }] });

const TABLE: readonly Row[] = [
  // a global option that took the verb as its value: a usage error, not the help with exit 0
  { argv: ["--store", "status"], exit: 2, err: /no verb after --store status/ },
  // init
  { argv: ["init", "a", "b"], exit: 2, err: /expected 0 to 1 arguments/ },
  { argv: ["init"], exit: 1, err: /already a workspace/ },
  // import
  { argv: ["import"], exit: 2 },
  { argv: ["import", "missing.kumiki"], exit: 1, err: /missing\.kumiki: no such file/ },
  { argv: ["import", "prog.kumiki", "--task", "t-import"], exit: 0, out: /imported 10 definitions/ },
  { argv: ["import", "prog.kumiki"], exit: 1, err: /slot\.count|already/ },
  // status
  { argv: ["status"], exit: 0, out: /10 definitions/ },
  {
    argv: ["status", "--json"],
    exit: 0,
    json: (v) =>
      expect(v).toMatchObject({
        definitions: 10,
        author: "user:tester",
        // What `kumiki clone ws://server/<graph>` needs.
        graph: expect.stringMatching(/^automerge:[1-9A-HJ-NP-Za-km-z]+$/),
      }),
  },
  { argv: ["status", "x"], exit: 2 },
  { argv: ["status"], exit: 1, cwd: "outside", err: /no workspace at or above .*: kumiki init makes one/ },
  // view
  { argv: ["view", "slot.count"], exit: 0, out: /^slot +count +: N +%?/ },
  { argv: ["view", "slot.*"], exit: 0, out: /slot +count[\s\S]*slot +draft/ },
  {
    argv: ["view", "--with-deps", "reducer.inc"],
    exit: 0,
    out: /reducer inc[\s\S]*type +N[\s\S]*slot +count/,
  },
  { argv: ["view", "--hash", "slot.count"], exit: 0, out: /^h:[0-9a-f]{64}\n$/ },
  {
    argv: ["view", "--history", "slot.count"],
    exit: 0,
    out: /slot\.count \(def_\w+\): live\n {2}op_\w+ .* add {2}\[task t-import\]/,
  },
  {
    argv: ["view", "--refs", "slot.draft"],
    exit: 0,
    out: /slot\.draft is referenced by 1 reducer, 1 tile\n {2}reducer\.clear:1/,
  },
  {
    argv: ["view", "slot.count", "--json"],
    exit: 0,
    json: (v) =>
      expect(v).toMatchObject({
        selector: "slot.count",
        definitions: [{ qname: "slot.count", layer: "slot", alive: true }],
      }),
  },
  { argv: ["view", "slot.nope"], exit: 1, err: /no slot named nope/ },
  { argv: ["view", "slot.zz*"], exit: 1, err: /no definition matches/ },
  { argv: ["view", "nope"], exit: 2, err: /is not layer\.name/ },
  { argv: ["view", "--hash", "slot.*"], exit: 2, err: /takes one definition/ },
  { argv: ["view", "--hash", "--refs", "slot.count"], exit: 2, err: /cannot be given together/ },
  { argv: ["view"], exit: 2 },
  { argv: ["view", "slot.count", "--frob"], exit: 2, err: /unknown option '--frob'/ },
  // list
  { argv: ["list"], exit: 0, out: /^type\.N\n[\s\S]*app\.Counter\n$/ },
  { argv: ["list", "slot"], exit: 0, out: /^slot\.count\nslot\.draft\n$/ },
  {
    argv: ["list", "slot", "--json"],
    exit: 0,
    json: (v) => expect((v as { definitions: unknown[] }).definitions).toHaveLength(2),
  },
  { argv: ["list", "slt"], exit: 2, err: /unknown layer "slt"/ },
  { argv: ["list", "a", "b"], exit: 2 },
  { argv: ["list"], exit: 1, cwd: "outside" },
  // refs
  { argv: ["refs", "slot.count"], exit: 0, out: /referenced by 1 reducer, 1 tile/ },
  { argv: ["refs", "slot.nope"], exit: 1 },
  { argv: ["refs", "count"], exit: 2 },
  // add
  { argv: ["add", "slot", "extra", "Int", "=", "1"], exit: 0, out: /^added slot\.extra \(op_\w+\)\n$/ },
  { argv: ["add", "slot", "extra", "Int = 1"], exit: 1, err: /slot\.extra/ },
  { argv: ["add", "slot", "bad", "Int = nope"], exit: 1 },
  { argv: ["add", "slot"], exit: 2 },
  { argv: ["add", "slot", "x"], exit: 2, err: /no body/ },
  { argv: ["add", "slt", "x", "Int = 1"], exit: 2, err: /unknown layer/ },
  { argv: ["add", "slot", "9x", "Int = 1"], exit: 2, err: /not a definition name/ },
  { argv: ["add", "slot", "x", "Int = 1", "--body-file", "b.txt"], exit: 2, err: /mutually exclusive/ },
  { argv: ["add", "slot", "x", "--body-file", "missing.txt"], exit: 1, err: /no such file/ },
  {
    argv: ["add", "reducer", "reset", "--body-file", "-", "--task", "t-undo"],
    stdin: "on=ui.click(IncBtn)\n    do= count := 0\n",
    exit: 0,
  },
  {
    argv: ["view", "reducer.reset"],
    exit: 0,
    out: /^reducer reset on=ui\.click\(IncBtn\)\n {4}do= count := 0\n$/,
  },
  // replace
  { argv: ["replace", "slot.extra", "Int = 2"], exit: 0, out: /^replaced slot\.extra/ },
  { argv: ["replace", "slot.nope", "Int = 2"], exit: 1, err: /no slot named nope/ },
  { argv: ["replace", "extra", "Int = 2"], exit: 2 },
  { argv: ["replace", "slot.extra"], exit: 2, err: /no body/ },
  // edit
  { argv: ["edit", "slot.extra", '{"find": "2", "replace": "3"}'], exit: 0 },
  { argv: ["view", "slot.extra"], exit: 0, out: /= 3\n$/ },
  { argv: ["edit", "slot.extra", `{"body:1": "replace '3' -> '4'"}`], exit: 0 },
  { argv: ["view", "slot.extra"], exit: 0, out: /= 4\n$/ },
  { argv: ["edit", "slot.extra", '[{"find": "zzz", "replace": "5"}]'], exit: 1, err: /matches nothing/ },
  { argv: ["edit", "slot.extra", "{not json"], exit: 2, err: /not JSON/ },
  { argv: ["edit", "slot.extra", '{"find": 1}'], exit: 2, err: /must be/ },
  { argv: ["edit", "slot.extra", "x", "--patch-file", "p.json"], exit: 2, err: /mutually exclusive/ },
  // rename
  { argv: ["rename", "slot.extra", "extra2"], exit: 0, out: /renamed slot\.extra to extra2/ },
  { argv: ["rename", "slot.nope", "x"], exit: 1 },
  { argv: ["rename", "slot.extra2", "1bad"], exit: 2 },
  // remove
  {
    argv: ["remove", "slot.draft"],
    exit: 1,
    err: /cannot remove slot\.draft \(referenced by 1 reducer, 1 tile\)[\s\S]*\nUse --cascade to remove all dependents, or --force to leave dangling\n/,
  },
  { argv: ["remove", "slot.draft", "--cascade", "--force"], exit: 2, err: /cannot be given together/ },
  {
    argv: ["remove", "slot.extra2", "--json"],
    exit: 0,
    json: (v) => expect(v).toMatchObject({ opIds: [expect.any(String)] }),
  },
  { argv: ["remove", "slot.extra2"], exit: 1 },
  { argv: ["remove"], exit: 2 },
  // patch apply
  {
    argv: ["patch", "apply", "bundle.json", "--dry-run", "--json"],
    exit: 0,
    json: (v, st) => {
      const p = v as { fingerprint: string; diff: string };
      expect(p.diff).toContain("fromBundle");
      st.fingerprint = p.fingerprint;
    },
  },
  { argv: ["patch", "apply", "bundle.json", "--expect", "fp-wrong"], exit: 1 },
  {
    argv: (st) => ["patch", "apply", "bundle.json", "--expect", st.fingerprint ?? "?"],
    exit: 0,
    out: /applied 1 item/,
  },
  { argv: ["patch", "apply", "bundle.json"], exit: 1 },
  { argv: ["patch", "apply", "-"], stdin: '{"ops": [{"op": "frob"}]}', exit: 1, err: /invalid/ },
  { argv: ["patch", "apply", "-"], stdin: "{nope", exit: 2, err: /not JSON/ },
  { argv: ["patch", "apply", "bundle.json", "--dry-run", "--expect", "x"], exit: 2 },
  { argv: ["patch", "apply", "missing.json"], exit: 1, err: /no such file/ },
  { argv: ["patch"], exit: 2, err: /give one of apply, revert, export/ },
  {
    argv: ["patch", "--help"],
    exit: 0,
    out: /kumiki patch apply: [\s\S]*kumiki patch revert: [\s\S]*kumiki patch export: /,
  },
  { argv: ["remote", "-h"], exit: 0, out: /kumiki remote add NAME URL/ },
  // patch revert
  {
    argv: ["add", "slot", "reverted", "Int = 1", "--json"],
    exit: 0,
    json: (v, st) => {
      st.opId = (v as { opIds: string[] }).opIds[0];
    },
  },
  { argv: (st) => ["patch", "revert", st.opId ?? "?"], exit: 0, out: /reverted op_/ },
  { argv: (st) => ["patch", "revert", st.opId ?? "?"], exit: 1, err: /already removed/ },
  { argv: ["patch", "revert", "op_01ARZ3NDEKTSV4RRFFQ69G5FAV"], exit: 1, err: /no op/ },
  { argv: ["patch", "revert", "xyz"], exit: 2, err: /not an op-id/ },
  // patch export
  { argv: ["patch", "export"], exit: 0, out: /^\{"op":"add"/ },
  { argv: ["patch", "export", "-o", "ops.jsonl"], exit: 0, out: /wrote \d+ ops to ops\.jsonl/ },
  { argv: ["patch", "apply", "ops.jsonl"], exit: 0, out: /took nothing/ },
  { argv: ["patch", "export", "x"], exit: 2 },
  // undo
  { argv: ["undo", "--task", "t-undo", "--dry-run"], exit: 0, out: /reset/ },
  { argv: ["undo", "--task", "t-undo"], exit: 0, out: /undid task t-undo/ },
  { argv: ["view", "reducer.reset"], exit: 1 },
  { argv: ["undo"], exit: 2, err: /give --task/ },
  { argv: ["undo", "--task", "t-undo", "--yes", "--dry-run"], exit: 2 },
  // another author changed the task's definition since: the dry run says --yes will be needed
  { argv: ["add", "slot", "divd", "Int = 1", "--task", "t-div"], exit: 0 },
  { argv: ["replace", "slot.divd", "Int = 2", "--author", "user:other"], exit: 0 },
  {
    argv: ["undo", "--task", "t-div", "--dry-run"],
    exit: 0,
    out: /--yes will be needed: the undo would discard changes made since task t-div[\s\S]*replace op_\w+ \(user:other\)/,
  },
  {
    argv: ["undo", "--task", "t-div", "--dry-run", "--json"],
    exit: 0,
    json: (v) =>
      expect(v).toMatchObject({ needsYes: true, divergence: expect.stringContaining("user:other") }),
  },
  { argv: ["undo", "--task", "t-div"], exit: 1, err: /run again with --yes/ },
  { argv: ["undo", "--task", "t-div", "--yes"], exit: 0, out: /undid task t-div/ },
  // lock / unlock / locks
  { argv: ["lock", "agent:other", "slot.count"], exit: 0, out: /locked slot\.count for agent:other/ },
  {
    argv: ["locks", "--json"],
    exit: 0,
    json: (v) => expect(v).toMatchObject({ locks: [{ agent: "agent:other", pattern: "slot.count" }] }),
  },
  { argv: ["replace", "slot.count", "N = 1"], exit: 1, err: /lock/ },
  { argv: ["lock", "not an agent", "slot.count"], exit: 2 },
  { argv: ["lock", "agent:other"], exit: 2 },
  { argv: ["unlock", "agent:other"], exit: 1, err: /agent:other's locks are agent:other's to lift/ },
  { argv: ["replace", "slot.count", "N = 1"], exit: 1, err: /lock/ },
  { argv: ["unlock", "agent:other", "--force"], exit: 0, err: /lifted agent:other's locks as/ },
  { argv: ["replace", "slot.count", "N = 1"], exit: 0 },
  { argv: ["unlock"], exit: 2 },
  // config conflict-policy
  { argv: ["config", "conflict-policy"], exit: 0, out: /^strict\n$/ },
  { argv: ["config", "conflict-policy", "heal"], exit: 0 },
  {
    argv: ["config", "conflict-policy", "--json"],
    exit: 0,
    json: (v) => expect(v).toEqual({ policy: "heal" }),
  },
  { argv: ["config", "conflict-policy", "bogus"], exit: 2, err: /unknown policy/ },
  { argv: ["config"], exit: 2 },
  // conflicts
  { argv: ["conflicts"], exit: 0, out: /^no conflicts\n$/ },
  { argv: ["conflicts", "--json"], exit: 0, json: (v) => expect(v).toEqual({ conflicts: [] }) },
  { argv: ["conflicts", "x"], exit: 2 },
  { argv: ["conflicts"], exit: 1, cwd: "outside" },
  // check / fix (the partial workspace has no app: E0003 is an error for check)
  { argv: ["check"], exit: 0, out: /ok: no diagnostics|0 errors/ },
  { argv: ["add", "slot", "typo", 'Int = "text"'], exit: 1 },
  { argv: ["add", "slot", "x", "Int = 1"], exit: 0, cwd: "partial" },
  { argv: ["check"], exit: 1, cwd: "partial", out: /E0003/, reported: true },
  {
    argv: ["check", "--json"],
    exit: 1,
    cwd: "partial",
    reported: true,
    json: (v) => expect(v).toMatchObject({ ok: false, errors: 1 }),
  },
  { argv: ["check", "--refs", "--types"], exit: 1, cwd: "partial", reported: true },
  { argv: ["check", "x"], exit: 2 },
  { argv: ["fix"], exit: 0, out: /nothing to fix|proposal/ },
  {
    argv: ["fix", "--auto-patch", "E0103", "--json"],
    exit: 0,
    json: (v) => expect(v).toEqual({ proposals: [], errors: 0 }),
  },
  // §9.2.5: while the program has errors, fix exits 1, a dry run too.
  { argv: ["fix"], exit: 1, cwd: "partial", reported: true },
  { argv: ["fix", "--apply"], exit: 0, out: /0 fixes applied/ },
  { argv: ["fix", "--interactive"], exit: 0, stdin: "n\n" },
  { argv: ["fix", "--auto-patch", "bogus"], exit: 2, err: /not an error code/ },
  { argv: ["fix", "--apply", "--interactive"], exit: 2 },
  { argv: ["fix"], exit: 1, cwd: "outside" },
  // export
  { argv: ["export"], exit: 0, out: /slot +count[\s\S]*app +Counter/ },
  {
    argv: ["export", "-o", "out.kumiki", "--json"],
    exit: 0,
    json: (v) => expect(v).toMatchObject({ bytes: expect.any(Number) }),
  },
  { argv: ["export", "-o", "sub"], exit: 1, err: /cannot write sub/ },
  { argv: ["export", "x"], exit: 2 },
  // global
  { argv: ["view", "slot.count", "--author", "bad author"], exit: 2, err: /invalid author/ },
  { argv: ["frobnicate"], exit: 2 },
];

describe("every verb's exit codes (in-process)", () => {
  beforeAll(async () => {
    ws = tempDir("verbs");
    outside = tempDir("outside");
    partial = tempDir("partial");
    expect((await run(["init"], { cwd: partial, env: testEnv(tempDir("unused")) })).code).toBe(0);
    cache = tempDir("cache");
    writeFileSync(path.join(ws, "prog.kumiki"), SMALL_PROGRAM);
    writeFileSync(path.join(ws, "bundle.json"), bundle);
    writeFileSync(path.join(ws, "b.txt"), "Int = 1");
    mkdirSync(path.join(ws, "sub"));
    const init = await run(["init"], { cwd: ws, env: testEnv(cache) });
    expect(init.code, init.err).toBe(0);
  });
  afterAll(() => cleanup(ws, outside, partial, cache));

  for (const [i, row] of TABLE.entries()) {
    const label = typeof row.argv === "function" ? row.argv({}).join(" ") : row.argv.join(" ");
    it(`${String(i + 1).padStart(3, "0")} kumiki ${label} → ${row.exit}`, async () => {
      const argv = typeof row.argv === "function" ? row.argv(s) : row.argv;
      const r = await run(argv, {
        cwd: row.cwd === "outside" ? outside : row.cwd === "partial" ? partial : ws,
        env: testEnv(cache),
        ...(row.stdin === undefined ? {} : { stdin: row.stdin }),
      });
      expect({ code: r.code, err: r.err }).toMatchObject({ code: row.exit });
      if (row.out) expect(r.out).toMatch(row.out);
      if (row.err) expect(r.err).toMatch(row.err);
      if (row.exit !== 0 && row.reported !== true) {
        // One clear line (what, where, what to do) starting with the verb; the §9.4.1 referrer list may follow.
        expect(r.err).toMatch(/^kumiki( [a-z-]+){0,2}: \S/);
        if (!argv.includes("--json")) expect(r.out).toBe("");
      }
      if (row.json) row.json(JSON.parse(r.out), s);
    });
  }
});
