/**
 * The one way every edge opens a workspace for use (the CLI, the MCP server, the sync client, a
 * library user): find `.kumiki/` at or above a folder, open its op log, read `kumiki.caps.json`,
 * and open a store whose write gate is the checker with that manifest. What differs between edges
 * is only the author and, for sync, the network.
 */
import path from "node:path";
import {
  type CapabilityManifest,
  type CapsError,
  createCheckGate,
  FileIdempotencyLedger,
  openStore,
  readCapabilityManifest,
  type Store,
  type StoredOp,
  type WriteValidator,
} from "@kumiki-graph/core";
import { openWorkspace, type Workspace, type WorkspaceOpenOptions } from "./workspace.js";
import type { WorkspaceError } from "./workspace-layout.js";

/** The author an edge writes as when none is given: KUMIKI_AUTHOR, else user:$USER, else user:anonymous. */
export function defaultAuthor(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env.KUMIKI_AUTHOR;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const user = (env.USER ?? env.USERNAME ?? "anonymous").replace(/[^A-Za-z0-9._:@/+-]/g, "_");
  return `user:${user === "" ? "anonymous" : user}`;
}

/** The idempotency ledger of a workspace's store, in `.kumiki/` (machine-local, ignored by git). */
export const IDEMPOTENCY_FILE = "idempotency.jsonl";

/** How {@link openWorkspaceStore} opens. */
export interface WorkspaceStoreOptions extends WorkspaceOpenOptions {
  /** Who writes (`agent:claude-1`); default {@link defaultAuthor} of the process environment. */
  readonly author?: string;
  /**
   * Validators in place of the checker's gate built from the workspace's manifest (tests, or a
   * tool with a gate of its own).
   */
  readonly validators?: readonly WriteValidator[];
}

/** A workspace opened for use: its store and the manifest its gate, `check` and `fix` use. */
export interface WorkspaceStore {
  readonly workspace: Workspace;
  readonly store: Store;
  /** `kumiki.caps.json` as read at open; undefined when the workspace has none. */
  readonly capabilities: CapabilityManifest | undefined;
  /** Closes the store and its log (flushing what is pending). */
  close(): Promise<void>;
}

/** Why {@link openWorkspaceStore} failed: the workspace, its manifest, or the author. */
export type WorkspaceStoreError =
  | WorkspaceError
  | CapsError
  | {
      readonly code: "invalid-author";
      readonly message: string;
      readonly details?: Readonly<Record<string, unknown>>;
    };

/**
 * Opens the workspace at or above `dir` with its store (see the module comment). Nothing is left
 * open when it fails.
 */
export async function openWorkspaceStore(
  dir: string,
  options: WorkspaceStoreOptions = {},
): Promise<{ ok: true; value: WorkspaceStore } | { ok: false; error: WorkspaceStoreError }> {
  const { author = defaultAuthor(), validators, ...open } = options;
  const ws = await openWorkspace<StoredOp>(dir, open);
  if (!ws.ok) return ws;
  const fail = async (error: WorkspaceStoreError) => {
    await ws.value.log.close().catch(() => undefined);
    return { ok: false as const, error };
  };
  const caps = readCapabilityManifest(ws.value.paths.root);
  if (!caps.ok) return fail(caps.error);
  const capabilities = caps.value;
  const gate = validators ?? [
    capabilities === undefined ? createCheckGate() : createCheckGate({ capabilities }),
  ];
  const store = openStore({
    log: ws.value.log,
    author,
    validators: gate,
    idempotency: new FileIdempotencyLedger(path.join(ws.value.paths.dir, IDEMPOTENCY_FILE)),
  });
  if (!store.ok) return fail({ code: "invalid-author", message: store.error.message });
  const s = store.value;
  return {
    ok: true,
    value: { workspace: ws.value, store: s, capabilities, close: () => s.close() },
  };
}
