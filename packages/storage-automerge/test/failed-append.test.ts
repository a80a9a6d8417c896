/**
 * A write refused by a full disk stays refused, and the store writes again once there is space —
 * in one long-running process (the MCP server's, a library user's), on a real full disk (a small
 * tmpfs). Before: the refused change stayed in the open Automerge document, so reads showed it and
 * a later save could store it once space came back (a write answered "refused, retry" stored, and a
 * retry storing it twice); and the op log refused every write after the failed one until the
 * process reopened it, while the refusal said to retry.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fillDisk, mountable, mountTmpfs, NOT_MOUNTABLE, unmount } from "@kumiki-graph/test-support/tmpfs";
import { afterAll, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";

const mounts: string[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const m of mounts) unmount(m);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function open(dir: string, create = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, { create, author: "agent:test" });
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** The slot names a store's graph holds now. */
function slots(ws: WorkspaceStore): string[] {
  const v = ws.store.view("slot.*");
  if (!v.ok) return [];
  return [...v.value.text.matchAll(/^slot (\w+)/gm)].map((m) => m[1] ?? "").sort();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a write refused by a full disk, in a store that stays open", () => {
  if (!mountable) it.skip(NOT_MOUNTABLE, () => {});
  it.skipIf(!mountable)(
    "is never read or stored later, and the next write once there is space is stored",
    async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-failed-append-"));
      dirs.push(root);
      const disk = path.join(root, "disk");
      mountTmpfs(disk, "1m");
      mounts.push(disk);
      const dir = path.join(disk, "ws");
      const ws = await open(dir, true);
      try {
        expect((await ws.store.add({ layer: "slot", name: "first", body: ": Int = 1" })).ok).toBe(true);
        // Room for the lock file, not for the change (random text: Automerge compresses a repeated one).
        const filler = fillDisk(disk, 8192);
        const refused = await ws.store.add({
          layer: "slot",
          name: "refused",
          body: `: Text = "${randomBytes(12_000).toString("base64")}"`,
        });
        expect(refused.ok ? "stored" : `${refused.error.code}: ${refused.error.message}`).toMatch(
          /^storage-failed: (?!.*lock could not be taken).*ENOSPC/,
        );
        expect(slots(ws)).toEqual(["first"]);
        // Space comes back; automerge-repo's background saves have had their turn on both sides.
        await sleep(300);
        fs.rmSync(filler);
        await sleep(300);
        expect(slots(ws)).toEqual(["first"]);
        // What the disk holds, read by a second, independent open: the refused write is not there.
        const other = await open(dir);
        expect(slots(other)).toEqual(["first"]);
        await other.close();
        // The next write works in the same open store, and the refused one never comes back.
        const next = await ws.store.add({ layer: "slot", name: "second", body: ": Int = 2" });
        expect(next.ok ? "stored" : `${next.error.code}: ${next.error.message}`).toBe("stored");
        expect(slots(ws)).toEqual(["first", "second"]);
      } finally {
        await ws.close();
      }
      const again = await open(dir);
      try {
        expect(slots(again)).toEqual(["first", "second"]);
        expect(fs.readFileSync(path.join(dir, ".kumiki", "op-log.jsonl"), "utf8")).not.toContain("refused");
      } finally {
        await again.close();
      }
    },
    60_000,
  );
});
