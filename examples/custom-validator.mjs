// A team rule as a write validator: every write passes the gate before anything is stored, and a
// validator compares the graph after the write with the graph before it. Here: slot names are
// camelCase. The checker's own gate stays in front (createCheckGate), so a write that adds a
// program error is still refused for that. Self-checking; run it from the repository root:
//
//   node examples/custom-validator.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCheckGate } from "@kumiki-graph/core";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";

/** @type {import("@kumiki-graph/core").WriteValidator} */
const camelCaseSlots = {
  validate({ after, touched }) {
    const problems = [];
    for (const id of touched) {
      const d = after.get(id);
      if (d?.alive && d.layer === "slot" && !/^[a-z][A-Za-z0-9]*$/.test(d.name)) {
        problems.push({
          code: "validation-failed",
          message: `slot.${d.name}: slot names are camelCase in this team (e.g. ${d.name.replace(/[-_](\w)/g, (_, c) => c.toUpperCase())}); nothing was written`,
          details: { rule: "camel-case-slots", name: d.name },
        });
      }
    }
    return problems;
  },
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-validator-"));
try {
  const made = await initWorkspace(dir);
  if (!made.ok) throw new Error(made.error.message);
  await made.value.log.close();
  const opened = await openWorkspaceStore(dir, {
    author: "agent:validator",
    validators: [createCheckGate(), camelCaseSlots],
  });
  if (!opened.ok) throw new Error(opened.error.message);
  const { store } = opened.value;
  try {
    const good = await store.add({ layer: "slot", name: "itemCount", body: ": Int = 0" });
    assert.ok(good.ok);
    const bad = await store.add({ layer: "slot", name: "item_total", body: ": Int = 0" });
    assert.equal(bad.ok, false);
    assert.equal(bad.error.code, "validation-failed");
    console.log(`refused: ${bad.error.message}`);
    // Renaming into a bad name is a write too.
    const renamed = await store.rename({ qname: "slot.itemCount", newName: "item-count" });
    assert.equal(renamed.ok, false);
    assert.equal(renamed.error.details?.rule, "camel-case-slots");
    // A refused write leaves the store as it was.
    assert.equal(store.status().ops, 1);
    console.log(
      `kept: ${store
        .list()
        .value.map((e) => e.qname)
        .join(", ")}`,
    );
  } finally {
    await opened.value.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
