/**
 * How the CLI reaches core and the workspace storage. The storage (`@kumiki-graph/storage-automerge`)
 * brings Automerge and automerge-repo, and core its checker (a few hundred milliseconds of module
 * loading together), so each is imported on first use, and a read served from the read snapshot
 * (read-snapshot.ts) loads only core's bundled read entry.
 */
import type * as Core from "@kumiki-graph/core";
import type * as Storage from "@kumiki-graph/storage-automerge";

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

/** `@kumiki-graph/storage-automerge`: the workspace on disk (init, open, repair). */
export type StorageModule = typeof Storage;

let core: Promise<CoreModule> | undefined;
let storage: Promise<StorageModule> | undefined;
let readCore: Promise<ReadCore> | undefined;

/** All of core, loaded once. */
export function loadCore(): Promise<CoreModule> {
  core ??= import("@kumiki-graph/core");
  return core;
}

/** The workspace storage, loaded once. */
export function loadStorage(): Promise<StorageModule> {
  storage ??= import("@kumiki-graph/storage-automerge");
  return storage;
}

/**
 * {@link ReadCore}: core's `./read` entry, one bundled file that loads no Automerge (loading the
 * same code module by module cost about 150 ms of every read verb).
 */
export function loadReadCore(): Promise<ReadCore> {
  readCore ??= import("@kumiki-graph/core/read");
  return readCore;
}
