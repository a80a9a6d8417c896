/**
 * How the CLI reaches core and the workspace storage. The storage (`@kumiki-graph/storage-automerge`)
 * brings Automerge and automerge-repo, and core its checker (a few hundred milliseconds of module
 * loading together), so each is imported on first use, and a read served from the workspace's
 * verified op-log.jsonl loads only the two read entries (core's bundled one and the storage's).
 */
import type * as Core from "@kumiki-graph/core";
import type * as Storage from "@kumiki-graph/storage-automerge";
import type * as StorageQuick from "@kumiki-graph/storage-automerge/quick";
import type * as StorageRead from "@kumiki-graph/storage-automerge/read";

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
  | "SnapshotOpLog"
  | "isAuthorId"
  | "isDefId"
  | "isOpId"
  | "isLayer"
  | "LAYERS"
  | "isDefinitionName"
  | "parseSelector"
  | "parseQualifiedName"
  | "readCapabilityManifest"
  | "definitionRows"
  | "changedRows"
  | "viewFromTable"
  | "listFromTable"
  | "refsFromTable"
  | "statusFromTable"
  | "statusOfState"
>;

/** `@kumiki-graph/storage-automerge`: the workspace on disk (init, open, repair). */
export type StorageModule = typeof Storage;

let core: Promise<CoreModule> | undefined;
let storage: Promise<StorageModule> | undefined;
let storageRead: Promise<typeof StorageRead> | undefined;
let storageQuick: Promise<typeof StorageQuick> | undefined;
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

/** The storage's read path (op-log.jsonl verified against the chunks; the workspace's layout): no Automerge. */
export function loadStorageRead(): Promise<typeof StorageRead> {
  storageRead ??= import("@kumiki-graph/storage-automerge/read");
  return storageRead;
}

/**
 * {@link ReadCore}: core's `./read` entry, one bundled file that loads no Automerge (loading the
 * same code module by module cost about 150 ms of every read verb).
 */
export function loadReadCore(): Promise<ReadCore> {
  readCore ??= import("@kumiki-graph/core/read");
  return readCore;
}

/** The storage's write without Automerge (a pending bundle beside the document), loaded once. */
export function loadStorageQuick(): Promise<typeof StorageQuick> {
  storageQuick ??= import("@kumiki-graph/storage-automerge/quick");
  return storageQuick;
}
