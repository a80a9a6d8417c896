import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defIdOf } from "../../src/ops/ids.js";
import { isWireOp, OP_LIMITS, OpSchema, parseOp } from "../../src/ops/op.js";
import { OpBuilder } from "./builder.js";

function samples(): Record<string, unknown>[] {
  const b = new OpBuilder();
  const add = b.add("slot todos : Map(TodoId, Todo) = {}", {
    refs: { "type:TodoId": defIdOf(b.add("type TodoId = Text")["op-id"]) },
  });
  const typ = b.add("type Todo = {id: Text}");
  const withTask = {
    ...b.replace(add, "slot todos : Map(TodoId, Todo) = {x: 1}", { after: [add] }),
    task: "task-1",
  };
  const edit = b.edit(add, [{ find: "{}", replace: "{ }" }], "slot todos : Map(TodoId, Todo) = { }", {
    after: [add],
    base: add,
  });
  return [
    add,
    { ...add, "depends-on": [`type:TodoId@h:${"a".repeat(64)}`] },
    withTask,
    edit,
    b.rename(add, "todos", "items", { after: [edit] }),
    b.remove(typ, "Todo", { after: [typ] }),
    { ...b.replace(typ, "type Todo = {id: Text, done: Bool}", { after: [typ] }), reverts: add["op-id"] },
    b.link(add, "todos", "type:Todo", typ.def, { after: [add] }),
    b.unlink(add, "todos", "type:TodoId", { after: [add] }),
    { ...b.add("# doc\nslot  x: Int = 0"), head: "# doc\nslot  " },
    { ...b.remove(typ, "Todo", { after: [typ] }), force: true },
    ...control(add),
  ] as unknown as Record<string, unknown>[];
}

/** Control ops (config, lock, unlock), written after `after`. */
function control(after: { "op-id": string; author: string; ts: number }): Record<string, unknown>[] {
  const common = { author: after.author, ts: after.ts + 1, "parent-ops": [after["op-id"]] };
  const id = (n: number) => `op_01KSMP5NYTWSDXF85DMNKAJB${"K3Q7"[n]}${n}`;
  return [
    { op: "config", ...common, "op-id": id(0), key: "conflict-policy", value: "heal" },
    {
      op: "lock",
      ...common,
      "op-id": id(1),
      agent: "agent:a",
      patterns: ["slot.todos*", "*.draft"],
      task: "t",
    },
    { op: "unlock", ...common, "op-id": id(2), agent: "agent:a", patterns: ["slot.todos*"] },
    { op: "unlock", ...common, "op-id": id(3), agent: "agent:a" },
  ];
}

const BAD_VALUES: unknown[] = [
  undefined,
  null,
  "",
  "x",
  "op_01",
  -1,
  1.5,
  Number.NaN,
  2 ** 60,
  [],
  ["x"],
  {},
  true,
  "type",
  "slot:x",
  `def_${"0".repeat(26)}`,
  `op_${"0".repeat(26)}`,
  "Z".repeat(40),
  [{ find: "", replace: "" }],
  [{ find: "a" }],
  [{ find: "a", replace: "b", extra: 1 }],
  { "slot:x": "nope" },
  { nope: `def_${"0".repeat(26)}` },
  [`op_${"0".repeat(26)}`, `op_${"0".repeat(26)}`],
  [`type:x@h:${"a".repeat(63)}`],
  "agent with space",
  "conflict-policy",
  "lenient",
  ["slot.x[0-9]"],
  ["todos*"],
  ["slot.todos*"],
];

describe("the op wire schema", () => {
  it("accepts every op kind as written", () => {
    for (const op of samples()) {
      const r = OpSchema.safeParse(op);
      expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
      expect(isWireOp(op)).toBe(true);
      expect(parseOp(op).ok).toBe(true);
    }
  });

  it("the fast check accepts exactly what the zod schema accepts", () => {
    const ops = samples();
    const keys = [...new Set(ops.flatMap((o) => Object.keys(o))), "extra", "__proto__x"];
    const mutation = fc.record({
      op: fc.integer({ min: 0, max: ops.length - 1 }),
      key: fc.constantFrom(...keys),
      action: fc.constantFrom("delete", "set"),
      value: fc.constantFrom(...BAD_VALUES, ...ops.flatMap((o) => Object.values(o))),
    });
    const seen = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (ms) => {
        let x: Record<string, unknown> = { ...ops[ms[0]!.op]! };
        for (const m of ms) {
          x = { ...x };
          if (m.action === "delete") delete x[m.key];
          else x[m.key] = m.value;
        }
        const accepted = OpSchema.safeParse(x).success;
        expect(isWireOp(x)).toBe(accepted);
        seen[accepted ? "accepted" : "refused"]++;
      }),
      { numRuns: 3000 },
    );
    // Both sides of the comparison were exercised.
    expect(seen.accepted).toBeGreaterThan(100);
    expect(seen.refused).toBeGreaterThan(100);
  });

  it("refuses an unknown op kind, a bad op-id and a malformed field, each with its own code", () => {
    const [add] = samples() as [Record<string, unknown>];
    const kind = parseOp({ ...add, op: "merge" });
    expect(kind.ok || kind.error.code).toBe("unknown-op-kind");
    if (!kind.ok)
      expect(kind.error.message).toContain(
        "add, replace, edit, rename, remove, link, unlink, config, lock, unlock",
      );
    const id = parseOp({ ...add, "op-id": "op_123" });
    expect(id.ok || id.error.code).toBe("invalid-op-id");
    const field = parseOp({ ...add, ts: "yesterday" });
    expect(field.ok || field.error.code).toBe("invalid-op");
    if (!field.ok) expect(field.error.issues[0]?.path).toEqual(["ts"]);
    const extra = parseOp({ ...add, colour: "blue" });
    expect(extra.ok || extra.error.code).toBe("invalid-op");
    expect(parseOp("not an op").ok).toBe(false);
  });

  it("refuses an add whose definition id is not minted from its op-id", () => {
    const [add] = samples() as [Record<string, unknown>];
    const r = parseOp({ ...add, def: `def_${"1".repeat(26)}` });
    expect(r.ok || r.error.code).toBe("invalid-op");
    if (!r.ok) expect(r.error.message).toContain("def");
  });

  it("refuses names that are reserved words or not identifiers", () => {
    const [add] = samples() as [Record<string, unknown>];
    for (const name of ["type", "1abc", "a b", "x".repeat(33)])
      expect(parseOp({ ...add, name }).ok).toBe(false);
  });

  it("enforces its declared limits", () => {
    const [add] = samples() as [Record<string, unknown>];
    expect(parseOp({ ...add, body: "x".repeat(OP_LIMITS.bodyChars) }).ok).toBe(false);
    expect(parseOp({ ...add, body: "x".repeat(OP_LIMITS.bodyChars - 100) }).ok).toBe(true);
  });
});
