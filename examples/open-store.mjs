// The smallest library program: create a workspace, open its store, add a definition, read it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-"));
const made = await initWorkspace(dir);
if (!made.ok) throw new Error(made.error.message);
await made.value.log.close();

const opened = await openWorkspaceStore(dir, { author: "agent:me" });
if (!opened.ok) throw new Error(opened.error.message);
const { store } = opened.value;
const added = await store.add({ layer: "slot", name: "count", body: ": Int = 0" });
if (!added.ok) throw new Error(`${added.error.code}: ${added.error.message}`);
const view = store.view("slot.count");
console.log(view.ok ? view.value.text : view.error.message); // slot count : Int = 0
await opened.value.close();
