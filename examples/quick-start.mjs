// The main job, end to end, on the embedded default (a workspace folder, no server): make a
// workspace from a small program that has a mistake, view a definition, edit one, check the
// program, let fix repair what it can, and print what happened. Self-checking: it fails loudly
// (non-zero exit) if any step does not do what it says. Run it from the repository root:
//
//   node examples/quick-start.mjs [DIR]      (DIR defaults to a new temporary folder)
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { applyFixes, checkStore, importProgram } from "@kumiki-graph/core";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";

// A tiny program written for this example; `vots` in `up` is a misspelling of `votes`.
const PROGRAM = `slot   votes : Int = 0

reducer up    on=ui.click(UpBtn)    do= votes := vots + 1
reducer clear on=ui.click(ClearBtn) do= votes := 0

tile   UpBtn    = button(text="+1")
tile   ClearBtn = button(text="clear")
tile   Home     = column(heading("Votes: " + votes), row(UpBtn, ClearBtn))

app    Tally
    caps   = []
    routes = {"/" -> Home, "/404" -> Home}
    init   = []
`;

const dir = process.argv[2] ?? fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-quick-start-"));
const made = await initWorkspace(dir);
if (!made.ok) throw new Error(made.error.message);
await made.value.log.close();
console.log(`workspace: ${made.value.paths.dir}`);

const opened = await openWorkspaceStore(dir, { author: "agent:quick-start" });
if (!opened.ok) throw new Error(opened.error.message);
const { store } = opened.value;
try {
  // A program with errors imports as written: the repair loop starts from it.
  const imported = await importProgram(store, PROGRAM);
  assert.ok(imported.ok, imported.ok ? "" : imported.error.message);
  console.log(`imported ${store.status().definitions} definitions`);

  const before = checkStore(store);
  console.log(
    `check: ${before.errors} error(s): ${before.diagnostics.map((d) => `${d.code} at ${d.location}`).join(", ")}`,
  );
  assert.equal(before.errors, 1);

  const fixed = await applyFixes(store, { code: "E0103" });
  assert.ok(fixed.ok, fixed.ok ? "" : fixed.error.message);
  console.log(
    `fix: ${fixed.value.applied.length} applied, errors ${fixed.value.before.errors} -> ${fixed.value.after.errors}`,
  );

  const edited = await store.edit({ qname: "tile.UpBtn", patch: [{ find: '"+1"', replace: '"vote"' }] });
  assert.ok(edited.ok, edited.ok ? "" : edited.error.message);
  const view = store.view("tile.UpBtn");
  assert.ok(view.ok);
  console.log(`view tile.UpBtn: ${view.value.text.trim()}`);
  assert.match(view.value.text, /button\(text="vote"\)/);

  const after = checkStore(store);
  assert.equal(after.errors, 0, after.diagnostics.map((d) => d.message).join("; "));
  console.log(`check: clean · ${store.status().ops} ops in the graph`);
} finally {
  await opened.value.close();
}
