/**
 * Writes on a disk that fills up, by real `kumiki` processes on a real small tmpfs: at every fill
 * level around the size of a write, a write answered as done is stored, and a write refused
 * (storage-failed, "nothing changed") left the workspace byte for byte as it was: never refused
 * yet stored. Then, with space again, the next write works.
 */
import fs from "node:fs";
import path from "node:path";
import { fillDisk, mountable, mountTmpfs, NOT_MOUNTABLE, unmount } from "@kumiki-graph/test-support/tmpfs";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, runBin, snapshot, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) unmount(m);
  cleanup(...dirs);
});

describe("kumiki add on a disk that fills up", () => {
  if (!mountable) it.skip(NOT_MOUNTABLE, () => {});
  it.skipIf(!mountable)(
    "a refused write is never stored, an answered one always is",
    () => {
      const root = tempDir("full-disk-add");
      dirs.push(root);
      const disk = path.join(root, "disk");
      mountTmpfs(disk, "1m");
      mounts.push(disk);
      const ws = path.join(disk, "ws");
      fs.mkdirSync(ws);
      const opts = { cwd: ws, env: testEnv(root) };
      expect(runBin(["init"], opts).code).toBe(0);
      expect(runBin(["add", "slot", "first", "Int = 1"], opts).code).toBe(0);
      const outcomes: string[] = [];
      let n = 0;
      // Free space from none to three pages, writes from small to larger than a page.
      for (const leave of [0, 4096, 8192, 12_288])
        for (const size of [10, 3_000, 9_000]) {
          const name = `w${n++}`;
          const filler = fillDisk(disk, leave);
          const before = snapshot(path.join(ws, ".kumiki"));
          const r = runBin(["add", "slot", name, `Text = "${"x".repeat(size)}"`], opts);
          const after = snapshot(path.join(ws, ".kumiki"));
          fs.rmSync(filler);
          const seen = runBin(["view", `slot.${name}`], opts);
          outcomes.push(
            `${leave}/${size}: ${r.code === 0 ? (r.err === "" ? "stored" : "stored, warned") : "refused"}`,
          );
          if (r.code === 0) {
            expect(seen.code, `${name} answered as added: ${seen.err} ${seen.out}`).toBe(0);
            // Stored, and only the readable op-log.jsonl left behind (a full disk) is said, as a warning.
            if (r.err !== "")
              expect(r.err, name).toMatch(
                /^kumiki add: warning: the graph is stored, but \S+op-log\.jsonl could not be brought up to date \(ENOSPC\)/,
              );
          } else {
            expect(r.err, name).toMatch(/storage-failed|nothing changed|cannot open the store/);
            expect(r.err, name).toContain("ENOSPC");
            expect(seen.code, `${name} was refused, yet is stored`).not.toBe(0);
            expect(after, `${name} was refused, yet the workspace changed`).toEqual(before);
          }
        }
      console.info(outcomes.join(", "));
      // Both outcomes happened (the levels straddle a write's size), and space back, writes work.
      expect(
        outcomes.some((o) => o.endsWith("refused")),
        outcomes.join(", "),
      ).toBe(true);
      expect(
        outcomes.some((o) => o.includes("stored")),
        outcomes.join(", "),
      ).toBe(true);
      expect(runBin(["add", "slot", "last", "Int = 2"], opts).code).toBe(0);
      expect(runBin(["status", "--json"], opts).out).not.toContain("damage");
    },
    180_000,
  );
});
