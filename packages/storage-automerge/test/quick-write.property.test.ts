/**
 * For every order of writes stored beside the document (quick-write.ts), writes through a store
 * that stays open, its fences, and reopenings: each name is won by one write only, every
 * acknowledged write is held exactly once by the next full open, and the read path shows the same
 * ops as the open log.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspaceStore, type WorkspaceStore } from "../src/open-store.js";
import { openQuickWrite } from "../src/quick-write.js";
import { readWorkspaceOps } from "../src/workspace-read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const NAMES = ["a", "b", "c", "d", "e"];

type Step =
  // `stamp`: the write keeps and reads op-log.jsonl's fold snapshot (fold-snapshot-file.ts).
  | { readonly kind: "quick"; readonly name: string; readonly stamp: boolean }
  | { readonly kind: "live"; readonly name: string }
  | { readonly kind: "fence" }
  | { readonly kind: "reopen" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("quick" as const), name: fc.constantFrom(...NAMES), stamp: fc.boolean() }),
  fc.record({ kind: fc.constant("live" as const), name: fc.constantFrom(...NAMES) }),
  fc.constant({ kind: "fence" as const }),
  fc.constant({ kind: "reopen" as const }),
);

async function open(dir: string, create = false): Promise<WorkspaceStore> {
  const r = await openWorkspaceStore(dir, {
    author: "agent:live",
    checker: false,
    ...(create ? { create } : {}),
  });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

const ids = (ops: readonly { readonly "op-id": string }[] | undefined) => (ops ?? []).map((o) => o["op-id"]);

describe("pending writes among a store that stays open", () => {
  it("one name, one winner; every acknowledged write held once; readers agree", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-quick-prop-"));
        dirs.push(dir);
        let live = await open(dir, true);
        const won = new Map<string, string>(); // name -> op-id of the write that added it
        try {
          for (const s of steps) {
            if (s.kind === "fence") await live.store.fence();
            else if (s.kind === "reopen") {
              await live.close();
              live = await open(dir);
            } else {
              const body = { layer: "slot" as const, name: s.name, body: "Int = 1" };
              let added: Awaited<ReturnType<WorkspaceStore["store"]["add"]>>;
              if (s.kind === "live") added = await live.store.add(body);
              else {
                const q = await openQuickWrite(dir, {
                  author: "agent:quick",
                  validators: [],
                  checker: false,
                  ...(s.stamp ? { checkStamp: "prop" } : {}),
                });
                // Declines only when op-log.jsonl is not current: the full open writes instead.
                const w = q?.ok === true ? q.value : await open(dir);
                added = await w.store.add(body);
                await w.close();
              }
              if (added.ok) {
                expect(won.has(s.name), `${s.name} won twice`).toBe(false);
                won.set(s.name, added.value.opIds[0]!);
              } else expect(won.has(s.name), `${s.name} refused while free`).toBe(true);
            }
          }
          await live.store.fence();
          expect(
            live.store
              .read()
              .definitions()
              .map((d) => d.name)
              .sort(),
          ).toEqual([...won.keys()].sort());
        } finally {
          await live.close();
        }
        const read = await readWorkspaceOps(dir);
        const fresh = await open(dir);
        try {
          const held = ids(fresh.workspace.log.all());
          expect(new Set(held).size).toBe(held.length);
          expect(held.filter((id) => [...won.values()].includes(id)).sort()).toEqual(
            [...won.values()].sort(),
          );
          expect(held).toHaveLength(won.size);
          // op-log.jsonl is sorted by op-id, the log in arrival order: the same ops.
          if (read.ok && read.value.ops !== undefined)
            expect(ids(read.value.ops).sort()).toEqual([...held].sort());
        } finally {
          await fresh.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
