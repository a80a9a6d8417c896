import { describe, expect, it } from "vitest";
import {
  createOpIdGenerator,
  defIdOf,
  idTime,
  isAuthorId,
  isDefId,
  isOpId,
  type OpId,
  OpIdSchema,
} from "../../src/ops/ids.js";
import { seededRandom } from "./builder.js";

describe("op-ids", () => {
  it("are op_ and a 26-character Crockford ULID encoding the time", () => {
    const gen = createOpIdGenerator({ now: () => 1_779_884_546_123 });
    const id = gen.next();
    expect(id).toMatch(/^op_[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(isOpId(id)).toBe(true);
    expect(idTime(id)).toBe(1_779_884_546_123);
  });

  it("increase strictly within one millisecond and when the clock steps back", () => {
    let t = 1_000_000;
    const gen = createOpIdGenerator({ now: () => t, random: seededRandom(3) });
    const ids: OpId[] = [];
    for (let i = 0; i < 200; i++) {
      if (i === 100) t -= 5_000;
      ids.push(gen.next());
    }
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it("sort after the floor they are given, even one from a clock far ahead", () => {
    const ahead = createOpIdGenerator({ now: () => 9_000_000_000_000 }).next();
    const gen = createOpIdGenerator({ now: () => 1_000 });
    const id = gen.next(ahead);
    expect(id > ahead).toBe(true);
    expect(idTime(id)).toBe(idTime(ahead) + 1);
  });

  it("from one floor, two replicas still draw different ids (no counting up from a shared id)", () => {
    const floor = createOpIdGenerator({ now: () => 9_000_000_000_000 }).next();
    const a = createOpIdGenerator({ now: () => 1_000, random: seededRandom(1) }).next(floor);
    const b = createOpIdGenerator({ now: () => 1_000, random: seededRandom(2) }).next(floor);
    expect(a).not.toBe(b);
    expect(a > floor && b > floor).toBe(true);
  });

  it("carry into the next millisecond when a millisecond's random part is used up", () => {
    const gen = createOpIdGenerator({ now: () => 5, random: (b) => b.fill(31) });
    const first = gen.next();
    expect(first.slice(13)).toBe("ZZZZZZZZZZZZZZZZ");
    const second = gen.next();
    expect(idTime(second)).toBe(6);
    expect(second > first).toBe(true);
  });

  it("are refused when malformed", () => {
    for (const bad of [
      "op_",
      "op_01JC",
      "OP_01JC0000000000000000000000",
      "op_01JC000000000000000000000I",
      "op_81JC0000000000000000000000",
      42,
      null,
    ]) {
      expect(isOpId(bad)).toBe(false);
      expect(OpIdSchema.safeParse(bad).success).toBe(false);
    }
  });
});

describe("definition ids and author ids", () => {
  it("an add's definition id is def_ and the ULID of its op-id", () => {
    const id = createOpIdGenerator().next();
    const def = defIdOf(id);
    expect(def).toBe(`def_${id.slice(3)}`);
    expect(isDefId(def)).toBe(true);
    expect(isDefId(id)).toBe(false);
  });

  it("author ids are printable and carry no whitespace", () => {
    expect(isAuthorId("agent:claude-1")).toBe(true);
    expect(isAuthorId("user:alice@example.com")).toBe(true);
    for (const bad of ["", "agent claude", "a\nb", "x".repeat(129), ":leading"])
      expect(isAuthorId(bad)).toBe(false);
  });
});
