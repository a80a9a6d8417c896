import { corpusProgram, corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { codeInfo } from "../../src/check/codes.js";
import { brief, check, errorsOf } from "./helpers.js";
import { applyAutoPatch } from "./patch-apply.js";
import { CUSTOM_CAP, optionsFor, SEEDS, TODO } from "./seeds.js";

describe.skipIf(!hasCorpus)("the conformance corpus", () => {
  const programs = corpusPrograms();

  it("holds the programs this suite expects", () => {
    expect(programs.length).toBeGreaterThan(60);
    expect(programs.some((p) => p.id === CUSTOM_CAP)).toBe(true);
  });

  for (const p of programs) {
    it(`${p.id} checks with no error`, () => {
      expect(brief(errorsOf(check(p.source, optionsFor(p.id))))).toEqual([]);
    });
  }

  it("features/27 needs its manifest: without it, telemetry.track is E0302", () => {
    const p = corpusProgram(CUSTOM_CAP)!;
    expect(brief(check(p.source))).toEqual(["E0302@app.CustomCapFeature.body:2"]);
  });

  it("every narrowing of every program is a subset of the full report", () => {
    for (const p of programs) {
      const full = new Set(check(p.source, optionsFor(p.id)).map((d) => JSON.stringify(d)));
      for (const n of [{ types: true }, { refs: true }, { effects: true }, { types: true, refs: true }]) {
        for (const d of check(p.source, { ...optionsFor(p.id), ...n }))
          expect(full.has(JSON.stringify(d))).toBe(true);
      }
    }
  });
});

describe.skipIf(!hasCorpus)("seeded mistakes", () => {
  for (const seed of SEEDS) {
    it(`${seed.what} (${seed.program}) → ${seed.code} at ${seed.location}`, () => {
      const original = corpusProgram(seed.program)!.source;
      expect(original.includes(seed.find), `seed text not found in ${seed.program}`).toBe(true);
      const broken = original.replace(seed.find, seed.replace);
      const options = { ...optionsFor(seed.program), ...seed.options };
      const ds = check(broken, options);
      const hit = ds.find((d) => d.code === seed.code && d.location === seed.location);
      expect(hit, `${seed.code}@${seed.location} not in ${JSON.stringify(brief(ds))}`).toBeDefined();
      if (seed.kind !== undefined) expect(hit?.kind).toBe(seed.kind);
      if (seed.suggest !== undefined)
        expect(hit?.suggestion).toMatchObject({ kind: "did-you-mean", name: seed.suggest });
      // Nothing is reported anywhere else (a missing capability: at every emit of the effect).
      if (seed.code !== "E0301")
        expect(
          errorsOf(ds)
            .filter((d) => d.location !== seed.location)
            .map((d) => d.code),
        ).toEqual([]);
      const patchable = codeInfo(seed.code)?.autoPatch === true;
      if (!patchable) {
        expect(hit?.["auto-patch"]).toBeUndefined();
        return;
      }
      const patch = hit?.["auto-patch"];
      expect(patch, "errors.md says this code has an auto-patch").toBeDefined();
      const repaired = applyAutoPatch(broken, patch!);
      const after = check(repaired, options);
      expect(after.filter((d) => d.code === seed.code && d.location === seed.location)).toEqual([]);
      if (seed.code !== "E0301") expect(brief(errorsOf(after))).toEqual([]);
    });
  }

  it("E0301 is repaired for every emit by one patch", () => {
    const seed = SEEDS.find((s) => s.what === "missing capability")!;
    const broken = corpusProgram(seed.program)!.source.replace(seed.find, seed.replace);
    const first = check(broken).find((d) => d.code === "E0301")!;
    expect(brief(errorsOf(check(applyAutoPatch(broken, first["auto-patch"]!))))).toEqual([]);
  });
});

describe.skipIf(!hasCorpus)("the repair loop of ai-edit.md §9.6.2", () => {
  it("takes a program with five different mistakes to ok, one auto-patch at a time", () => {
    const mistakes: [string, string][] = [
      ["todos := todos.filter(not $2.done)", "todos := todoss.filter(not $2.done)"],
      ["caps   = [storage.read, storage.write]", "caps   = [storage.read]"],
      [', "/404" -> NotFound}', "}"],
      ["onClick=clearDone", "onClick=clearDon"],
      ["| Active  -> not t.done", "| Activ  -> not t.done"],
      ["fn itemsLeft(ts: Map(TodoId, Todo))", "fn itemsLeft(ts: Map(TodoId, Tood))"],
    ];
    let source = corpusProgram(TODO)!.source;
    for (const [a, b] of mistakes) source = source.replace(a, b);
    let errors = errorsOf(check(source));
    expect(new Set(errors.map((d) => d.code)).size).toBeGreaterThanOrEqual(5);
    for (let round = 0; errors.length > 0; round++) {
      expect(round, "the loop does not converge").toBeLessThan(20);
      const fixable = errors.find((d) => d["auto-patch"] !== undefined);
      expect(fixable, `no auto-patch among ${JSON.stringify(brief(errors))}`).toBeDefined();
      const next = applyAutoPatch(source, fixable!["auto-patch"]!);
      const after = errorsOf(check(next));
      // The regression gate: no new error, at least one fewer.
      expect(after.length).toBeLessThan(errors.length);
      const before = new Set(errors.map((d) => `${d.code}@${d.location}`));
      for (const d of after)
        expect(before.has(`${d.code}@${d.location}`), `new ${d.code}@${d.location}`).toBe(true);
      source = next;
      errors = after;
    }
    expect(check(source)).toEqual([]);
  });
});
