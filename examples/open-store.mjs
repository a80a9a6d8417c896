// The smallest library program: open a folder's store (made there the first time), add, read.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-"));
const opened = await openWorkspaceStore(dir, { create: true, author: "agent:me" });
if (!opened.ok) throw new Error(opened.error.message);
const { store } = opened.value;
const added = await store.add({ layer: "slot", name: "count", body: ": Int = 0" });
if (!added.ok) throw new Error(`${added.error.code}: ${added.error.message}`);
const view = store.view("slot.count");
console.log(view.ok ? view.value.text : view.error.message); // slot count : Int = 0
await opened.value.close();
