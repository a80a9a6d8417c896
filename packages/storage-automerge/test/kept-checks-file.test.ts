import fs from "node:fs";
import path from "node:path";
import type { LiveCheckState } from "@kumiki-graph/core";
import { afterEach, describe, expect, it } from "vitest";
import { KeptChecksFile } from "../src/read.js";
import { tempWorkspacePaths } from "./support.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

const paths = () => tempWorkspacePaths(roots, "kumiki-kept-checks-");

const state = (at: string): LiveCheckState => ({
  v: 1,
  at,
  checker: { v: 1, defs: [{ id: "def_x", reads: { ids: ["def_y"] } }] },
  unparsed: [],
  timers: [],
});

describe("KeptChecksFile", () => {
  it("keeps the latest state, read back by another instance of the same stamp", () => {
    const p = paths();
    const write = new KeptChecksFile(p, "stamp-1");
    for (const k of ["a", "b", "c"]) write.put(k, state(k));
    const read = new KeptChecksFile(p, "stamp-1");
    expect(["a", "b", "c"].map((k) => read.get(k)?.at)).toEqual([undefined, undefined, "c"]);
    expect(read.get("c")).toEqual(state("c"));
    // The folder is machine-local: git is told to ignore it.
    expect(fs.readFileSync(path.join(p.dir, ".gitignore"), "utf8")).toContain("cache/");
  });

  it("never answers with another stamp's states, a damaged file or another shape", () => {
    const p = paths();
    new KeptChecksFile(p, "stamp-1").put("a", state("a"));
    expect(new KeptChecksFile(p, "stamp-2").get("a")).toBeUndefined();
    const file = path.join(p.cache, "live-check.jsonl");
    for (const bytes of [
      "{ not json",
      "null",
      '{"v":2,"stamp":"stamp-1"}\n',
      '{"v":2,"stamp":"stamp-1"}\n{"key":"a","state":1}\n',
      '{"v":2,"stamp":"stamp-1"}\n{"key":"a","state":{"at":"a","checker":{"v":1,"defs":[]}}}',
      '{"v":1,"stamp":"stamp-1","entries":[{"key":"a","state":1}]}',
    ]) {
      fs.writeFileSync(file, bytes);
      expect(new KeptChecksFile(p, "stamp-1").get("a"), bytes).toBeUndefined();
    }
  });

  it("a folder it cannot write to costs nothing but the state", () => {
    const p = paths();
    fs.writeFileSync(p.cache, "a file where the folder would be");
    const kept = new KeptChecksFile(p, "stamp-1");
    expect(() => kept.put("a", state("a"))).not.toThrow();
    expect(new KeptChecksFile(p, "stamp-1").get("a")).toBeUndefined();
  });

  it("keeps a state that goes on from the one it read as what changed, read back whole", () => {
    const p = paths();
    const file = path.join(p.cache, "live-check.jsonl");
    new KeptChecksFile(p, "stamp-1").put("a", big("a", 200));
    const size = fs.statSync(file).size;
    // Three processes in turn: each reads the state, re-checks a definition, adds or drops one.
    let expected = new KeptChecksFile(p, "stamp-1").get("a")!;
    for (const [i, key] of ["b", "c", "d"].entries()) {
      const kept = new KeptChecksFile(p, "stamp-1");
      const from = kept.get(expected.at)!;
      expect(from).toEqual(expected);
      const defs = from.checker.defs.filter((d) => d.id !== `def_${i}`);
      defs.push({ id: `def_${i}`, reads: { ids: [`def_${i + 50}`] }, diagnostics: [] });
      defs.push({ id: `def_new${i}`, reads: {} });
      expected = { ...from, at: key, checker: { v: 1, defs }, timers: [[`def_${i}`, `tick${i}`]] };
      kept.put(key, expected);
    }
    // Each change is a line of its own, far smaller than the state.
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(5);
    expect(fs.statSync(file).size - size).toBeLessThan(size / 10);
    const read = new KeptChecksFile(p, "stamp-1");
    expect(read.get("d")).toEqual(expected);
    expect([...read.entries()].map(([k]) => k)).toEqual(["d"]);
    expect(read.get("c")).toBeUndefined();
  });

  it("skips a change that goes on from a state another change replaced, and a line being written", () => {
    const p = paths();
    const file = path.join(p.cache, "live-check.jsonl");
    new KeptChecksFile(p, "stamp-1").put("a", big("a", 200));
    // Two processes went on from state a: the first to put wins, the second's change is skipped.
    const [one, two] = [new KeptChecksFile(p, "stamp-1"), new KeptChecksFile(p, "stamp-1")];
    two.get("a");
    const b = goOn(one, "a", "b", 1);
    goOn(two, "a", "c", 2);
    expect(new KeptChecksFile(p, "stamp-1").get("b")).toEqual(b);
    expect(new KeptChecksFile(p, "stamp-1").get("c")).toBeUndefined();
    // A change cut short (another process appending it as this one reads) is not taken.
    goOn(new KeptChecksFile(p, "stamp-1"), "b", "d", 3);
    const text = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, text.slice(0, text.length - 20));
    expect(new KeptChecksFile(p, "stamp-1").get("b")).toEqual(b);
  });

  it("writes the state whole again after many changes, or a state that holds none of the one read", () => {
    const p = paths();
    const file = path.join(p.cache, "live-check.jsonl");
    new KeptChecksFile(p, "stamp-1").put("s0", big("s0", 1000));
    let at = "s0";
    for (let i = 1; i <= 70; i++) {
      const kept = new KeptChecksFile(p, "stamp-1");
      const from = kept.get(at)!;
      const defs = [...from.checker.defs.filter((d) => d.id !== `def_${i}`), { id: `def_${i}`, reads: {} }];
      at = `s${i}`;
      kept.put(at, { ...from, at, checker: { v: 1, defs } });
      const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n").length;
      // A header and the state, then a change per put up to 64 of them.
      expect(lines).toBe(2 + (i % 65));
    }
    expect(new KeptChecksFile(p, "stamp-1").get(at)?.checker.defs).toHaveLength(1000);
    const kept = new KeptChecksFile(p, "stamp-1");
    kept.get(at);
    kept.put("full", big("full", 10));
    expect(fs.readFileSync(file, "utf8").trimEnd().split("\n")).toHaveLength(2);
    expect(new KeptChecksFile(p, "stamp-1").get("full")).toEqual(big("full", 10));
  });
});

/** A state of `n` definitions, each of which read a few others. */
function big(at: string, n: number): LiveCheckState {
  const defs = Array.from({ length: n }, (_, i) => ({
    id: `def_${i}`,
    reads: { ids: [`def_${(i + 1) % n}`, `def_${(i + 7) % n}`], keys: [`slot\u0000name${i}`] },
  }));
  return { v: 1, at, checker: { v: 1, defs }, unparsed: [], timers: [] };
}

/**
 * What a process going on from state `from` puts: the state it read, its first `drop` entries
 * re-checked away and one added (the rest as read: the same objects).
 */
function goOn(kept: KeptChecksFile, from: string, at: string, drop: number): LiveCheckState {
  const read = kept.get(from)!;
  const defs = [...read.checker.defs.slice(drop), { id: `def_${at}`, reads: {} }];
  const state = { ...read, at, checker: { v: 1 as const, defs } };
  kept.put(at, state);
  return state;
}
