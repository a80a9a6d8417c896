/**
 * The project.kumiki/ tree of a real workspace: it lives beside `.kumiki/`, whose op-log.jsonl this
 * package's op log writes, and the tree's sync state is git-ignored there.
 */
import { importProgram, openStore, syncFiles } from "@kumiki-graph/core";
import { get, put, TempDirs } from "@kumiki-graph/test-support/files";
import { afterEach, describe, expect, it } from "vitest";
import { initWorkspace } from "../src/workspace.js";
import { must, okValue } from "./support.js";

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

describe("the tree of a workspace", () => {
  it("lives beside .kumiki/, whose op-log.jsonl the store writes; the sync state is git-ignored", async () => {
    const root = dirs.make();
    const ws = await initWorkspace(root);
    if (!ws.ok) throw new Error(ws.error.message);
    const store = okValue(openStore({ log: ws.value.log, author: "user:alice", validators: [] }));
    try {
      await must(importProgram(store, PROGRAM));
      const r = okValue(await syncFiles(store, root));
      expect(r.files).toBe(6);
      expect(get(root, "slots/draft.kumiki")).toBe('slot draft : Text = ""   # what is being typed\n');
      const ignore = get(root, ".kumiki/.gitignore")!;
      expect(ignore.split("\n")).toContain("tree-state.json");
      put(root, "slots/draft.kumiki", 'slot draft : Text = "x"\n');
      expect(okValue(await syncFiles(store, root)).applied).toHaveLength(1);
      expect(get(root, ".kumiki/.gitignore")).toBe(ignore);
    } finally {
      await store.close();
    }
    const log = get(root, ".kumiki/op-log.jsonl")!.trim().split("\n");
    expect(log.map((l) => JSON.parse(l).op)).toEqual([...Array(6).fill("add"), "replace"]);
  });
});
