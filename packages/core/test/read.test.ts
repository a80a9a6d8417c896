import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as read from "../src/read.js";

const bundle = fileURLToPath(new URL("../dist/read.bundle.js", import.meta.url));

describe("@kumiki-graph/core/read", () => {
  it("exports exactly what a read-only fold, the manifest reader and a storage's read path need", () => {
    expect(Object.keys(read).sort()).toEqual(
      [
        "LAYERS",
        "MemoryOpLog",
        "SnapshotOpLog",
        "isAuthorId",
        "isDefId",
        "isDefinitionName",
        "isLayer",
        "isOpId",
        "openStore",
        "parseQualifiedName",
        "parseSelector",
        "CAPS_FILE",
        "readCapabilityManifest",
        "WORKSPACE_DIR",
        // The one durable write, which a storage's read path keeps its op-log.jsonl current with.
        "writeFileAtomic",
        "fsyncDir",
      ].sort(),
    );
  });

  it("ships as one bundled file with the same exports and no Automerge in it", async () => {
    expect(existsSync(bundle), "run `npm run build`: it writes dist/read.bundle.js").toBe(true);
    const text = readFileSync(bundle, "utf8");
    expect(text).not.toMatch(/@automerge|automerge_wasm/);
    // Only Node built-ins are imported: everything else is inside the file.
    const imports = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.filter((s) => !s?.startsWith("node:"))).toEqual([]);
    const loaded = (await import("@kumiki-graph/core/read")) as Record<string, unknown>;
    expect(Object.keys(loaded).sort()).toEqual(Object.keys(read).sort());
  });

  it("folds a store from held ops like the full entry", async () => {
    const r = await import("@kumiki-graph/core/read");
    const store = r.openStore({ log: new r.MemoryOpLog(), author: "agent:read" });
    expect(store.ok).toBe(true);
    if (!store.ok) return;
    const added = await store.value.add({ layer: "slot", name: "n", body: "Int = 1" });
    expect(added.ok).toBe(true);
    expect(store.value.list().ok && store.value.list()).toMatchObject({ value: [{ qname: "slot.n" }] });
  });
});
