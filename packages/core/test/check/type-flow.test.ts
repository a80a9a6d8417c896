/**
 * Types flow from a slot's declaration into the positions that declare a type: a slot passed as a
 * fn's argument is judged against the parameter, an assigned name against the slot written, and a
 * slot indexed (`tasks[id]`, read or written) must be a Map or a List. Was: only literals were
 * judged there, so `slot tasks : Int` used by 33 definitions as a Map checked clean. Each rule is
 * shown on apps/05 mutated here, and the unmutated program stays clean (the conformance suite
 * holds every rule to the compiler's verdicts on the whole corpus).
 */
import { describe, expect, it } from "vitest";
import { corpusMissingMessage, corpusProgram, hasCorpus } from "../support/corpus.js";
import { check, errorsOf } from "./helpers.js";

const app05 = hasCorpus ? corpusProgram("apps/05-project-management/app.kumiki")!.source : "";

/** `source` with `from` replaced by `to`, which must occur exactly once. */
function mutate(source: string, from: string, to: string): string {
  expect(source.split(from).length, from).toBe(2);
  return source.replace(from, to);
}

describe.skipIf(!hasCorpus)("a slot's type flows where a type is declared (apps/05 mutated)", () => {
  if (!hasCorpus) it.skip(corpusMissingMessage, () => {});

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
