import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initWorkspace } from "../src/workspace.js";
import { acked, assertBuilt, mulberry32, opLogIds, runFixture, sleep } from "./fixtures/children.js";
import { expectEveryWriteHeld } from "./support.js";

/** Kills: enough to land in every phase (opening, merging, writing, compacting, the readable log). */
const KILLS = 52;

let dir = "";
beforeAll(assertBuilt);
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a writer killed with SIGKILL at random points", () => {
  it(`${KILLS} times: the store always opens and holds every acknowledged op`, {
    timeout: 180_000,
  }, async () => {
    const seed = Number(process.env.KUMIKI_FAULT_SEED ?? Date.now() % 1_000_000);
    const random = mulberry32(seed);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-faults-"));
    const init = await initWorkspace(dir);
    if (!init.ok) throw new Error(init.error.message);
    await init.value.log.close();
    const opLog = init.value.paths.opLog;

    const written = new Set<string>();
    const phases = { beforeOpen: 0, afterAcks: 0 };
    for (let round = 0; round < KILLS; round++) {
      const context = `seed ${seed} (KUMIKI_FAULT_SEED), round ${round}`;
      const writer = runFixture("fault-writer.mjs", [dir, `r${String(round).padStart(2, "0")}`]);
      if (random() < 0.25) {
        // Anywhere from process start through opening (lock, load, merge).
        phases.beforeOpen++;
        await Promise.race([sleep(Math.floor(random() * 400)), writer.exited]);
      } else {
        // Mid-stream: after some acknowledged appends, at an arbitrary instant.
        phases.afterAcks++;
        const target = 1 + Math.floor(random() * 12);
        await writer.waitFor(() => acked(writer).length >= target).catch(() => undefined);
        await sleep(Math.floor(random() * 15));
      }
      writer.proc.kill("SIGKILL");
      const exit = await writer.exited;
      expect(exit.code === 0 || exit.signal === "SIGKILL", `${context}: ${writer.stderr()}`).toBe(true);
      for (const id of acked(writer)) written.add(id);

      // The readable log holds every acknowledged op as the writer left it (it is written before the ack).
      const inFile = new Set(opLogIds(opLog));
      const missingInFile = [...written].filter((id) => !inFile.has(id));
      expect(missingInFile, `${context}: missing from op-log.jsonl`).toEqual([]);

      await expectEveryWriteHeld(dir, written, opLog, context);
    }
    expect(written.size).toBeGreaterThan(KILLS);
    expect(phases.beforeOpen + phases.afterAcks).toBe(KILLS);
  });
});
