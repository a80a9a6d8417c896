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
  | "parseQualifiedName"
  | "readCapabilityManifest"
>;

let core: Promise<CoreModule> | undefined;
let readCore: Promise<ReadCore> | undefined;

/** All of core, loaded once. */
export function loadCore(): Promise<CoreModule> {
  core ??= import("@kumiki-graph/core");
  return core;
}

/**
 * {@link ReadCore}: core's `./read` entry, one bundled file that loads no Automerge (loading the
 * same code module by module cost about 150 ms of every read verb).
 */
export function loadReadCore(): Promise<ReadCore> {
  readCore ??= import("@kumiki-graph/core/read");
  return readCore;
}
