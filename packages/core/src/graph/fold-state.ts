/**
 * What the fold keeps besides the causal order: one copy-on-write map per concern, so that a fork
 * of a graph (the write gate's trial of a draft) is O(1) and is committed or dropped whole. The
 * maps are listed once, here: made, forked and committed together.
 */
import type { ContentHash } from "../lang/hash.js";
import { CowMap } from "../ops/cow-map.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { DefinitionState } from "../ops/merge.js";
import type { ControlOp, LogOp } from "../ops/op.js";
import type { Kept, Orphan, Quarantined, Rollback } from "./records.js";

/** The fold's maps (see the module comment). */
export interface FoldState {
  /** Held ops that wait for a parent op that has not arrived. */
  pending: CowMap<OpId, LogOp>;
  quarantine: CowMap<string, Quarantined>;
  defs: CowMap<DefId, DefinitionState>;
  /** `layer:name` → live definitions whose name it is. */
  names: CowMap<string, readonly DefId[]>;
  /** `layer:name` → every definition that ever claimed the name (history across renames). */
  nameHistory: CowMap<string, readonly DefId[]>;
  /** target → definitions whose text binds a reference to it. */
  referrers: CowMap<DefId, readonly DefId[]>;
  /** The {@link DefinitionState.history} of definitions whose add was rolled back. */
  graveyard: CowMap<DefId, OpId[]>;
  rolledBack: CowMap<OpId, Rollback>;
  orphans: CowMap<OpId, Orphan>;
  hashes: CowMap<DefId, ContentHash>;
  /**
   * Control state: `config` → the maximal config ops (the policy register), `locks` → every lock
   * and unlock op placed, in causal order.
   */
  control: CowMap<"config" | "locks", readonly ControlOp[]>;
  /** `<source> <key>` → a dangling edge the fold decided to keep (warn, or a forced remove). */
  kept: CowMap<string, Kept>;
}

const KEYS = [
  "pending",
  "quarantine",
  "defs",
  "names",
  "nameHistory",
  "referrers",
  "graveyard",
  "rolledBack",
  "orphans",
  "hashes",
  "control",
  "kept",
] as const satisfies readonly (keyof FoldState)[];

/** Empty maps (keeping `quarantine` when given: a refold keeps what it quarantined). */
export function newFoldState(quarantine?: CowMap<string, Quarantined>): FoldState {
  const s = Object.fromEntries(KEYS.map((k) => [k, new CowMap()])) as unknown as FoldState;
  if (quarantine !== undefined) s.quarantine = quarantine;
  return s;
}

/** Maps that read through to `base`'s and keep their own writes until committed. */
export function forkFoldState(base: FoldState): FoldState {
  return Object.fromEntries(
    KEYS.map((k) => [k, (base[k] as CowMap<unknown, unknown>).fork()]),
  ) as unknown as FoldState;
}

/** Makes a fork's writes its base's. */
export function commitFoldState(fork: FoldState): void {
  for (const k of KEYS) (fork[k] as CowMap<unknown, unknown>).commit();
}

/** Drops a fork's maps: none of its writes reach its base (see `CowMap.drop`). */
export function dropFoldState(fork: FoldState): void {
  for (const k of KEYS) (fork[k] as CowMap<unknown, unknown>).drop();
}
