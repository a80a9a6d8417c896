/**
 * The wire format of ai-edit.md §9.3.2 as the spec writes it (no `def`, no `refs`: identity and
 * bindings are completed by name) is taken by ingest; what patch export writes is taken as it is.
 */
import { describe, expect, it } from "vitest";
import { must, newStore, okValue, refused, text } from "./support.js";

const TODO_ID = "op_01KSR4920AZ45X82KX6NBDK1A0";
const TODO = "op_01KSR4920AZ45X82KX6NBDK1A1";
const TODOS = "op_01KSR4920AZ45X82KX6NBDK1A2";

/** The spec's example op (§9.3.2) with real ids, and the two types it depends on, in the same form. */
const SPEC_OPS = [
  {
    op: "add",
    layer: "type",
    name: "TodoId",
    body: "nominal Text",
    author: "agent:claude-1",
    ts: 1779884546000,
    "op-id": TODO_ID,
    "parent-ops": [],
  },
  {
    op: "add",
    layer: "type",
    name: "Todo",
    body: "{id: TodoId, title: Text}",
    author: "agent:claude-1",
    ts: 1779884546001,
    "op-id": TODO,
    "parent-ops": [TODO_ID],
  },
  {
    op: "add",
    layer: "slot",
    name: "todos",
    body: "Map(TodoId, Todo) = {}",
    author: "agent:claude-1",
    ts: 1779884546123,
    "op-id": TODOS,
    "parent-ops": [TODO],
  },
];

describe("ops in the §9.3.2 form", () => {
  it("apply into an empty store: identity from the op-id, references bound by name", async () => {
    const { store } = newStore();
    const r = await must(store.ingest(SPEC_OPS));
    expect(r.opIds).toEqual([TODO_ID, TODO, TODOS]);
    expect(text(store, "slot.todos")).toBe("slot todos : Map(TodoId, Todo) = {}\n");
    expect(okValue(store.refs("type.Todo")).referrers.map((x) => x.qname)).toEqual(["slot.todos"]);
    expect(okValue(store.list()).map((e) => e.def)).toContain(`def_${TODOS.slice(3)}`);
  });

  it("a replace names its target by layer and name", async () => {
    const { store } = newStore();
    await must(store.ingest(SPEC_OPS));
    await must(
      store.ingest([
        {
          op: "replace",
          layer: "slot",
          name: "todos",
          body: "Map(TodoId, Todo) = {}  # kept empty",
          author: "agent:claude-2",
          ts: 1779884547000,
          "op-id": "op_01KSR4920AZ45X82KX6NBDK1A3",
          "parent-ops": [TODOS],
        },
      ]),
    );
    expect(text(store, "slot.todos")).toContain("# kept empty");
  });

  it("still refuses, naming the op: a reference nothing binds, a target nothing shows", async () => {
    const { store, log } = newStore();
    await refused(log, store.ingest([SPEC_OPS[2]!]), "unknown-parent");
    const alone = { ...SPEC_OPS[2]!, "parent-ops": [] };
    const e = await refused(log, store.ingest([alone]), "undefined-reference");
    expect(e.message).toMatch(/TodoId/);
    await refused(
      log,
      store.ingest([{ ...alone, op: "replace", "op-id": "op_01KSR4920AZ45X82KX6NBDK1A4" }]),
      "unknown-definition",
    );
  });
});

describe("bundle items in the §9.3.2 form", () => {
  it("name any target by layer and name, a new name by new-name, and carry author, ts, depends-on", async () => {
    const { store } = newStore(undefined, "agent:claude-1");
    await must(store.ingest(SPEC_OPS));
    const hash = okValue(store.hash("type.Todo"));
    await must(
      store.apply([
        {
          op: "replace",
          layer: "slot",
          name: "todos",
          body: "Map(TodoId, Todo) = {}  # by layer and name",
          author: "agent:claude-1",
          ts: 1779884546123,
          "depends-on": [`type:Todo@${hash}`],
        },
        { op: "rename", layer: "slot", name: "todos", "new-name": "items" },
      ]),
    );
    expect(text(store, "slot.items")).toContain("# by layer and name");
    await must(store.apply({ ops: [{ op: "remove", layer: "slot", name: "items" }] }));
    expect(store.view("slot.items").ok).toBe(false);
  });

  it("refuses another author, and a depends-on that no longer holds, changing nothing", async () => {
    const { store, log } = newStore(undefined, "agent:claude-1");
    await must(store.ingest(SPEC_OPS));
    const e = await refused(
      log,
      store.apply([
        { op: "replace", layer: "type", name: "Todo", body: "{id: TodoId}", author: "agent:other" },
      ]),
      "invalid-input",
    );
    expect(e.message).toMatch(/this store writes as agent:claude-1/);
    const stale = `type:Todo@h:${"0".repeat(64)}`;
    const d = await refused(
      log,
      store.apply([
        { op: "add", layer: "slot", name: "more", body: "List(Todo) = []", "depends-on": [stale] },
      ]),
      "dependency-changed",
    );
    expect(d.message).toMatch(/depends on type\.Todo at h:000000000000…, which is now h:/);
  });
});
