/**
 * The one way every edge opens a workspace for use (the CLI, the MCP server, the sync client, a
 * library user): the workspace at a folder (above it only when asked; made there when asked), its
 * op log, its `kumiki.caps.json`, and a store whose write gate is the checker with that manifest.
 * What differs between edges is only the author and, for sync, the network.
 */
import type {
  CapabilityManifest,
  CapsError,
  KeptChecks,
  Store,
  StoredOp,
  WriteValidator,
} from "@kumiki-graph/core";
import { IDEMPOTENCY_FILE, storeOver } from "./store-over.js";
import { initWorkspace, openWorkspace, type Workspace, type WorkspaceOpenOptions } from "./workspace.js";
import type { WorkspaceError, WorkspaceResult } from "./workspace-layout.js";

export { IDEMPOTENCY_FILE };

/** The author an edge writes as when none is given: KUMIKI_AUTHOR, else user:$USER, else user:anonymous. */
export function defaultAuthor(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env.KUMIKI_AUTHOR;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const user = (env.USER ?? env.USERNAME ?? "anonymous").replace(/[^A-Za-z0-9._:@/+-]/g, "_");
  return `user:${user === "" ? "anonymous" : user}`;
}

/** How {@link openWorkspaceStore} opens. */
export interface WorkspaceStoreOptions extends WorkspaceOpenOptions {
  /** Who writes (`agent:claude-1`); default {@link defaultAuthor} of the process environment. */
  readonly author?: string;
  /**
   * Validators run after the checker's gate (built from the workspace's manifest): a tool's rules
   * of its own add to "no write adds an error", never replace it. (Until 0.x, they replaced it
   * silently, and a slot with a type error was then accepted.)
   */
  readonly validators?: readonly WriteValidator[];
  /**
   * `false` drops the checker's gate: writes then pass only the built-in gate and `validators`
   * (a program with errors written as it is, a test of another gate). Default true.
   */
  readonly checker?: boolean;
  /**
   * Make the workspace when there is none (with `walkUp`, none at or above the folder): a new,
   * empty graph at the folder, created if need be. Default false: `no-workspace` is returned.
   * Never done read-only; a folder with a `.kumiki/` that does not open is never made over.
   */
  readonly create?: boolean;
  /**
   * Keep the checker's state across processes in `.kumiki/cache/` under this stamp (a name of the
   * code that checks: a state of another stamp is never read). The gate of the first write then
   * goes on from the check a process kept of the same state (`keptChecks`: core's `keepCheck`
   * keeps one), re-checking only what the write touches. Unset: nothing is read or kept.
   */
  readonly checkStamp?: string;
  /**
   * The file in `.kumiki/cache/` the states of {@link checkStamp} are kept in; default
   * `live-check.jsonl`, the CLI's. A file holds one stamp's states: code other than the CLI's
   * names a file of its own, or each process replaces the other's.
   */
  readonly checkFile?: string;
}

/** A workspace opened for use: its store and the manifest its gate, `check` and `fix` use. */
export interface WorkspaceStore {
  readonly workspace: Workspace;
  readonly store: Store;
  /** `kumiki.caps.json` as read at open; undefined when the workspace has none. */
  readonly capabilities: CapabilityManifest | undefined;
  /** The checks kept across processes, with {@link WorkspaceStoreOptions.checkStamp}. */
  readonly keptChecks?: KeptChecks;
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
 * Opens the workspace at `dir` with its store (see the module comment): with `walkUp`, the nearest
 * at or above it; with `create`, a new one at `dir` when there is none. Nothing is left open when
 * it fails.
 */
export async function openWorkspaceStore(
  dir: string,
  options: WorkspaceStoreOptions = {},
): Promise<{ ok: true; value: WorkspaceStore } | { ok: false; error: WorkspaceStoreError }> {
  const {
    author = defaultAuthor(),
    validators = [],
    checker = true,
    create = false,
    checkStamp,
    checkFile,
    ...open
  } = options;
  const ws = await (create && open.readOnly !== true
    ? openOrInit(dir, open)
    : openWorkspace<StoredOp>(dir, open));
  if (!ws.ok) return ws;
  const fail = async (error: WorkspaceStoreError) => {
    await ws.value.log.close().catch(() => undefined);
    return { ok: false as const, error };
  };
  const made = storeOver(ws.value.log, ws.value.paths, {
    author,
    validators,
    checker,
    checkStamp,
    checkFile,
  });
  if (!made.ok) return fail(made.error);
  const { store, capabilities, keptChecks } = made.value;
  return {
    ok: true,
    value: {
      workspace: ws.value,
      store,
      capabilities,
      ...(keptChecks === undefined ? {} : { keptChecks }),
      close: () => store.close(),
    },
  };
}

/** The workspace at `dir`, made there when there is none. */
async function openOrInit(dir: string, open: WorkspaceOpenOptions): Promise<WorkspaceResult<Workspace>> {
  const opened = await openWorkspace<StoredOp>(dir, open);
  if (opened.ok || opened.error.code !== "no-workspace") return opened;
  const { walkUp: _, ...init } = open;
  const made = await initWorkspace<StoredOp>(dir, init);
  // Another process made it between the two calls (initWorkspace checks again under its lock).
  if (!made.ok && made.error.code === "workspace-exists") return openWorkspace<StoredOp>(dir, open);
  return made;
}
