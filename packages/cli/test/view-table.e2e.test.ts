/**
 * `kumiki view` (a name, a pattern), `list`, `refs`, `status`, and `conflicts` and `locks` when there
 * are none, in a process of their own answered from the
 * table of every definition (.kumiki/cache/definitions.jsonl) that an earlier view kept for the
 * same state: as a view that folds the ops answers, after renames, removes and adds, and never
 * with another state's table.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, runBin, SMALL_PROGRAM, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

/** A workspace holding SMALL_PROGRAM; `bin` runs the real bin in it (exit code, then what it printed). */
function workspace(prefix: string) {
  const dir = tempDir(prefix);
  dirs.push(dir);
  writeFileSync(path.join(dir, "prog.kumiki"), SMALL_PROGRAM);
  const env = testEnv(dir);
  const bin = (argv: string[], extra: Record<string, string> = {}) => {
    const r = runBin(argv, { cwd: dir, env: { ...env, ...extra } });
    return `${r.code} ${r.out}${r.err}`;
  };
  expect(bin(["init"])).toMatch(/^0 /);
  expect(bin(["import", "prog.kumiki"])).toMatch(/^0 /);
  return { bin, table: path.join(dir, ".kumiki", "cache", "definitions.jsonl") };
}

type Bin = ReturnType<typeof workspace>["bin"];

/** Each call answers as the read that folds the ops: twice, the first keeping the table, the second reading it. */
function sameAsFolded(bin: Bin, argvs: readonly string[][]): void {
  for (const argv of argvs) {
    const folded = bin(argv, { KUMIKI_VIEW_CACHE: "off" });
    expect(bin(argv), argv.join(" ")).toBe(folded);
    expect(bin(argv), argv.join(" ")).toBe(folded);
  }
}

describe("kumiki view from the table of every definition", () => {
  it("answers as a view that folds the ops, for each state, and only from its own state's table", () => {
    const { bin, table } = workspace("view-table");
    const views = [
      ["view", "tile.Field"],
      ["view", "tile.Field", "--json"],
      ["view", "slot.draft"],
      ["view", "tile.*"],
      ["view", "*", "--json"],
      ["view", "*.draft"],
      ["view", "tile.Field", "--with-deps"],
      ["view", "*.draft", "--with-deps", "--json"],
      ["view", "slot.nothing*"],
      ["list"],
      ["list", "slot", "--json"],
      ["list", "effect"],
      ["refs", "slot.draft"],
      ["view", "type.N", "--refs", "--json"],
      ["refs", "*"],
      ["refs", "slot.nothing*"],
      ["status"],
      ["status", "--json"],
      ["conflicts"],
      ["locks", "--json"],
    ];
    const same = () => sameAsFolded(bin, views);
    same();
    // A rename of what tile.Field references: its text shows the new name.
    expect(bin(["rename", "slot.draft", "text"])).toMatch(/^0 /);
    same();
    expect(bin(["view", "tile.Field"])).toContain("bind=text");
    expect(bin(["remove", "slot.text", "--force"])).toMatch(/^0 /);
    expect(bin(["add", "slot", "draft", 'Text = ""'])).toMatch(/^0 /);
    same();
    // What the view read was the table: a row edited by hand shows, until the next write.
    const lines = readFileSync(table, "utf8").split("\n");
    // The latest row of tile.Field (a write's appended rows stand in for the ones before).
    const at = lines.findLastIndex((l) => l.includes('"tile","Field",true,true,'));
    const row = JSON.parse(lines[at]!) as unknown[];
    row[6] = "tile Field = input(bind=edited)";
    lines[at] = JSON.stringify(row);
    writeFileSync(table, lines.join("\n"));
    expect(bin(["view", "tile.Field"])).toContain("bind=edited");
    expect(bin(["view", "tile.*"])).toContain("bind=edited");
    // A rename appends its rows (the renamed one's and its name's claimants'), tile.Field's not.
    const appends = () =>
      (JSON.parse(readFileSync(table, "utf8").trimEnd().split("\n").at(-1)!) as { n: number }).n;
    const n = appends();
    expect(bin(["rename", "slot.count", "total"])).toMatch(/^0 /);
    expect(appends()).toBe(n + 1);
    expect(bin(["view", "tile.Field"])).toContain("bind=edited");
    expect(bin(["view", "slot.total"])).toBe(bin(["view", "slot.total"], { KUMIKI_VIEW_CACHE: "off" }));
    // No table: the next view folds and keeps a whole one (the edited row gone).
    rmSync(table);
    same();
    expect(bin(["view", "tile.Field"])).not.toContain("bind=edited");
  }, 120_000);

  it("answers conflicts and locks from the kept status when it counts none, else from the ops", () => {
    const { bin, table } = workspace("view-table-none");
    const argvs = [["conflicts"], ["conflicts", "--json"], ["locks"], ["locks", "--json"]];
    const same = () => sameAsFolded(bin, argvs);
    same();
    expect(bin(["locks"])).toBe("0 no locks\n");
    // A lock stands: the kept status counts one, and the list comes from the ops.
    expect(bin(["lock", "agent:a", "slot.*"])).toMatch(/^0 /);
    same();
    expect(bin(["locks"])).toContain("agent:a  slot.*");
    // What answered "none" was the kept status: one edited by hand to count no lock says so.
    const lines = readFileSync(table, "utf8").trimEnd().split("\n");
    const trailer = JSON.parse(lines.at(-1)!) as { status: { locks: number } };
    expect(trailer.status.locks).toBe(1);
    trailer.status.locks = 0;
    lines[lines.length - 1] = JSON.stringify(trailer);
    writeFileSync(table, `${lines.join("\n")}\n`);
    expect(bin(["locks"])).toBe("0 no locks\n");
    expect(bin(["locks"], { KUMIKI_VIEW_CACHE: "off" })).toContain("agent:a  slot.*");
  }, 120_000);

  it("takes an add's and a replace's rows in after the write, so the next view reads the table", () => {
    const { bin, table } = workspace("view-table-append");
    expect(bin(["view", "slot.draft"])).toMatch(/^0 /);
    const trailer = () =>
      JSON.parse(readFileSync(table, "utf8").trimEnd().split("\n").at(-1)!) as { n: number };
    expect(trailer().n).toBe(0);
    expect(bin(["add", "slot", "extra", "Int = 1"])).toMatch(/^0 /);
    expect(bin(["replace", "slot.draft", 'Text = "new"'])).toMatch(/^0 /);
    // Two appends: the table is of the state after both writes, and the views read it.
    expect(trailer().n).toBe(2);
    const before = readFileSync(table, "utf8");
    for (const argv of [
      ["view", "slot.extra"],
      ["view", "slot.draft", "--json"],
      ["view", "tile.Field"],
      ["view", "slot.*"],
      ["list"],
      ["refs", "slot.draft", "--json"],
      ["status", "--json"],
    ])
      expect(bin(argv), argv.join(" ")).toBe(bin(argv, { KUMIKI_VIEW_CACHE: "off" }));
    expect(bin(["view", "slot.draft"])).toContain('"new"');
    // Read, not kept again.
    expect(readFileSync(table, "utf8")).toBe(before);
  }, 120_000);
});
