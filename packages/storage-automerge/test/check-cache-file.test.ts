import fs from "node:fs";
import path from "node:path";
import type { Diagnostic } from "@kumiki-graph/core";
import { afterEach, describe, expect, it } from "vitest";
import { CheckCacheFile } from "../src/read.js";
import { tempWorkspacePaths } from "./support.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) {
    fs.rmSync(r, { recursive: true, force: true });
  }
});

const paths = () => tempWorkspacePaths(roots, "kumiki-check-cache-");

const finding = (message: string) =>
  [{ code: "E0101", severity: "error", message }] as unknown as Diagnostic[];

describe("CheckCacheFile", () => {
  it("keeps the latest four keys, across instances of the same stamp and state", () => {
    const p = paths();
    const write = new CheckCacheFile(p, "s", "stamp-1");
    for (let i = 0; i < 6; i++) write.put(`k${i}`, finding(`m${i}`));
    const read = new CheckCacheFile(p, "s", "stamp-1");
    expect([0, 1, 2, 3, 4, 5].map((i) => read.get(`k${i}`)?.[0]?.message)).toEqual([
      undefined,
      undefined,
      "m2",
      "m3",
      "m4",
      "m5",
    ]);
    // Another checker's results are never answered, and its put replaces them.
    const other = new CheckCacheFile(p, "s", "stamp-2");
    expect(other.get("k5")).toBeUndefined();
    other.put("k5", finding("new"));
    expect(read.get("k5")).toBeUndefined();
    expect(other.get("k5")?.[0]?.message).toBe("new");
  });

  it("never throws: a damaged file is a miss, a cache it cannot write keeps nothing", () => {
    const p = paths();
    const cache = new CheckCacheFile(p, "s", "stamp");
    fs.mkdirSync(p.cache);
    fs.writeFileSync(path.join(p.cache, "check.json"), '{"v":1,"stamp":"stamp","entries":[{"key":1}]}');
    expect(cache.get("k")).toBeUndefined();
    fs.writeFileSync(path.join(p.cache, "check.json"), "\u0000\u0001");
    expect(cache.get("k")).toBeUndefined();
    // A file where the folder should be: every write fails (ENOTDIR), even as root.
    fs.rmSync(p.cache, { recursive: true });
    fs.writeFileSync(p.cache, "not a folder");
    expect(() => cache.put("k", finding("x"))).not.toThrow();
    expect(cache.get("k")).toBeUndefined();
    expect(fs.readFileSync(p.cache, "utf8")).toBe("not a folder");
  });
});
