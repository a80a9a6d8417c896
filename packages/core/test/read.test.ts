import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import * as read from "../src/read.js";

const readEntry = fileURLToPath(new URL("../dist/read.js", import.meta.url));

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
        // What a storage records op-log.jsonl's lines were checked with (its sidecar's `wire`).
        "isWireOp",
        "WIRE_SCHEMA_VERSION",
        "isLayer",
        "isOpId",
        "openStore",
        "parseQualifiedName",
        "parseSelector",
        "CAPS_FILE",
        "readCapabilityManifest",
        "WORKSPACE_DIR",
        // The table of every definition a view keeps and a write appends to, and `view` and `list` from it.
        "definitionTable",
        "viewFromTable",
        "listFromTable",
        "refsFromTable",
        "statusFromTable",
        "statusOfState",
        "definitionRows",
        "changedRows",
        "rowsOf",
        // The one durable write, which a storage's read path keeps its op-log.jsonl current with.
        "writeFileAtomic",
        "writeAll",
        "fsyncDir",
      ].sort(),
    );
  });

  it("shares its modules with the main entry: one copy of each class, and no Automerge or checker", async () => {
    const entry = await import("@kumiki-graph/core/read");
    const main = await import("@kumiki-graph/core");
    expect(Object.keys(entry).sort()).toEqual(Object.keys(read).sort());
    expect(entry.MemoryOpLog).toBe(main.MemoryOpLog);
    expect(entry.SnapshotOpLog).toBe(main.SnapshotOpLog);
    expect(new entry.MemoryOpLog()).toBeInstanceOf(main.MemoryOpLog);
    // Every module dist/read.js reaches, followed through its static imports.
    const seen = new Set<string>();
    const bare = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)";/gms)) {
        const spec = m[1]!;
        if (spec.startsWith(".")) walk(fileURLToPath(new URL(spec, pathToFileURL(file))));
        else bare.add(spec);
      }
    };
    walk(readEntry);
    expect(seen.size).toBeGreaterThan(20);
    expect([...bare].filter((s) => /automerge/.test(s))).toEqual([]);
    expect([...seen].filter((f) => /[\\/]dist[\\/]check[\\/]/.test(f))).toEqual([]);
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
