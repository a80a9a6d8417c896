import { corpusProgram, corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { codeInfo } from "../../src/check/codes.js";
import { normalizePatch } from "../../src/fix/normalize.js";
import { createCheckGate } from "../../src/integrity/gate.js";
import { checkStore } from "../../src/integrity/store-check.js";
import { brief, errorsOf } from "./helpers.js";
import { CUSTOM_CAP, manifest, optionsFor, SEEDS } from "./seeds.js";
import { addItemsOf, seedMistake, storeFromPeer, storeOf } from "./store-support.js";

function validatorsFor(id: string) {
  return id === CUSTOM_CAP ? { validators: [createCheckGate({ capabilities: manifest() })] } : {};
}

describe.skipIf(!hasCorpus)("checkStore over the conformance corpus", () => {
  for (const p of corpusPrograms()) {
    it(`${p.id} checks with no error`, async () => {
      const store = await storeFromPeer(p.source);
      const report = checkStore(store, optionsFor(p.id));
      expect(brief(errorsOf(report.diagnostics))).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.errors).toBe(0);
    });
  }

  it("every program imports with store.apply, through the checker's write gate", async () => {
    const refusedBy = new Map<string, string>();
    for (const p of corpusPrograms()) {
      const store = await storeOf("", validatorsFor(p.id));
      const r = await store.apply(addItemsOf(p.source));
      if (!r.ok) refusedBy.set(p.id, r.error.code);
      else expect(checkStore(store, optionsFor(p.id)).ok, p.id).toBe(true);
    }
    expect([...refusedBy]).toEqual([]);
  });

  it("features/27 without its manifest: E0302 at the app, with the current name", async () => {
    const p = corpusProgram(CUSTOM_CAP)!;
    const store = await storeFromPeer(p.source);
    const report = checkStore(store);
    expect(brief(report.diagnostics)).toEqual(["E0302@app.CustomCapFeature.body:2"]);
    expect(report.ok).toBe(false);
    expect(report.diagnostics[0]?.definition).toMatch(/^def_/);
  });
});

describe.skipIf(!hasCorpus)("seeded mistakes in a store", () => {
  for (const seed of SEEDS) {
    it(`${seed.what} (${seed.program}) → ${seed.code} at ${seed.location}`, async () => {
      const store = await storeFromPeer(corpusProgram(seed.program)!.source);
      const within = /^[a-z]+\.[^.]+/.exec(seed.location)?.[0];
      if (seed.find !== seed.replace) await seedMistake(store, seed.find, seed.replace, within);
      const options = { ...optionsFor(seed.program), ...seed.options };
      const report = checkStore(store, options);
      const hit = report.diagnostics.find((d) => d.code === seed.code && d.location === seed.location);
      expect(
        hit,
        `${seed.code}@${seed.location} not in ${JSON.stringify(brief(report.diagnostics))}`,
      ).toBeDefined();
      if (seed.kind !== undefined) expect(hit?.kind).toBe(seed.kind);
      if (seed.suggest !== undefined)
        expect(hit?.suggestion).toMatchObject({ kind: "did-you-mean", name: seed.suggest });
      if (seed.code !== "E0301")
        expect(
          errorsOf(report.diagnostics)
            .filter((d) => d.location !== seed.location)
            .map((d) => d.code),
        ).toEqual([]);
      if (codeInfo(seed.code)?.autoPatch !== true) {
        expect(hit?.["auto-patch"]).toBeUndefined();
        return;
      }
      const patch = normalizePatch(hit!["auto-patch"]);
      expect(patch.ok, JSON.stringify(patch)).toBe(true);
      const applied = await store.apply(patch.ok ? patch.value : []);
      expect(applied.ok, JSON.stringify(applied)).toBe(true);
      const after = checkStore(store, options);
      expect(after.diagnostics.filter((d) => d.code === seed.code && d.location === seed.location)).toEqual(
        [],
      );
      if (seed.code !== "E0301") expect(brief(errorsOf(after.diagnostics))).toEqual([]);
    });
  }
});
