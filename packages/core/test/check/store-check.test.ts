import { corpusProgram, corpusPrograms, hasCorpus } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { codeInfo } from "../../src/check/codes.js";
import type { Diagnostic } from "../../src/check/diagnostic.js";
import { normalizePatch } from "../../src/fix/normalize.js";
import type { CheckCache } from "../../src/integrity/check-cache.js";
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

describe.skipIf(!hasCorpus)("checkStore with a cache", () => {
  /** A CheckCache in memory that counts what it is asked and given. */
  function memoryCache(state: string) {
    const kept = new Map<string, readonly Diagnostic[]>();
    const counts = { hits: 0, puts: 0 };
    const cache: CheckCache = {
      state,
      get: (key) => {
        const d = kept.get(key);
        if (d !== undefined) counts.hits++;
        return d;
      },
      put: (key, d) => {
        counts.puts++;
        kept.set(key, d);
      },
    };
    return { cache, counts, kept };
  }

  it("answers every seeded mistake as an uncached check, narrowed or not, checking once per option set", async () => {
    for (const seed of SEEDS.slice(0, 8)) {
      const store = await storeFromPeer(corpusProgram(seed.program)!.source);
      const within = /^[a-z]+\.[^.]+/.exec(seed.location)?.[0];
      if (seed.find !== seed.replace) await seedMistake(store, seed.find, seed.replace, within);
      const options = { ...optionsFor(seed.program), ...seed.options };
      const { cache, counts } = memoryCache("one state");
      for (const narrow of [{}, { refs: true }, { types: true }, {}]) {
        const cached = checkStore(store, { ...options, ...narrow }, cache);
        expect(cached, `${seed.what} ${JSON.stringify(narrow)}`).toEqual(
          checkStore(store, { ...options, ...narrow }),
        );
      }
      // Narrowing filters the one full result kept: one check, three answers from the cache.
      expect(counts).toEqual({ puts: 1, hits: 3 });
    }
  });

  it("keeps results apart by state and by capability manifest", async () => {
    const p = corpusProgram(CUSTOM_CAP)!;
    const store = await storeFromPeer(p.source);
    const a = memoryCache("state a");
    checkStore(store, {}, a.cache);
    checkStore(store, optionsFor(p.id), a.cache);
    expect(a.counts).toEqual({ puts: 2, hits: 0 });
    const [without, withManifest] = [...a.kept.values()];
    expect(brief(without!)).toEqual(["E0302@app.CustomCapFeature.body:2"]);
    expect(withManifest).toEqual([]);
    // Another state's cache holding the same keys' text answers nothing of state a's.
    const b = memoryCache("state b");
    for (const [key, d] of a.kept) b.kept.set(key, d);
    expect(checkStore(store, {}, b.cache).ok).toBe(false);
    expect(b.counts).toEqual({ puts: 1, hits: 0 });
  });
});
