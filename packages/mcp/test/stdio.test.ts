/**
 * The real thing: an SDK client over stdio driving `node packages/cli/bin/kumiki.js mcp serve
 * --store DIR` on a workspace built from the TodoMVC example, through every tool and every error
 * form. Every structuredContent is validated against the tool's result schema from kumiki://schemas.
 */

import { corpusProgram } from "@kumiki-graph/test-support/corpus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispose, errorOf, ok, type Session, serve, tempDir, workspaceFrom } from "./support/session.js";

const todo = corpusProgram("apps/02-todomvc/app.kumiki");

/** TodoMVC with storage.write dropped from app.caps: one E0301 error, with an auto-patch, to fix. */
const CAPS = "caps   = [storage.read, storage.write]";

const TOOL_NAMES = [
  "kumiki_view",
  "kumiki_list",
  "kumiki_add",
  "kumiki_replace",
  "kumiki_edit",
  "kumiki_rename",
  "kumiki_remove",
  "kumiki_check",
  "kumiki_fix",
  "kumiki_refs",
  "kumiki_history",
  "kumiki_episode",
  "kumiki_fix_apply",
  "kumiki_conflicts",
  "kumiki_apply",
  "kumiki_revert",
];
const READ_ONLY = [
  "kumiki_view",
  "kumiki_list",
  "kumiki_check",
  "kumiki_refs",
  "kumiki_history",
  "kumiki_episode",
  "kumiki_conflicts",
];

describe.skipIf(todo === undefined)("kumiki mcp serve over stdio (TodoMVC)", () => {
  let dir: string | undefined;
  let s: Session;

  beforeAll(async () => {
    expect(todo!.source).toContain(CAPS);
    dir = await tempDir("todo");
    await workspaceFrom(dir, todo!.source.replace(CAPS, "caps   = [storage.read]"), { withErrors: true });
    s = await serve(dir);
  });

  afterAll(async () => {
    await s?.close();
    await dispose(dir);
  });

  it("lists the twelve tools of §9.7 and ours (fix_apply, conflicts, apply, revert) with strict inputs, output schemas and honest hints, in under 15 KB", async () => {
    const listed = await s.client.listTools();
    const { tools } = listed;
    expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
    // The JSON-RPC answer as it crosses the wire (was 33 KB with every result schema inline; the
    // public Kumiki server's is 15.4 KB).
    const wire = Buffer.byteLength(JSON.stringify({ result: listed, jsonrpc: "2.0", id: 1 }), "utf8");
    expect(wire).toBeLessThan(15 * 1024);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
      // The result's top level, or the error envelope (the SDK's client checks every answer by it).
      expect(t.outputSchema?.type).toBe("object");
      expect(t.outputSchema?.properties?.error).toEqual({ type: "object" });
      // Hints at their MCP default are left out: readOnlyHint false, destructiveHint true, idempotentHint false.
      expect(t.annotations?.readOnlyHint === true).toBe(READ_ONLY.includes(t.name));
      const destructive = t.annotations?.readOnlyHint !== true && t.annotations?.destructiveHint !== false;
      expect(destructive).toBe(t.name === "kumiki_remove" || t.name === "kumiki_apply");
      expect(t.annotations?.openWorldHint).toBe(false);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("kumiki_view")?.annotations?.idempotentHint).toBe(true);
    expect(byName.get("kumiki_edit")?.annotations?.idempotentHint).toBeUndefined();
    // Every tool's result schema and the error envelope, once, in kumiki://schemas.
    const read = await s.client.readResource({ uri: "kumiki://schemas" });
    const doc = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      error: { properties: Record<string, unknown> };
      results: Record<string, { type: string }>;
    };
    expect(Object.keys(doc.results)).toEqual(TOOL_NAMES);
    expect(Object.keys(doc.error.properties)).toEqual(["error"]);
    expect(Object.keys(byName.get("kumiki_add")!.inputSchema.properties ?? {})).toEqual([
      "layer",
      "name",
      "body",
      "task",
      "idempotency_key",
    ]);
    expect(byName.get("kumiki_add")!.inputSchema.required).toEqual(["layer", "name", "body"]);
  });

  it("declares its limits as a resource", async () => {
    const { resources } = await s.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      "kumiki://limits",
      "kumiki://conflicts",
      "kumiki://schemas",
    ]);
    const read = await s.client.readResource({ uri: "kumiki://limits" });
    const doc = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      limits: { name: string; value: number }[];
    };
    expect(doc.limits.map((l) => [l.name, l.value])).toEqual([
      ["bodyBytes", 65536],
      ["responseBytes", 262144],
      ["wildcardResults", 200],
      ["httpSessions", 64],
      ["idleSeconds", 1800],
    ]);
  });

  it("kumiki_list: every definition, or one layer", async () => {
    const all = ok(await s.call("kumiki_list", {})).definitions as { qname: string; def: string }[];
    expect(all).toHaveLength(33);
    expect(all.every((d) => d.def.startsWith("def_"))).toBe(true);
    const slots = ok(await s.call("kumiki_list", { layer: "slot" })).definitions as { qname: string }[];
    expect(slots.map((d) => d.qname).sort()).toEqual([
      "slot.draft",
      "slot.filter",
      "slot.ready",
      "slot.todos",
    ]);
  });

  it("kumiki_view: one definition, with its dependencies, and a pattern", async () => {
    const one = ok(await s.call("kumiki_view", { selector: "slot.todos" }));
    expect(one.text).toMatch(/^slot todos\s*: Map\(TodoId, Todo\)\s*= \{\}\n$/);
    expect(one.definitions).toHaveLength(1);
    const deps = ok(await s.call("kumiki_view", { selector: "slot.todos", with_deps: true }));
    const names = (deps.definitions as { qname: string }[]).map((d) => d.qname);
    expect(names[0]).toBe("slot.todos");
    expect(names).toEqual(expect.arrayContaining(["type.Todo", "type.TodoId"]));
    const tiles = ok(await s.call("kumiki_view", { selector: "tile.Filter*" }));
    expect((tiles.definitions as { qname: string }[]).map((d) => d.qname).sort()).toEqual([
      "tile.FilterBar",
      "tile.FilterTab",
    ]);
  });

  it("kumiki_refs: the referrers of a definition, with lines", async () => {
    const r = ok(await s.call("kumiki_refs", { qname: "tile.ClearBtn" }));
    expect(r.target).toBe("tile.ClearBtn");
    const referrers = r.referrers as { qname: string; lines: number[] }[];
    expect(referrers.map((x) => x.qname)).toEqual(
      expect.arrayContaining(["tile.Footer", "reducer.clearDone"]),
    );
    expect(referrers.every((x) => x.lines.length > 0)).toBe(true);
  });

  it("kumiki_check reports the error; kumiki_fix proposes (writing nothing), kumiki_fix_apply applies its patch", async () => {
    const before = ok(await s.call("kumiki_check", {}));
    expect(before.ok).toBe(false);
    const codes = (before.diagnostics as { code: string }[]).map((d) => d.code);
    expect(codes).toContain("E0301");
    const narrowed = ok(await s.call("kumiki_check", { scope: "types" }));
    expect(typeof narrowed.errors).toBe("number");
    ok(await s.call("kumiki_check", { scope: "a11y" }));

    const proposed = ok(await s.call("kumiki_fix", { error_code: "E0301" }));
    const proposals = proposed.proposals as { id: string; bundle: unknown[] }[];
    expect(proposals.length).toBeGreaterThan(0);
    expect(proposals[0]!.bundle.length).toBeGreaterThan(0);
    // Proposing wrote nothing.
    expect(ok(await s.call("kumiki_check", {})).errors).toBe(before.errors);

    const applied = ok(await s.call("kumiki_fix_apply", { error_code: "E0301", task: "fix-caps" }));
    const written = applied.applied as { opIds: string[] }[];
    expect(written.length).toBeGreaterThan(0);
    expect(written[0]!.opIds[0]).toMatch(/^op_/);
    const after = ok(await s.call("kumiki_check", {}));
    expect((after.diagnostics as { code: string }[]).map((d) => d.code)).not.toContain("E0301");
    expect(ok(await s.call("kumiki_view", { selector: "app.TodoApp" })).text).toContain("storage.write");
  });

  const opIds: string[] = [];

  it("kumiki_add, kumiki_replace, kumiki_edit, kumiki_rename each answer their op-ids", async () => {
    const added = ok(
      await s.call("kumiki_add", { layer: "slot", name: "count", body: ": Int = 1", task: "t-1" }),
    );
    expect(added.opIds).toEqual([expect.stringMatching(/^op_/)]);
    expect(added.def).toMatch(/^def_/);
    // Small answers: the op-id and the identity, no tables, no echo of the ops.
    expect(JSON.stringify(added).length).toBeLessThan(120);
    opIds.push(...(added.opIds as string[]));
    const replaced = ok(
      await s.call("kumiki_replace", { qname: "slot.count", body: ": Int = 2", task: "t-1" }),
    );
    opIds.push(...(replaced.opIds as string[]));
    const edited = ok(
      await s.call("kumiki_edit", {
        qname: "slot.count",
        patch: [{ find: "= 2", replace: "= 3" }],
        task: "t-1",
      }),
    );
    opIds.push(...(edited.opIds as string[]));
    expect(ok(await s.call("kumiki_view", { selector: "slot.count" })).text).toBe("slot count : Int = 3\n");
    const renamed = ok(
      await s.call("kumiki_rename", { qname: "slot.count", new_name: "counter", task: "t-1" }),
    );
    opIds.push(...(renamed.opIds as string[]));
    expect(opIds).toHaveLength(4);
    expect(new Set(opIds).size).toBe(4);
    const slots = ok(await s.call("kumiki_list", { layer: "slot" })).definitions as { qname: string }[];
    expect(slots.map((d) => d.qname)).toContain("slot.counter");
    expect(slots.map((d) => d.qname)).not.toContain("slot.count");
  });

  it("kumiki_history follows the definition across its rename", async () => {
    const h = ok(await s.call("kumiki_history", { qname: "slot.counter" }));
    const defs = h.definitions as {
      names: string[];
      entries: { opId: string; op: string; status: string }[];
    }[];
    expect(defs).toHaveLength(1);
    expect(defs[0]!.names).toEqual(["count", "counter"]);
    expect(defs[0]!.entries.map((e) => e.opId)).toEqual(opIds);
    expect(defs[0]!.entries.map((e) => e.op)).toEqual(["add", "replace", "edit", "rename"]);
    expect(defs[0]!.entries.every((e) => e.status === "applied")).toBe(true);
  });

  it("kumiki_episode: a task's ops from the op log, saying there is no runtime episode log", async () => {
    const e = ok(await s.call("kumiki_episode", { episode_id: "t-1" }));
    expect(e.source).toBe("op-log");
    expect(String(e.note)).toContain("no runtime episode log");
    expect((e.entries as { opId: string; qname: string }[]).map((x) => x.opId)).toEqual(opIds);
    const one = ok(await s.call("kumiki_episode", { episode_id: opIds[1]! }));
    expect((one.entries as { op: string }[]).map((x) => x.op)).toEqual(["replace"]);
    const fixes = ok(await s.call("kumiki_episode", { episode_id: "fix-caps" }));
    expect((fixes.entries as { qname: string }[])[0]!.qname).toBe("app.TodoApp");
  });

  it("kumiki_remove answers the op-id and the names removed", async () => {
    const r = ok(await s.call("kumiki_remove", { qname: "slot.counter", task: "t-2" }));
    expect(r.opIds).toEqual([expect.stringMatching(/^op_/)]);
    expect(r.removed).toEqual(["slot.counter"]);
    expect(errorOf(await s.call("kumiki_view", { selector: "slot.counter" })).kind).toBe("not-found");
  });

  it("kumiki_remove with cascade takes every transitive referrer in one write", async () => {
    const r = ok(await s.call("kumiki_remove", { qname: "tile.NotFound", cascade: true, task: "t-3" }));
    expect([...(r.removed as string[])].sort()).toEqual(["app.TodoApp", "tile.NotFound"]);
    expect((r.opIds as string[]).length).toBeGreaterThanOrEqual(2);
    expect(errorOf(await s.call("kumiki_view", { selector: "app.TodoApp" })).kind).toBe("not-found");
  });

  describe("every failure is the error envelope with isError true", () => {
    it("an unknown argument is refused by name, nothing done", async () => {
      const e = errorOf(await s.call("kumiki_view", { selector: "slot.todos", colour: "red" }));
      expect(e).toMatchObject({ kind: "unknown-argument", argument: "colour" });
      expect(e.message).toContain("colour");
      expect(e.message).toContain("selector, with_deps");
      const nested = errorOf(
        await s.call("kumiki_edit", {
          qname: "slot.todos",
          patch: [{ find: "{}", replace: "{}", fuzzy: true }],
        }),
      );
      expect(nested).toMatchObject({ kind: "unknown-argument", argument: "patch.0.fuzzy" });
      const before = ok(await s.call("kumiki_list", {})).definitions;
      errorOf(await s.call("kumiki_add", { layer: "slot", name: "x", body: ": Int = 0", force: true }));
      expect(ok(await s.call("kumiki_list", {})).definitions).toEqual(before);
    });

    it("a missing or mistyped argument is named", async () => {
      expect(errorOf(await s.call("kumiki_view", {}))).toMatchObject({
        kind: "invalid-argument",
        argument: "selector",
      });
      expect(errorOf(await s.call("kumiki_view", { selector: 7 }))).toMatchObject({
        kind: "invalid-argument",
        argument: "selector",
      });
      expect(errorOf(await s.call("kumiki_check", { scope: "style" }))).toMatchObject({
        kind: "invalid-argument",
        argument: "scope",
      });
    });

    it("an unknown tool: a JSON-RPC error (-32602), as the 2025-11-25 spec lists it, naming the tools", async () => {
      const call = s.client.callTool({ name: "kumiki_frobnicate", arguments: {} });
      await expect(call).rejects.toMatchObject({ code: -32602, data: { kind: "unknown-tool" } });
      await expect(call).rejects.toThrow(/no tool "kumiki_frobnicate"; the tools are .*kumiki_view/);
      // A huge name is not echoed whole.
      const long = s.client.callTool({ name: "x".repeat(100_000), arguments: {} });
      await expect(long).rejects.toThrow(/\(100000 characters\)/);
      // The session goes on.
      expect((await s.call("kumiki_list", {})).isError).toBe(false);
    });

    it("not found, with a suggestion", async () => {
      const e = errorOf(await s.call("kumiki_view", { selector: "slot.todo" }));
      expect(e).toMatchObject({ kind: "not-found", code: "not-found" });
      expect(e.message).toContain("slot.todos");
      expect(errorOf(await s.call("kumiki_refs", { qname: "tile.Nope" })).kind).toBe("not-found");
      expect(errorOf(await s.call("kumiki_history", { qname: "fn.nope" })).kind).toBe("not-found");
      expect(errorOf(await s.call("kumiki_episode", { episode_id: "no-such-task" })).kind).toBe("not-found");
    });

    it("an invalid request", async () => {
      // Declared in the schema now (an enum of the ten layers): refused by argument, up front.
      const layer = errorOf(await s.call("kumiki_list", { layer: "widget" }));
      expect(layer).toMatchObject({ kind: "invalid-argument", argument: "layer" });
      expect(
        errorOf(await s.call("kumiki_add", { layer: "slot", name: "x", body: "Int = 0", task: "has space" })),
      ).toMatchObject({
        kind: "invalid-argument",
        argument: "task",
      });
      expect(
        errorOf(await s.call("kumiki_add", { layer: "slot", name: "n".repeat(33), body: "Int = 0" })),
      ).toMatchObject({
        kind: "invalid-argument",
        argument: "name",
      });
      expect(errorOf(await s.call("kumiki_fix", { error_code: "E9999" }))).toMatchObject({
        kind: "invalid-request",
        argument: "error_code",
      });
    });

    it("a rejected write changes nothing", async () => {
      const before = ok(await s.call("kumiki_list", {})).definitions;
      const dup = errorOf(await s.call("kumiki_add", { layer: "slot", name: "todos", body: ": Int = 0" }));
      expect(dup).toMatchObject({ kind: "rejected", code: "duplicate-name" });
      const parse = errorOf(await s.call("kumiki_replace", { qname: "slot.draft", body: ": = =" }));
      expect(parse).toMatchObject({ kind: "rejected", code: "parse-error" });
      const anchor = errorOf(
        await s.call("kumiki_edit", { qname: "slot.draft", patch: [{ find: "no such text", replace: "x" }] }),
      );
      expect(anchor).toMatchObject({ kind: "rejected", code: "anchor-not-found" });
      const referenced = errorOf(await s.call("kumiki_remove", { qname: "type.Todo" }));
      expect(referenced).toMatchObject({ kind: "rejected", code: "referenced" });
      expect(referenced.message).toContain("slot.todos");
      // Said in MCP's terms: its cascade argument, and no CLI flag.
      expect(referenced.message).toMatch(/give cascade: true to remove every dependent too$/);
      expect(referenced.message).not.toContain("--");
      // A write that would add an error: the diagnostics once, in details (not in the message too).
      const added = errorOf(
        await s.call("kumiki_add", { layer: "slot", name: "bad", body: ': Int = "text"' }),
      );
      expect(added).toMatchObject({ kind: "rejected", code: "validation-failed" });
      const diagnostics = (added as { details?: { diagnostics?: { message: string }[] } }).details
        ?.diagnostics;
      expect(diagnostics?.length).toBeGreaterThan(0);
      for (const d of diagnostics ?? []) expect(added.message).not.toContain(d.message);
      expect(added.message).toContain("details.diagnostics");
      expect(ok(await s.call("kumiki_list", {})).definitions).toEqual(before);
    });

    it("a body over bodyBytes, by the limit's name", async () => {
      const body = `: Text = "${"x".repeat(70_000)}"`;
      const e = errorOf(await s.call("kumiki_add", { layer: "slot", name: "big", body }));
      expect(e).toMatchObject({ kind: "limit-exceeded", limit: "bodyBytes" });
      expect(e.message).toContain("65536");
      expect(errorOf(await s.call("kumiki_view", { selector: "slot.big" })).kind).toBe("not-found");
    });

    it("more than 256 anchors or body:N lines: declared in the schema, refused by argument", async () => {
      const { tools } = await s.client.listTools();
      const patch = JSON.stringify(
        tools.find((t) => t.name === "kumiki_edit")?.inputSchema.properties?.patch,
      );
      expect(patch).toContain('"maxItems":256');
      expect(patch).toContain('"maxProperties":256');
      const anchors = Array.from({ length: 257 }, (_, i) => ({ find: `a${i}`, replace: "b" }));
      const lines = Object.fromEntries(
        Array.from({ length: 257 }, (_, i) => [`body:${i + 1}`, "replace 'a' -> 'b'"]),
      );
      for (const p of [anchors, lines]) {
        expect(errorOf(await s.call("kumiki_edit", { qname: "slot.draft", patch: p }))).toMatchObject({
          kind: "invalid-argument",
          argument: "patch",
        });
      }
    });

    it("no call hit a bug (every result was also checked for the store's path)", () => {
      expect(s.stderr()).not.toContain("internal error");
    });
  });
});

describe.skipIf(todo === undefined)("limits set with --limit", () => {
  let dir: string | undefined;
  let s: Session;

  beforeAll(async () => {
    dir = await tempDir("limits");
    await workspaceFrom(dir, todo!.source);
    s = await serve(dir, ["--limit", "wildcardResults=5", "--limit", "responseBytes=3000"]);
  });

  afterAll(async () => {
    await s?.close();
    await dispose(dir);
  });

  it("are what kumiki://limits says", async () => {
    const read = await s.client.readResource({ uri: "kumiki://limits" });
    const doc = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      limits: { name: string; value: number }[];
    };
    expect(Object.fromEntries(doc.limits.map((l) => [l.name, l.value]))).toEqual({
      bodyBytes: 65536,
      responseBytes: 3000,
      wildcardResults: 5,
      httpSessions: 64,
      idleSeconds: 1800,
    });
  });

  it("a pattern matching more than wildcardResults is refused by the limit's name", async () => {
    const e = errorOf(await s.call("kumiki_view", { selector: "tile.*" }));
    expect(e).toMatchObject({ kind: "limit-exceeded", limit: "wildcardResults" });
    expect(e.message).toMatch(/10.*over the wildcardResults limit of 5/);
    ok(await s.call("kumiki_view", { selector: "slot.*" }));
  });

  it("a result over responseBytes is refused by the limit's name", async () => {
    const e = errorOf(await s.call("kumiki_view", { selector: "tile.App", with_deps: true }));
    expect(e).toMatchObject({ kind: "limit-exceeded", limit: "responseBytes" });
    ok(await s.call("kumiki_view", { selector: "tile.App" }));
  });
});
