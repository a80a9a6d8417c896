/**
 * Types flow from a slot's declaration into the positions that declare a type: a slot passed as a
 * fn's argument is judged against the parameter, an assigned name against the slot written, and a
 * slot indexed (`tasks[id]`, read or written) must be a Map or a List; a record's `.copy(f = v)`
 * names the type's fields with values of their types; a value inside a record given to an effect
 * or a tile is judged like a literal one; and a stdlib member with a primitive type (`.length`,
 * `.size`, `.is-empty`, `.show`) has it, so `if b.length then` is an E0201. Was: only literals were
 * judged in most of these places, so `slot tasks : Int` used by 33 definitions as a Map checked
 * clean. Each rule is shown on a corpus program mutated here, and the unmutated programs stay
 * clean (the conformance suite holds every rule to the compiler's verdicts on the whole corpus).
 */

import { corpusProgram, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { check, errorsOf } from "./helpers.js";

const app05 = hasCorpus ? corpusProgram("apps/05-project-management/app.kumiki")!.source : "";

/** `source` with `from` replaced by `to`, which must occur exactly once. */
function mutate(source: string, from: string, to: string): string {
  expect(source.split(from).length, from).toBe(2);
  return source.replace(from, to);
}

describe.skipIf(!hasCorpus)("a slot's type flows where a type is declared (apps/05 mutated)", () => {
  it("the program as written checks clean", () => {
    expect(errorsOf(check(app05))).toEqual([]);
  });

  it("an Int slot used as a Map: every fn argument and every index of it is an E0201", () => {
    const src = mutate(app05, "slot tasks        : Map(TaskId, Task)        = {}", "slot tasks : Int = 0");
    const errors = errorsOf(check(src));
    expect(new Set(errors.map((d) => d.code))).toEqual(new Set(["E0201"]));
    const args = errors.filter((d) => d.message === "Expected Map(TaskId, Task) but got Int");
    const indexes = errors.filter((d) => d.message === "Expected a Map or a List to index but got Int");
    expect(args.length).toBeGreaterThan(10);
    expect(indexes.length).toBeGreaterThan(20);
    expect(args.length + indexes.length).toBe(errors.length);
    // Most of the 33 definitions that read the slot are reported.
    expect(new Set(errors.map((d) => d.location.replace(/\.body:\d+$/, ""))).size).toBeGreaterThanOrEqual(25);
    // An index that is written too: `tasks[tid] := {…}` in createTask.
    expect(indexes.some((d) => d.location.startsWith("reducer.createTask."))).toBe(true);
  });

  it("a Map slot passed where a fn declares Int: E0201 at each call", () => {
    const fn = "filteredTasks";
    const calls = app05.split(`${fn}(tasks,`).length - 1;
    expect(calls).toBeGreaterThan(0);
    const asInt = mutate(app05, `fn ${fn}(ts: Map(TaskId, Task)`, `fn ${fn}(ts: Int`);
    const intErrors = errorsOf(check(asInt)).filter(
      (d) => d.message === "Expected Int but got Map(TaskId, Task)",
    );
    expect(intErrors.length).toBe(calls);
  });

  it("the same type spelled again is no clash", () => {
    const decl = /fn (\w+)\(ts: Map\(TaskId, Task\)/.exec(app05)!;
    // The parameter declared as the very type the slot has, spelled again: still clean.
    const same = mutate(app05, `fn ${decl[1]}(ts: Map(TaskId, Task)`, `fn ${decl[1]}(ts: Map(TaskId,Task)`);
    expect(errorsOf(check(same))).toEqual([]);
  });
});

/** The error diagnostics of corpus program `id` with `from` (occurring once) made `to`. */
function errorsAfter(id: string, from: string, to: string): string[] {
  const src = corpusProgram(id)!.source;
  return errorsOf(check(mutate(src, from, to))).map((d) => `${d.code} ${d.location} ${d.message}`);
}

describe.skipIf(!hasCorpus)("types flow through copies, effect and tile values, and members", () => {
  const copy = "features/04-record-and-copy.kumiki";
  const at = "profile.copy(age=profile.age + 1)";

  it("a .copy argument of the wrong type, literal or not, and a field the type lacks", () => {
    expect(errorsOf(check(corpusProgram(copy)!.source))).toEqual([]);
    expect(errorsAfter(copy, at, 'profile.copy(age="x")')).toEqual([
      "E0201 reducer.birthday.body:2 Expected Int but got Text: write an Int",
    ]);
    expect(errorsAfter(copy, at, 'profile.copy(age=profile.age + "x")')).toEqual([
      "E0201 reducer.birthday.body:2 Expected Int but got Text",
    ]);
    expect(errorsAfter(copy, at, "profile.copy(name=profile.age)")).toEqual([
      "E0201 reducer.birthday.body:2 Expected Text but got Int",
    ]);
    expect(errorsAfter(copy, at, "profile.copy(agee=profile.age + 1)")).toEqual([
      'E0215 reducer.birthday.body:2 Record type Profile has no field "agee": did you mean "age"?',
    ]);
  });

  it("a value computed inside a record given to an effect: E0202", () => {
    const emit = "apps/03-blog/app.kumiki";
    const errors = errorsAfter(
      emit,
      "emit login({email: loginEmail, password: loginPw})",
      "emit login({email: loginEmail, password: loginPw.length})",
    );
    expect(errors.map((e) => e.split(" ")[0])).toEqual(["E0202"]);
    expect(errors[0]).toContain("Expected Text but got Int");
  });

  it("a stdlib member's primitive type reaches a condition", () => {
    const blog = "apps/03-blog/app.kumiki";
    const errors = errorsAfter(blog, "= if b.length > 200 then", "= if b.length then");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^E0201 fn\.\S+\.body:2 Condition of "if" must be Bool but got Int/);
  });
});
