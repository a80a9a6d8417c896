import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { exportProgram, importProgram } from "../../src/project/program.js";
import { syncFiles } from "../../src/project/sync-files.js";
import { SYNC_STATE_FILE } from "../../src/project/sync-state.js";
import type { Store } from "../../src/store/store.js";
import { get, memoryStore, must, put, snapshot, TempDirs } from "./helpers.js";

const dirs = new TempDirs();
afterEach(() => {
  vi.restoreAllMocks();
  dirs.cleanup();
});

const PROGRAM = `type TodoId = nominal Text where uuid
type Todo = {id: TodoId, text: Text, done: Bool}

slot todos : Map(TodoId, Todo) = {}
slot draft : Text = ""
tile Input = input(bind=draft)
`;

/** A store holding PROGRAM and its tree, synced once. */
async function synced(): Promise<{ store: Store; root: string }> {
  const store = memoryStore();
  must(await importProgram(store, PROGRAM));
  const root = dirs.make();
  const r = must(await syncFiles(store, root));
  expect(r.written.length).toBe(5);
  return { store, root };
}

function text(store: Store, q: string): string {
  return must(store.view(q)).text;
}

function unlink(root: string, p: string): void {
  fs.rmSync(path.join(root, p));
}

function move(root: string, from: string, to: string): void {
  fs.renameSync(path.join(root, from), path.join(root, to));
}

describe("syncFiles: the first sync and the second", () => {
  it("writes the tree on the first sync; a second sync changes nothing, on either side", async () => {
    const { store, root } = await synced();
    expect(get(root, "types/Todo.kumiki")).toBe("type Todo = {id: TodoId, text: Text, done: Bool}\n");
    expect(get(root, "slots/todos.kumiki")).toBe("slot todos : Map(TodoId, Todo) = {}\n");
    const tree = snapshot(root);
    const ops = store.status().ops;
    const r = must(await syncFiles(store, root));
    expect(r).toMatchObject({
      items: [],
      applied: [],
      written: [],
      removed: [],
      conflicts: [],
      errors: [],
      files: 5,
    });
    expect(snapshot(root)).toEqual(tree);
    expect(store.status().ops).toBe(ops);
  });
});

describe("syncFiles: file edits become ops, in one bundle", () => {
  it("a changed file is a replace; the file is left as written", async () => {
    const { store, root } = await synced();
    put(root, "slots/draft.kumiki", 'slot draft : Text = "hello"   # greeting\n');
    const r = must(await syncFiles(store, root));
    expect(r.items.map((i) => [i.item.op, i.paths])).toEqual([["replace", ["slots/draft.kumiki"]]]);
    expect(r.applied.map((o) => o.op)).toEqual(["replace"]);
    expect(r.written).toEqual([]);
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "hello"   # greeting\n');
    // The blank line that separated it from the definition above stays in the program.
    expect(exportProgram(store)).toContain('{}\nslot draft : Text = "hello"');
    expect(must(await syncFiles(store, root)).items).toEqual([]);
  });

  it("a new file is an add, a deleted one a remove, all in one bundle", async () => {
    const { store, root } = await synced();
    put(root, "fns/count.kumiki", "fn count(ts: Map(TodoId, Todo)) -> Int = ts.size\n");
    put(root, "tiles/Counter.kumiki", "tile Counter = text(count(todos).show)\n");
    unlink(root, "tiles/Input.kumiki");
    const r = must(await syncFiles(store, root));
    expect(r.items.map((i) => i.item.op)).toEqual(["add", "add", "remove"]);
    expect(new Set(r.applied.map((o) => o.op))).toEqual(new Set(["add", "remove"]));
    expect(store.status().heads.length).toBe(1);
    expect(must(store.list("tile")).map((e) => e.qname)).toEqual(["tile.Counter"]);
    expect(get(root, "tiles/Input.kumiki")).toBeUndefined();
  });

  it("a file moved with its text unchanged is a rename: no hash changes, dependents' files show the new name", async () => {
    const { store, root } = await synced();
    const hashTodo = must(store.hash("type.Todo"));
    move(root, "types/TodoId.kumiki", "types/ItemId.kumiki");
    const r = must(await syncFiles(store, root));
    expect(r.items.map((i) => [i.item.op, i.paths])).toEqual([
      ["rename", ["types/TodoId.kumiki", "types/ItemId.kumiki"]],
    ]);
    expect(r.applied.map((o) => o.op)).toEqual(["rename"]);
    expect(must(store.hash("type.Todo"))).toBe(hashTodo);
    expect(get(root, "types/ItemId.kumiki")).toBe("type ItemId = nominal Text where uuid\n");
    expect(get(root, "types/Todo.kumiki")).toBe("type Todo = {id: ItemId, text: Text, done: Bool}\n");
    expect(r.written).toEqual(["slots/todos.kumiki", "types/ItemId.kumiki", "types/Todo.kumiki"]);
    expect(must(await syncFiles(store, root)).items).toEqual([]);
  });

  it("a file moved and edited (new name inside, new layout) is a rename and a replace", async () => {
    const { store, root } = await synced();
    unlink(root, "slots/draft.kumiki");
    put(root, "slots/entry.kumiki", '# what is typed\nslot entry : Text =   ""\n');
    const r = must(await syncFiles(store, root));
    expect(r.items.map((i) => i.item.op)).toEqual(["rename", "replace"]);
    expect(text(store, "slot.entry")).toBe('# what is typed\nslot entry : Text =   ""\n');
    expect(get(root, "tiles/Input.kumiki")).toBe("tile Input = input(bind=entry)\n");
    expect(must(await syncFiles(store, root)).items).toEqual([]);
  });

  it("a file moved with only its declared name changed is a rename alone", async () => {
    const { store, root } = await synced();
    unlink(root, "slots/draft.kumiki");
    put(root, "slots/entry.kumiki", 'slot entry : Text = ""\n');
    const r = must(await syncFiles(store, root));
    expect(r.items.map((i) => i.item.op)).toEqual(["rename"]);
  });
});

describe("syncFiles: files that cannot be taken", () => {
  it("a file that does not parse is reported with its path and position; the other edits apply", async () => {
    const { store, root } = await synced();
    const broken = "slot draft : Text =\n  = 1\n";
    put(root, "slots/draft.kumiki", broken);
    put(root, "types/Todo.kumiki", "type Todo = {id: TodoId, text: Text}\n");
    const before = text(store, "slot.draft");
    const r = must(await syncFiles(store, root));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ path: "slots/draft.kumiki", code: "parse-error", line: 2 });
    expect(r.errors[0]!.message).toMatch(/^slots\/draft\.kumiki:2:\d+: /);
    expect(r.items.map((i) => i.paths[0])).toEqual(["types/Todo.kumiki"]);
    expect(text(store, "slot.draft")).toBe(before);
    expect(text(store, "type.Todo")).toBe("type Todo = {id: TodoId, text: Text}\n");
    expect(get(root, "slots/draft.kumiki")).toBe(broken);
    // Still reported until fixed, and never overwritten.
    const again = must(await syncFiles(store, root));
    expect(again.errors.map((e) => e.path)).toEqual(["slots/draft.kumiki"]);
    expect(get(root, "slots/draft.kumiki")).toBe(broken);
    put(root, "slots/draft.kumiki", 'slot draft : Text = "x"\n');
    const fixed = must(await syncFiles(store, root));
    expect(fixed.errors).toEqual([]);
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "x"\n');
  });

  it("a file that defines another name than its path is refused", async () => {
    const { store, root } = await synced();
    put(root, "types/Label.kumiki", "type Tag = Text\n");
    put(root, "slots/Oops.kumiki", "type Oops = Int\n");
    const r = must(await syncFiles(store, root));
    expect(r.errors.map((e) => [e.path, e.code])).toEqual([
      ["slots/Oops.kumiki", "definition-mismatch"],
      ["types/Label.kumiki", "definition-mismatch"],
    ]);
    expect(r.applied).toEqual([]);
  });

  it("a deleted file the store refuses to remove (still referenced) is reported; nothing from it applies", async () => {
    const { store, root } = await synced();
    unlink(root, "types/TodoId.kumiki");
    put(root, "slots/draft.kumiki", 'slot draft : Text = "y"\n');
    const r = must(await syncFiles(store, root));
    expect(r.errors.map((e) => [e.path, e.code])).toEqual([["types/TodoId.kumiki", "referenced"]]);
    expect(r.items.map((i) => i.paths[0])).toEqual(["slots/draft.kumiki"]);
    expect(text(store, "type.TodoId")).toBe("type TodoId = nominal Text where uuid\n");
    expect(get(root, "types/TodoId.kumiki")).toBeUndefined();
    // Putting the file back settles it.
    put(root, "types/TodoId.kumiki", "type TodoId = nominal Text where uuid\n");
    const again = must(await syncFiles(store, root));
    expect(again).toMatchObject({ items: [], errors: [], conflicts: [], files: 5 });
  });
});

describe("syncFiles: store changes are written back", () => {
  it("adds, renames and removes in the store show in the files", async () => {
    const { store, root } = await synced();
    must(await store.add({ layer: "fn", name: "count", body: "(ts: Map(TodoId, Todo)) -> Int = ts.size" }));
    must(await store.rename({ qname: "slot.draft", newName: "entry" }));
    must(await store.remove({ qname: "slot.todos" }));
    const r = must(await syncFiles(store, root));
    expect(r.items).toEqual([]);
    expect(r.written).toEqual(["fns/count.kumiki", "slots/entry.kumiki", "tiles/Input.kumiki"]);
    expect(r.removed).toEqual(["slots/draft.kumiki", "slots/todos.kumiki"]);
    expect(get(root, "slots/entry.kumiki")).toBe('slot entry : Text = ""\n');
    expect(must(await syncFiles(store, root))).toMatchObject({ written: [], removed: [], items: [] });
  });
});

describe("syncFiles: a file changed on both sides", () => {
  it("is a reported conflict, neither side overwritten, until the two agree", async () => {
    const { store, root } = await synced();
    put(root, "slots/draft.kumiki", 'slot draft : Text = "from the file"\n');
    must(await store.replace({ qname: "slot.draft", body: 'Text = "from the store"' }));
    const r = must(await syncFiles(store, root));
    expect(r.conflicts).toHaveLength(1);
    expect(r.conflicts[0]).toMatchObject({
      path: "slots/draft.kumiki",
      definition: "slot.draft",
      file: 'slot draft : Text = "from the file"\n',
      store: 'slot draft : Text = "from the store"\n',
    });
    expect(r.items).toEqual([]);
    expect(get(root, "slots/draft.kumiki")).toBe('slot draft : Text = "from the file"\n');
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "from the store"\n');
    // Still a conflict on the next sync.
    expect(must(await syncFiles(store, root)).conflicts).toHaveLength(1);
    // The person takes the store's text: in step again.
    put(root, "slots/draft.kumiki", 'slot draft : Text = "from the store"\n');
    const done = must(await syncFiles(store, root));
    expect(done).toMatchObject({ conflicts: [], items: [], written: [], files: 5 });
    expect(must(await syncFiles(store, root))).toMatchObject({ conflicts: [], items: [], written: [] });
  });

  it("a file edited while the store removed its definition, and a file created on both sides, conflict", async () => {
    const { store, root } = await synced();
    put(root, "tiles/Input.kumiki", 'tile Input = input(bind=draft, placeholder="?")\n');
    must(await store.remove({ qname: "tile.Input" }));
    put(root, "types/Tag.kumiki", "type Tag = Text\n");
    must(await store.add({ layer: "type", name: "Tag", body: "Int" }));
    const r = must(await syncFiles(store, root));
    expect(r.conflicts.map((c) => c.path)).toEqual(["tiles/Input.kumiki", "types/Tag.kumiki"]);
    expect(get(root, "types/Tag.kumiki")).toBe("type Tag = Text\n");
    expect(get(root, "tiles/Input.kumiki")).toContain("placeholder");
  });
});

describe("syncFiles: a file edited while the store renamed its definition", () => {
  it("is a conflict naming the new path; neither path is written", async () => {
    const { store, root } = await synced();
    put(root, "slots/draft.kumiki", 'slot draft : Text = "edited"\n');
    must(await store.rename({ qname: "slot.draft", newName: "entry" }));
    const r = must(await syncFiles(store, root));
    expect(r.conflicts).toHaveLength(1);
    expect(r.conflicts[0]).toMatchObject({ path: "slots/draft.kumiki", storePath: "slots/entry.kumiki" });
    expect(get(root, "slots/entry.kumiki")).toBeUndefined();
    expect(get(root, "slots/draft.kumiki")).toBe('slot draft : Text = "edited"\n');
  });
});

describe("syncFiles: dry run", () => {
  it("reports what a sync would do and writes nothing", async () => {
    const { store, root } = await synced();
    put(root, "slots/draft.kumiki", 'slot draft : Text = "dry"\n');
    must(await store.rename({ qname: "type.Todo", newName: "Item" }));
    const tree = snapshot(root);
    const ops = store.status().ops;
    const r = must(await syncFiles(store, root, { dryRun: true }));
    expect(r.dryRun).toBe(true);
    expect(r.applied.map((o) => o.op)).toEqual(["replace"]);
    expect(r.written).toEqual(["slots/todos.kumiki", "types/Item.kumiki"]);
    expect(r.removed).toEqual(["types/Todo.kumiki"]);
    expect(snapshot(root)).toEqual(tree);
    expect(store.status().ops).toBe(ops);
    const real = must(await syncFiles(store, root));
    expect({ written: real.written, removed: real.removed, ops: real.applied.map((o) => o.op) }).toEqual({
      written: r.written,
      removed: r.removed,
      ops: ["replace"],
    });
  });
});

describe("syncFiles: an interrupted write", () => {
  it("leaves every file with its old or its new content, and the next sync finishes", async () => {
    const { store, root } = await synced();
    must(await store.replace({ qname: "slot.draft", body: 'Text = "new"' }));
    must(await store.replace({ qname: "type.Todo", body: "{id: TodoId, text: Text}" }));
    const real = fs.renameSync;
    let calls = 0;
    vi.spyOn(fs, "renameSync").mockImplementation((from, to) => {
      // The first tree file is written; the second fails between its temp write and its rename.
      if (++calls === 2) throw new Error("injected: power cut");
      real(from, to);
    });
    const r = await syncFiles(store, root);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("storage-failed");
    expect(r.error.message).toContain("sync again");
    vi.restoreAllMocks();
    // Each file holds its old or its new text, and the write before the cut went through.
    const draft = get(root, "slots/draft.kumiki");
    const todo = get(root, "types/Todo.kumiki");
    expect(['slot draft : Text = ""\n', 'slot draft : Text = "new"\n']).toContain(draft);
    expect([
      "type Todo = {id: TodoId, text: Text, done: Bool}\n",
      "type Todo = {id: TodoId, text: Text}\n",
    ]).toContain(todo);
    expect(draft === 'slot draft : Text = "new"\n' || todo === "type Todo = {id: TodoId, text: Text}\n").toBe(
      true,
    );
    // No temp file is left behind.
    expect([...snapshot(root).keys()].filter((k) => k.includes(".tmp-"))).toEqual([]);
    const again = must(await syncFiles(store, root));
    expect(again).toMatchObject({ conflicts: [], errors: [], items: [] });
    expect(get(root, "slots/draft.kumiki")).toBe('slot draft : Text = "new"\n');
    expect(get(root, "types/Todo.kumiki")).toBe("type Todo = {id: TodoId, text: Text}\n");
  });

  it("a sync cut off after storing a rename, before writing the files, finishes on the next sync", async () => {
    const { store, root } = await synced();
    move(root, "types/TodoId.kumiki", "types/ItemId.kumiki");
    const statePath = path.join(root, SYNC_STATE_FILE);
    const state = get(root, SYNC_STATE_FILE);
    vi.spyOn(fs, "renameSync").mockImplementation(() => {
      throw new Error("injected: disk full");
    });
    const r = await syncFiles(store, root);
    expect(r.ok ? "ok" : r.error.code).toBe("storage-failed");
    vi.restoreAllMocks();
    expect(must(store.list("type")).map((e) => e.name)).toContain("ItemId");
    expect(fs.readFileSync(statePath, "utf8")).toBe(state);
    const again = must(await syncFiles(store, root));
    expect(again).toMatchObject({ conflicts: [], errors: [], items: [] });
    expect(get(root, "types/ItemId.kumiki")).toBe("type ItemId = nominal Text where uuid\n");
    expect(get(root, "types/Todo.kumiki")).toBe("type Todo = {id: ItemId, text: Text, done: Bool}\n");
  });
});

describe("syncFiles: each file's edit on its own merits", () => {
  it("a new file with an error the checker gate refuses blocks no other file, and only it is reported", async () => {
    const store = memoryStore("agent:test", true);
    must(await importProgram(store, PROGRAM));
    const root = dirs.make();
    must(await syncFiles(store, root));
    // A fn that reads a slot (E0305): the write gate refuses it, naming no bundle item.
    put(root, "fns/bad.kumiki", "fn bad() -> Text = draft\n");
    put(root, "slots/draft.kumiki", 'slot draft : Text = "hello"\n');
    put(root, "slots/extra.kumiki", "slot extra : Int = 0\n");
    const r = must(await syncFiles(store, root));
    expect(r.errors.map((e) => [e.path, e.code])).toEqual([["fns/bad.kumiki", "validation-failed"]]);
    expect(r.errors[0]!.message).toMatch(/^fns\/bad\.kumiki: .*E0305/);
    expect(text(store, "slot.draft")).toContain('"hello"');
    expect(text(store, "slot.extra")).toBe("slot extra : Int = 0\n");
    expect(store.view("fn.bad").ok).toBe(false);
    // The bad file is left as it is, and reported again until fixed; then it goes in.
    expect(get(root, "fns/bad.kumiki")).toBe("fn bad() -> Text = draft\n");
    expect(must(await syncFiles(store, root)).errors.map((e) => e.path)).toEqual(["fns/bad.kumiki"]);
    put(root, "fns/bad.kumiki", 'fn bad() -> Text = "fine"\n');
    expect(must(await syncFiles(store, root)).errors).toEqual([]);
    expect(text(store, "fn.bad")).toContain('"fine"');
  });
});

describe("syncFiles: a tree it must not follow or misread", () => {
  it("a layer folder that is a symbolic link out of the workspace: refused, nothing written there or in the store", async () => {
    const { store, root } = await synced();
    const outside = dirs.make();
    fs.renameSync(path.join(root, "slots"), path.join(outside, "slots"));
    fs.symlinkSync(path.join(outside, "slots"), path.join(root, "slots"));
    // The store changes a slot: the sync would write its file through the link.
    must(await store.replace({ qname: "slot.draft", body: ': Text = "hi"' }));
    const before = snapshot(outside);
    const ops = store.status().ops;
    const r = await syncFiles(store, root);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("tree-unreadable");
    expect(r.error.message).toMatch(/slots is a symbolic link \(to .*\).*nothing was read or written/);
    expect(snapshot(outside)).toEqual(before);
    expect(store.status().ops).toBe(ops);
  });

  it("a definition file that is a symbolic link: refused, the file it points to left alone", async () => {
    const { store, root } = await synced();
    const outside = path.join(dirs.make(), "secret.kumiki");
    fs.writeFileSync(outside, 'slot draft : Text = "elsewhere"\n');
    fs.rmSync(path.join(root, "slots/draft.kumiki"));
    fs.symlinkSync(outside, path.join(root, "slots/draft.kumiki"));
    const r = await syncFiles(store, root);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.message).toMatch(/draft\.kumiki is a symbolic link/);
    expect(fs.readFileSync(outside, "utf8")).toBe('slot draft : Text = "elsewhere"\n');
    expect(text(store, "slot.draft")).toBe('slot draft : Text = ""\n');
  });

  it("a file that is not UTF-8 (Latin-1): refused naming the byte, never stored as U+FFFD", async () => {
    const { store, root } = await synced();
    // "café" in Latin-1: é is the single byte 0xE9.
    const latin1 = Buffer.concat([
      Buffer.from('slot draft : Text = "caf'),
      Buffer.from([0xe9]),
      Buffer.from('"\n'),
    ]);
    fs.writeFileSync(path.join(root, "slots/draft.kumiki"), latin1);
    const ops = store.status().ops;
    const r = await syncFiles(store, root);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toMatch(/draft\.kumiki is not UTF-8 text \(byte 24 is 0xe9\)/);
    expect(r.error.details).toMatchObject({ reason: "not-utf8", offset: 24 });
    expect(store.status().ops).toBe(ops);
    expect(text(store, "slot.draft")).not.toContain("\uFFFD");
    // Converted, it syncs.
    fs.writeFileSync(path.join(root, "slots/draft.kumiki"), 'slot draft : Text = "café"\n');
    must(await syncFiles(store, root));
    expect(text(store, "slot.draft")).toBe('slot draft : Text = "café"\n');
  });
});
