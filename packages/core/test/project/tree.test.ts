import fs from "node:fs";
import path from "node:path";
import { corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { afterEach, describe, expect, it } from "vitest";
import { importProgram } from "../../src/project/program.js";
import { projectTree } from "../../src/project/project-tree.js";
import { projectGraph } from "../../src/project/projection.js";
import { syncFiles } from "../../src/project/sync-files.js";
import { SYNC_STATE_FILE } from "../../src/project/sync-state.js";
import type { Store } from "../../src/store/store.js";
import { get, memoryStore, must, snapshot, TempDirs } from "./helpers.js";

const dirs = new TempDirs();
afterEach(() => dirs.cleanup());

const PROGRAM = `# Todos
type TodoId = nominal Text where uuid

type Todo = {id: TodoId, text: Text, done: Bool}
slot todos : Map(TodoId, Todo) = {}
slot draft : Text = ""   # what is being typed

# ---- view ----

tile Input = input(bind=draft)
theme Base = { colors: { fg: "#222" } }
`;

/**
 * The graph up to identities, by qualified name: each definition's file content and what each of
 * its references is bound to (by qualified name). Hashes are not compared: a nominal type's hash
 * is salted with its identity, which a tree does not carry.
 */
function graphOf(store: Store): Record<string, { content: string; refs: Record<string, string> }> {
  const reader = store.read();
  const out: Record<string, { content: string; refs: Record<string, string> }> = {};
  for (const f of projectGraph(reader).byPath.values()) {
    const refs: Record<string, string> = {};
    for (const [k, t] of Object.entries(reader.get(f.def)!.refs)) refs[k] = reader.label(t);
    out[`${f.layer}.${f.name}`] = { content: f.content, refs };
  }
  return out;
}

describe("projectTree", () => {
  it("writes one file a definition in its layer's folder, and the sync state", async () => {
    const store = memoryStore();
    must(await importProgram(store, PROGRAM));
    const root = dirs.make();
    const r = must(projectTree(store, root));
    expect(r.written).toEqual([
      "slots/draft.kumiki",
      "slots/todos.kumiki",
      "themes/Base.kumiki",
      "tiles/Input.kumiki",
      "types/Todo.kumiki",
      "types/TodoId.kumiki",
    ]);
    expect(get(root, "types/TodoId.kumiki")).toBe("# Todos\ntype TodoId = nominal Text where uuid\n");
    // The blank lines between definitions stay in the store, not at the top of a file.
    expect(get(root, "types/Todo.kumiki")).toBe("type Todo = {id: TodoId, text: Text, done: Bool}\n");
    expect(get(root, "tiles/Input.kumiki")).toBe("# ---- view ----\n\ntile Input = input(bind=draft)\n");
    const state = JSON.parse(get(root, SYNC_STATE_FILE)!);
    expect(Object.keys(state.files)).toEqual(r.written);
    // Once more: nothing to write.
    const before = snapshot(root);
    expect(must(projectTree(store, root)).written).toEqual([]);
    expect(snapshot(root)).toEqual(before);
  });

  it("removes definition files the store does not show and leaves other files alone", async () => {
    const store = memoryStore();
    must(await importProgram(store, PROGRAM));
    const root = dirs.make();
    fs.mkdirSync(path.join(root, "types"), { recursive: true });
    fs.writeFileSync(path.join(root, "types/Old.kumiki"), "type Old = Int\n");
    fs.writeFileSync(path.join(root, "types/README.md"), "notes\n");
    const r = must(projectTree(store, root));
    expect(r.removed).toEqual(["types/Old.kumiki"]);
    expect(get(root, "types/README.md")).toBe("notes\n");
  });
});

describe.skipIf(!hasCorpus)("graph → tree → graph on every corpus program", () => {
  for (const p of corpusPrograms()) {
    it(`${p.id}`, async () => {
      const a = memoryStore("agent:a");
      const imported = await importProgram(a, p.source);
      must(imported);
      const root = dirs.make();
      must(projectTree(a, root));
      // A fresh checkout of the tree (no sync state: it is machine-local) into an empty store.
      fs.rmSync(path.join(root, SYNC_STATE_FILE));
      const b = memoryStore("agent:b");
      const r = must(await syncFiles(b, root));
      expect(r.errors).toEqual([]);
      expect(r.conflicts).toEqual([]);
      expect(r.written).toEqual([]);
      expect(graphOf(b)).toEqual(graphOf(a));
      // And back: the store projects to the same tree, and a second sync changes nothing.
      const tree = snapshot(root);
      const again = must(await syncFiles(b, root));
      expect(again.items).toEqual([]);
      expect(again.written).toEqual([]);
      expect(again.removed).toEqual([]);
      expect(snapshot(root)).toEqual(tree);
    });
  }
});
