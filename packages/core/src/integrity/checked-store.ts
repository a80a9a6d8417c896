/**
 * The store with the checker as its write gate: core's public `openStore` / `createStore`. The
 * store layer (store/store.ts) knows no checker — its factories run exactly the validators given —
 * so the checker is added here, one layer up, where the write gate meets the store.
 */

import type { StoreResult } from "../store/result.js";
import { createStoreWith, openStoreWith, type Store } from "../store/store.js";
import type { StoreOptions } from "../store/store-types.js";
import type { WriteValidator } from "../store/validate.js";
import { checkGate } from "./gate.js";

/**
 * The validators a store runs after the built-in gate when it is opened without `validators`: the
 * full checker (`checkGate`: no write may add an error diagnostic). A store opened with
 * `validators` runs those instead (e.g. `createCheckGate({capabilities})` with a caps manifest).
 */
export const DEFAULT_VALIDATORS: readonly WriteValidator[] = [checkGate];

function withDefaults(options: StoreOptions): StoreOptions {
  return options.validators === undefined ? { ...options, validators: DEFAULT_VALIDATORS } : options;
}

/**
 * Opens a store over a log: folds every op it holds (ops that fail the wire schema are quarantined,
 * see `status`). Every write passes the built-in gate, then `options.validators` (default
 * {@link DEFAULT_VALIDATORS}, the checker).
 */
export function openStore(options: StoreOptions): StoreResult<Store> {
  return openStoreWith(withDefaults(options));
}

/**
 * A new store over an empty log, with the validators of {@link openStore}. Refused
 * (`store-not-empty`) when the log already holds ops: use {@link openStore} for an existing graph.
 */
export function createStore(options: StoreOptions): StoreResult<Store> {
  return createStoreWith(withDefaults(options));
}
