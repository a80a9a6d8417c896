/**
 * The MCP server (`kumiki mcp serve`, a real process over stdio) on a disk that fills up: a real
 * small tmpfs, filled to around a write's size before each `kumiki_add`. The server answers every
 * call — an add it could not store as `unavailable storage-failed`, never as a bug of its own (the
 * lock file it could not create was one) — and stays up: automerge-repo's background saves fail on
 * the full disk too, and nothing catches them (they could end the process with an ENOSPC stack).
 *
 * A refused add is never seen or stored later (it stayed in the server's open document, and
 * kumiki_view showed it once the space came back), and the next add once there is space is stored
 * (the op log refused every write after a failed one until it was reopened, while the error said
 * "retry the call").
 */
import fs from "node:fs";
import path from "node:path";
import { fillDisk, mountable, mountTmpfs, NOT_MOUNTABLE, unmount } from "@kumiki-graph/test-support/tmpfs";
import { afterAll, describe, expect, it } from "vitest";
import { connect, dispose, kumikiBin, ok, tempDir, workspaceFrom } from "./support/session.js";

const mounts: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const m of mounts) unmount(m);
  for (const d of dirs) await dispose(d);
});

describe("the MCP server on a disk that fills up", () => {
  if (!mountable) it.skip(NOT_MOUNTABLE, () => {});
  it.skipIf(!mountable)(
    "answers every add, a refused one as storage-failed, and stays up",
    async () => {
      const root = await tempDir("full-disk");
      dirs.push(root);
      const disk = path.join(root, "disk");
      mountTmpfs(disk, "1m");
      mounts.push(disk);
      const ws = path.join(disk, "ws");
      await workspaceFrom(ws, "slot first : Int = 1");
      const session = await connect(process.execPath, [kumikiBin, "mcp", "serve", "--store", ws]);
      const refused: string[] = [];
      const stored: string[] = [];
      try {
        const outcomes: string[] = [];
        let n = 0;
        for (const leave of [0, 4096, 8192, 12_288])
          for (const size of [10, 3_000, 9_000]) {
            const name = `w${n++}`;
            const filler = fillDisk(disk, leave);
            const added = await session.call("kumiki_add", {
              layer: "slot",
              name,
              body: `: Text = "${"x".repeat(size)}"`,
            });
            // The background saves of the full disk have their turn before the space comes back.
            await new Promise((r) => setTimeout(r, 300));
            fs.rmSync(filler);
            const seen = await session.call("kumiki_view", { selector: `slot.${name}` });
            outcomes.push(`${leave}/${size}: ${added.isError ? "refused" : "stored"}`);
            (added.isError ? refused : stored).push(name);
            if (!added.isError) expect(seen.isError, `${name} answered as added`).toBe(false);
            else {
              expect(seen.isError, `${name} answered as refused, then shown`).toBe(true);
              const e = added.value.error as { kind: string; code: string };
              expect(
                `${e.kind} ${e.code}`,
                `${name}: ${JSON.stringify(added.value)}\n${session.stderr()}`,
              ).toBe("unavailable storage-failed");
            }
          }
        expect(
          outcomes.some((o) => o.endsWith("refused")),
          outcomes.join(", "),
        ).toBe(true);
        // Still up, reading, and writing again now that there is space.
        ok(await session.call("kumiki_view", { selector: "slot.first" }));
        ok(await session.call("kumiki_add", { layer: "slot", name: "after", body: ": Int = 2" }));
        ok(await session.call("kumiki_view", { selector: "slot.after" }));
        expect(session.stderr()).not.toMatch(/ENOSPC[\s\S]*at |handleErrorFromBinding/);
      } finally {
        await session.close();
      }
      // What the disk holds once the server is gone: every stored add, no refused one.
      const log = fs.readFileSync(path.join(ws, ".kumiki", "op-log.jsonl"), "utf8");
      for (const name of stored) expect(log, `${name} stored`).toContain(`"${name}"`);
      for (const name of refused) expect(log, `${name} refused`).not.toContain(`"${name}"`);
    },
    180_000,
  );
});
