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
    const file = path.join(p.cache, "live-check.json");
    for (const bytes of [
      "{ not json",
      "null",
      '{"v":2,"stamp":"stamp-1","entries":[]}',
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
});
