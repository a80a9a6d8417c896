/**
 * Writes stored beside the document (quick-write.ts) and writes that fold them in, by processes
 * killed with SIGKILL at random points: the quick writer mid-write (a temporary file, a lock held by
 * the dead), a full writer mid-fold (the change stored, the pending files not yet removed). After
 * every kill the read path shows every acknowledged op, a full open holds each exactly once, and
 * its close leaves op-log.jsonl with all of them and nothing pending.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PendingBundles } from "../src/pending-bundles.js";
import { initWorkspace } from "../src/workspace.js";
import { readWorkspaceOps } from "../src/workspace-read.js";
import { acked, assertBuilt, mulberry32, runFixture, sleep } from "./fixtures/children.js";
import { expectEveryWriteHeld } from "./support.js";

/** Kills: quick writers and full writers about equally, each at a random moment. */
const KILLS = 30;

let dir = "";
beforeAll(assertBuilt);
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("quick writes and folds killed with SIGKILL at random points", () => {
  it(`${KILLS} times: every acknowledged op is read at once, held once, and in op-log.jsonl after a close`, {
    timeout: 180_000,
  }, async () => {
    const seed = Number(process.env.KUMIKI_FAULT_SEED ?? Date.now() % 1_000_000);
    const random = mulberry32(seed);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-quick-faults-"));
    const init = await initWorkspace(dir);
    if (!init.ok) throw new Error(init.error.message);
    await init.value.log.close();
    const { opLog, storage } = init.value.paths;
    const written = new Set<string>();
    const kinds = { quick: 0, full: 0 };
    for (let round = 0; round < KILLS; round++) {
      const context = `seed ${seed} (KUMIKI_FAULT_SEED), round ${round}`;
      const quick = random() < 0.6;
      kinds[quick ? "quick" : "full"]++;
      const name = `r${String(round).padStart(2, "0")}`;
      const writer = runFixture(quick ? "quick-fault-writer.mjs" : "fault-writer.mjs", [dir, name]);
      const target = Math.floor(random() * 10);
      await writer.waitFor(() => acked(writer).length >= target).catch(() => undefined);
      await sleep(Math.floor(random() * 20));
      writer.proc.kill("SIGKILL");
      const exit = await writer.exited;
      expect(exit.code === 0 || exit.signal === "SIGKILL", `${context}: ${writer.stderr()}`).toBe(true);
      for (const id of acked(writer)) written.add(id);

      // Read at once, without opening the document: op-log.jsonl and the pending files (the read
      // path may decline when the writer died between a chunk and op-log.jsonl: then the open shows it).
      const read = await readWorkspaceOps(dir);
      if (read.ok && read.value.ops !== undefined) {
        const seen = new Set(read.value.ops.map((o) => o["op-id"]));
        expect(
          [...written].filter((id) => !seen.has(id)),
          `${context}: not read`,
        ).toEqual([]);
      }
      // Every few rounds only, so that pending files pile up and later folds (and kills) meet them.
      if (round % 5 !== 4 && round !== KILLS - 1) continue;
      await expectEveryWriteHeld(dir, written, opLog, context);
      expect(new PendingBundles(storage).names(), `${context}: left pending`).toEqual([]);
    }
    expect(written.size).toBeGreaterThan(KILLS);
    expect(kinds.quick).toBeGreaterThan(0);
    expect(kinds.full).toBeGreaterThan(0);
  });
});
