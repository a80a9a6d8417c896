/**
 * How the CLI reaches core. The whole of `@kumiki-graph/core` brings Automerge and automerge-repo
 * (a few hundred milliseconds of module loading), so it is imported on first use, and a read served
 * from the read snapshot (read-snapshot.ts) loads only the store modules it needs.
 */
import type * as Core from "@kumiki-graph/core";

/** `@kumiki-graph/core`, as its index exports it. */
export type CoreModule = typeof Core;

/**
 * What a read served from a snapshot needs, and what argument shape checks need: a store over ops
 * held in memory, and the syntax predicates. None of it loads Automerge.
 */
export type ReadCore = Pick<
  CoreModule,
  | "openStore"
  | "MemoryOpLog"
  | "isAuthorId"
  | "isDefId"
  | "isOpId"
  | "isLayer"
  | "LAYERS"
  | "isDefinitionName"
  | "parseSelector"
>;

/** The modules of core (under its dist/) that {@link ReadCore} comes from. */
const READ_MODULES = [
  "store/store.js",
  "store/memory-op-log.js",
  "store/selector.js",
  "ops/ids.js",
  "ops/op.js",
  "lang/layers.js",
] as const;

const READ_NAMES = [
  "openStore",
  "MemoryOpLog",
  "isAuthorId",
  "isDefId",
  "isOpId",
  "isLayer",
  "LAYERS",
  "isDefinitionName",
  "parseSelector",
] as const satisfies readonly (keyof ReadCore)[];

let core: Promise<CoreModule> | undefined;
let readCore: Promise<ReadCore> | undefined;

/** All of core, loaded once. */
export function loadCore(): Promise<CoreModule> {
  core ??= import("@kumiki-graph/core");
  return core;
}

/**
 * The modules of {@link ReadCore} alone, without the index (which would load Automerge). They are
 * reached by path, beside this package (`packages/cli/dist` → `packages/core/dist`, and in an
 * install `node_modules/@kumiki-graph/cli/dist` → `node_modules/@kumiki-graph/core/dist`); when
 * that layout is not there, the index serves, slower but the same.
 */
export function loadReadCore(): Promise<ReadCore> {
  readCore ??= (async (): Promise<ReadCore> => {
    const base = new URL("../../core/dist/", import.meta.url);
    try {
      const mods = (await Promise.all(READ_MODULES.map((m) => import(new URL(m, base).href)))) as Record<
        string,
        unknown
      >[];
      const merged: Record<string, unknown> = Object.assign({}, ...mods);
      if (READ_NAMES.every((n) => merged[n] !== undefined)) return merged as unknown as ReadCore;
    } catch {
      // Not laid out as expected: fall through to the index.
    }
    return loadCore();
  })();
  return readCore;
}
