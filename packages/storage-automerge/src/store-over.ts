/**
 * A workspace's store over a log already open: the part of opening a workspace that is the same
 * whether its log loaded the Automerge document (open-store.ts) or writes pending bundles beside it
 * (quick-write.ts). Loads no Automerge.
 */
import path from "node:path";
import {
  type CapabilityManifest,
  type CapsError,
  createCheckGate,
  FileIdempotencyLedger,
  type KeptChecks,
  type OpLog,
  openStore,
  type Result,
  readCapabilityManifest,
  type Store,
  type WriteValidator,
} from "@kumiki-graph/core";
import { KeptChecksFile } from "./kept-checks-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

/** The idempotency ledger of a workspace's store, in `.kumiki/` (machine-local, ignored by git). */
export const IDEMPOTENCY_FILE = "idempotency.jsonl";

/**
 * What `openQuickWrite` and `openWorkspaceStore` build a workspace's store with (the members of
 * `WorkspaceStoreOptions` of the same names).
 */
export interface StoreOverOptions {
  readonly author: string;
  readonly validators: readonly WriteValidator[];
  readonly checker: boolean;
  readonly checkStamp?: string | undefined;
  readonly checkFile?: string | undefined;
}

/**
 * The store of a workspace's open `log`: its `kumiki.caps.json`, the checker's gate with that
 * manifest (and the checks kept under `checkStamp`), the caller's validators after it, and the
 * idempotency ledger in `.kumiki/` — one recipe for a log opened in full and for one that writes
 * pending bundles (quick-write.ts). Nothing is closed when it fails.
 */
export function storeOver(
  log: OpLog,
  paths: WorkspacePaths,
  options: StoreOverOptions,
): Result<
  { store: Store; capabilities: CapabilityManifest | undefined; keptChecks?: KeptChecks },
  CapsError | { readonly code: "invalid-author"; readonly message: string }
> {
  const caps = readCapabilityManifest(paths.root);
  if (!caps.ok) return caps;
  const capabilities = caps.value;
  const { checkStamp, checkFile } = options;
  const kept = checkStamp === undefined ? undefined : new KeptChecksFile(paths, checkStamp, checkFile);
  const gateOptions = {
    ...(capabilities === undefined ? {} : { capabilities }),
    ...(kept === undefined ? {} : { kept }),
  };
  const gate = [...(options.checker ? [createCheckGate(gateOptions)] : []), ...options.validators];
  const store = openStore({
    log,
    author: options.author,
    validators: gate,
    idempotency: new FileIdempotencyLedger(path.join(paths.dir, IDEMPOTENCY_FILE)),
  });
  if (!store.ok) return { ok: false, error: { code: "invalid-author", message: store.error.message } };
  return {
    ok: true,
    value: { store: store.value, capabilities, ...(kept === undefined ? {} : { keptChecks: kept }) },
  };
}
