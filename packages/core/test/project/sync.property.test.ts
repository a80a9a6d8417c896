import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { importProgram } from "../../src/project/program.js";
import { projectGraph } from "../../src/project/projection.js";
import { type FileSyncReport, syncFiles } from "../../src/project/sync-files.js";
import { fileHash, SYNC_STATE_FILE } from "../../src/project/sync-state.js";
import type { Store } from "../../src/store/store.js";
import { get, memoryStore, must, put, snapshot, TempDirs } from "./helpers.js";

const dirs = new TempDirs();
afterEach(() => dirs.cleanup());

const NAMES = ["A", "B", "C", "D"] as const;
const name = fc.constantFrom(...NAMES);
/** A type body: a primitive, or a reference to another type (which may not exist: refused, reported). */
const body = fc.oneof(
  fc.constantFrom("Int", "Text", "Bool", "{x: Int}"),
  name.map((n) => `List(${n})`),
);

type Action =
  | { kind: "file-write"; name: string; body: string }
  | { kind: "file-delete"; name: string }
  | { kind: "file-move"; from: string; to: string }
  | { kind: "store-set"; name: string; body: string }
  | { kind: "store-remove"; name: string }
  | { kind: "store-rename"; from: string; to: string }
  | { kind: "sync" };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant("file-write" as const), name, body }),
  fc.record({ kind: fc.constant("file-delete" as const), name }),
  fc.record({ kind: fc.constant("file-move" as const), from: name, to: name }),
  fc.record({ kind: fc.constant("store-set" as const), name, body }),
  fc.record({ kind: fc.constant("store-remove" as const), name }),
  fc.record({ kind: fc.constant("store-rename" as const), from: name, to: name }),
  fc.constant({ kind: "sync" as const }),
);

const file = (n: string): string => `types/${n}.kumiki`;

/** What the store shows, per definition: its path and the hash of its file content. */
function shown(store: Store): Map<string, { path: string; hash: string }> {
  const out = new Map<string, { path: string; hash: string }>();
  for (const f of projectGraph(store.read()).byDef.values())
    out.set(f.def, { path: f.path, hash: fileHash(f.content) });
  return out;
}

/** The sync state on disk: definition → the path and hash both sides agreed on at the last sync. */
function recorded(root: string): Map<string, { path: string; hash: string }> {
  const text = get(root, SYNC_STATE_FILE);
  const files = (text === undefined ? {} : JSON.parse(text).files) as Record<
    string,
    { def: string; hash: string }
  >;
  return new Map(Object.entries(files).map(([path, f]) => [f.def, { path, hash: f.hash }]));
}

/** The store's tree, path → content. */
function storeTree(store: Store): Map<string, string> {
  return new Map([...projectGraph(store.read()).byPath.values()].map((f) => [f.path, f.content]));
}

/** The definition files of the tree on disk. */
function diskTree(root: string): Map<string, string> {
  return new Map([...snapshot(root)].filter(([k]) => k.startsWith("types/")));
}

/** The paths a sync reported and left alone. */
function leftAlone(r: FileSyncReport): Set<string> {
  return new Set([
    ...r.conflicts.flatMap((c) => (c.storePath === undefined ? [c.path] : [c.path, c.storePath])),
    ...r.errors.map((e) => e.path),
  ]);
}

describe("syncFiles, any interleaving of file edits, store edits and syncs", () => {
  it("never overwrites an edit it did not take, converges once conflicts are settled, and is idempotent", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 14 }), async (actions) => {
        const store = memoryStore();
        must(await importProgram(store, "type A = Int\ntype B = List(A)\n"));
        const root = dirs.make();
        must(await syncFiles(store, root));
        let lastDisk = diskTree(root);
        // What each path held when both sides last agreed on it (a sync that left it in step). A
        // file rewritten with exactly that content is unchanged to a three-way merge: the store's
        // side is taken (deleting a file and writing its agreed text back is no edit).
        const agreedText = new Map(lastDisk);

        const sync = async (): Promise<FileSyncReport> => {
          const before = shown(store);
          const agreed = recorded(root);
          // Paths a person changed since the last sync.
          const now = diskTree(root);
          const touched = new Set(
            [...new Set([...now.keys(), ...lastDisk.keys()])].filter((p) => now.get(p) !== lastDisk.get(p)),
          );
          const r = must(await syncFiles(store, root));
          const taken = new Set(r.items.flatMap((i) => i.paths));
          // A file a person changed is only rewritten or removed when its change went into the store,
          // or when it is a file of the last sync moved as it was (the store renamed it alike).
          // A file deleted is only written again with another definition than the one deleted.
          const moved = new Set(lastDisk.values());
          const agreedAt = new Map([...agreed].map(([def, a]) => [a.path, def]));
          const shownAt = projectGraph(store.read()).byPath;
          for (const p of [...r.written, ...r.removed]) {
            const content = now.get(p);
            if (!touched.has(p) || taken.has(p)) continue;
            if (content === undefined) expect(shownAt.get(p)?.def).not.toBe(agreedAt.get(p) ?? "none");
            else if (content !== agreedText.get(p)) expect(moved).toContain(content);
          }
          // A definition the store changed since both sides last agreed on it gets no op from a file.
          for (const op of r.applied) {
            const d = "def" in op ? (op.def as string) : undefined;
            if (d !== undefined && agreed.has(d)) expect(before.get(d)).toEqual(agreed.get(d));
          }
          // Every path is in step, or left alone and reported.
          const left = leftAlone(r);
          const disk = diskTree(root);
          const want = storeTree(store);
          for (const p of new Set([...disk.keys(), ...want.keys()]))
            if (!left.has(p)) expect([p, disk.get(p)]).toEqual([p, want.get(p)]);
          lastDisk = diskTree(root);
          for (const p of new Set([...disk.keys(), ...want.keys()])) {
            if (left.has(p)) continue;
            const text = lastDisk.get(p);
            if (text === undefined) agreedText.delete(p);
            else agreedText.set(p, text);
          }
          return r;
        };

        for (const a of actions) {
          switch (a.kind) {
            case "file-write":
              put(root, file(a.name), `type ${a.name} = ${a.body}\n`);
              break;
            case "file-delete":
              fs.rmSync(path.join(root, file(a.name)), { force: true });
              break;
            case "file-move":
              if (
                a.from !== a.to &&
                get(root, file(a.from)) !== undefined &&
                get(root, file(a.to)) === undefined
              ) {
                fs.renameSync(path.join(root, file(a.from)), path.join(root, file(a.to)));
              }
              break;
            case "store-set":
              if (store.read().lookup("type", a.name) === undefined)
                await store.add({ layer: "type", name: a.name, body: a.body });
              else await store.replace({ qname: `type.${a.name}`, body: a.body });
              break;
            case "store-remove":
              await store.remove({ qname: `type.${a.name}` });
              break;
            case "store-rename":
              await store.rename({ qname: `type.${a.from}`, newName: a.to });
              break;
            case "sync":
              await sync();
              break;
          }
        }
        const last = await sync();
        // Settle what was left alone by taking the store's side, then everything is in step.
        const want = storeTree(store);
        for (const p of leftAlone(last)) {
          const content = want.get(p);
          if (content === undefined) fs.rmSync(path.join(root, p), { force: true });
          else put(root, p, content);
        }
        const settled = await sync();
        expect(settled.conflicts).toEqual([]);
        expect(settled.errors).toEqual([]);
        expect(diskTree(root)).toEqual(storeTree(store));
        expect(settled.files).toBe(storeTree(store).size);
        // Once in step, a sync changes nothing.
        const tree = snapshot(root);
        const ops = store.status().ops;
        const again = must(await syncFiles(store, root));
        expect(again).toMatchObject({ items: [], written: [], removed: [], conflicts: [], errors: [] });
        expect(snapshot(root)).toEqual(tree);
        expect(store.status().ops).toBe(ops);
        dirs.cleanup();
      }),
      // A fixed seed by default, so CI is stable; KUMIKI_PROPERTY_SEED explores others (seed
      // -1514878029 found the three-way case above).
      { numRuns: 60, seed: Number(process.env.KUMIKI_PROPERTY_SEED ?? -1514878029) },
    );
  });
});
