/**
 * The command context: the author, the global options, and the store opened on demand (for reads,
 * from the workspace's verified op-log.jsonl when it is current: storage-automerge's read path).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { CapabilityManifest, CheckCache, KeptChecks, Store, StoredOp } from "@kumiki-graph/core";
import type { DefinitionRowLookup, DefinitionTableFile } from "@kumiki-graph/storage-automerge/read";
import type { OptionValues } from "./args.js";
import { stringOption } from "./args.js";
import type { CommandContext } from "./command.js";
import {
  loadCore,
  loadReadCore,
  loadStorage,
  loadStorageQuick,
  loadStorageRead,
  type ReadCore,
} from "./core.js";
import { failure, fromRejection, usageError } from "./errors.js";
import { decodeInput } from "./input-text.js";
import type { CliIo } from "./io.js";
import { CLI_VERSION } from "./version.js";

/**
 * The default author: KUMIKI_AUTHOR, else user:$USER, else user:anonymous. The same rule as core's
 * `defaultAuthor`, kept here because it is needed before any verb runs and importing core (even
 * its read entry) at start-up would cost every call, `--help` included, its module loading.
 */
export function defaultAuthor(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env.KUMIKI_AUTHOR;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const user = (env.USER ?? env.USERNAME ?? "anonymous").replace(/[^A-Za-z0-9._:@/+-]/g, "_");
  return `user:${user === "" ? "anonymous" : user}`;
}

/** The context of one invocation, and the cleanup `main` runs after the verb. */
export interface OpenContext {
  readonly ctx: CommandContext;
  close(): Promise<void>;
}

/** A store kept open across calls, as {@link StoreProvider.open} gives it. */
export interface HeldStore {
  readonly store: Store;
  /** Every op the workspace's log holds now. */
  readonly ops: () => readonly StoredOp[];
  /** Where check results for the state this store read are kept (read from the workspace's files only). */
  readonly checkCache?: CheckCache;
  /** Where check results for the state this store holds now are kept (a store this process opened in full). */
  readonly checkCacheNow?: () => CheckCache;
  /** Where checks are kept as state to go on from (its gate's first write reads there too). */
  readonly keptChecks?: KeptChecks;
  /**
   * The table of every definition for the state this store holds now: of the state it read, for a
   * store read from the workspace's files (it does not change); of the state after its writes, for
   * a store this process opened in full. Undefined while the store is damaged: its answers (its
   * status saying what is damaged first) are its own, whatever table its heads name.
   */
  readonly definitionsNow?: () => DefinitionTableFile | undefined;
  /**
   * For a write in a process of its own: the table file of the state the store opened at, the
   * state now, and the ops this store wrote since (what the table takes as an append).
   */
  readonly definitionsSince?: () => {
    readonly file: DefinitionTableFile;
    readonly now: string;
    readonly written: readonly StoredOp[];
  };
}

/**
 * What checked, for the check cache: the version, and this module's URL — in the bin's bundle a
 * chunk whose file name carries a hash of its content and of the chunks it imports (core's checker
 * among them) — so a rebuilt or upgraded CLI never answers with results an older checker kept.
 */
const CHECK_STAMP = `${CLI_VERSION} ${import.meta.url}`;

/**
 * Where a long-lived process (the CLI daemon) keeps workspace stores open across calls. A call
 * given one reads and writes through the store it returns and leaves it open; without one, a call
 * opens its own store and closes it when the verb returns.
 */
export interface StoreProvider {
  /** The open store of the workspace at or above `dir`, writing as `author`; rejects as the open does. */
  open(dir: string, author: string): Promise<HeldStore>;
}

/**
 * Opens the workspace at or above `dir` for writing as `author` (rejects with the CLI error the
 * open's refusal makes): what a call opens for itself, and what the daemon keeps open. With
 * `keep`, its gate goes on from the check another call kept of the same state, and
 * {@link HeldStore.keptChecks} is where this call keeps its own.
 */
export async function openWorkspaceHeld(
  dir: string,
  author: string,
  keep = false,
): Promise<HeldStore & { close(): Promise<void> }> {
  const storage = await loadStorage();
  // automerge-repo's background saves are not caught: on a full disk one ended the call with a raw
  // ENOSPC stack before the write's own flush refused it (full-disk.e2e, under load).
  storage.letStorageFaultsGo();
  // The one way to open a workspace: the same manifest, gate and store as the MCP server.
  // As git finds .git: the workspace at or above the folder (core opens only the folder given unless asked).
  const ws = await storage.openWorkspaceStore(dir, {
    author,
    walkUp: true,
    ...(keep ? { checkStamp: CHECK_STAMP } : {}),
  });
  if (!ws.ok) throw fromRejection(ws.error);
  const { log, paths } = ws.value.workspace;
  const { keptChecks } = ws.value;
  const stateNow = () => storage.opsState(log.handle.documentId, log.heads(), log.pendingHeld());
  return {
    store: ws.value.store,
    ...(keptChecks === undefined ? {} : { keptChecks }),
    ops: () => log.all(),
    checkCacheNow: () => new storage.CheckCacheFile(paths, stateNow(), CHECK_STAMP),
    definitionsNow: () =>
      log.damage === undefined ? new storage.DefinitionTableFile(paths, stateNow(), CHECK_STAMP) : undefined,
    close: () => ws.value.close(),
  };
}

/**
 * Verbs that open the workspace in full even in a process of their own: they stay (the live view)
 * or sync with peers, and need the document itself.
 */
const FULL_OPEN_VERBS = new Set(["ui", "sync"]);

/**
 * What a call in its own process writes through: the workspace opened without loading its
 * Automerge document when that can be done (storage-automerge's quick entry: the write is stored as
 * a pending bundle, folded in by the next open of the document), else opened in full.
 * `KUMIKI_PENDING_WRITES=off` always opens in full.
 */
async function openOwnHeld(
  dir: string,
  author: string,
  keep: boolean,
  verb: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<HeldStore & { close(): Promise<void> }> {
  if (env.KUMIKI_PENDING_WRITES !== "off" && !FULL_OPEN_VERBS.has(verb)) {
    const [quick, sr] = await Promise.all([loadStorageQuick(), loadStorageRead()]);
    const opened = await quick.openQuickWrite(dir, {
      author,
      walkUp: true,
      validators: [],
      checker: true,
      ...(keep ? { checkStamp: CHECK_STAMP } : {}),
    });
    if (opened !== undefined) {
      if (!opened.ok) throw fromRejection(opened.error);
      const q = opened.value;
      const openedAt = q.state();
      return {
        store: q.store,
        ...(q.keptChecks === undefined ? {} : { keptChecks: q.keptChecks }),
        ops: () => q.ops(),
        checkCacheNow: () => new sr.CheckCacheFile(q.paths, q.state(), CHECK_STAMP),
        definitionsSince: () => ({
          file: new sr.DefinitionTableFile(q.paths, openedAt, CHECK_STAMP),
          now: q.state(),
          written: q.written(),
        }),
        close: () => q.close(),
      };
    }
  }
  return openWorkspaceHeld(dir, author, keep);
}

/**
 * Thrown by a read store's first read when op-log.jsonl, vouched for by its sidecar, does not
 * parse: the fast path found out too late to fall back, so `main` runs the read verb again with
 * `KUMIKI_READ_SNAPSHOT=off` (a read verb has written nothing by then).
 */
export class SnapshotUnreadable extends Error {
  constructor(file: string) {
    super(`${file} does not parse although its sidecar vouches for it, or changed since it did`);
  }
}

/** The text of `file` (`-`: stdin), decoded as a Kumiki text is; a missing or unreadable file refused. */
async function readInput(io: Required<CliIo>, file: string): Promise<string> {
  if (file === "-") return io.stdin();
  const p = path.resolve(io.cwd, file);
  let bytes: Buffer;
  try {
    bytes = await readFile(p);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ENOENT")
      throw failure(
        "file-not-found",
        `${file}: no such file (give a path relative to ${io.cwd}, or - for stdin)`,
        {
          path: p,
        },
      );
    if (err.code === "EISDIR")
      throw failure("file-unreadable", `${file} is a directory, not a file`, { path: p });
    throw failure("file-unreadable", `${file}: cannot read (${err.code ?? err.message})`, { path: p });
  }
  return decodeInput(bytes, file);
}

/**
 * The workspace's kumiki.caps.json at or above `dir`, through core's reader (the one the MCP
 * server's open uses too), without Automerge; undefined without a workspace or a manifest.
 */
async function capabilitiesAt(dir: string): Promise<CapabilityManifest | undefined> {
  const [sr, rc] = await Promise.all([loadStorageRead(), loadReadCore()]);
  const ws = sr.findWorkspace(dir);
  if (!ws.ok) return undefined;
  const read = rc.readCapabilityManifest(ws.value.root);
  if (!read.ok) throw fromRejection(read.error);
  return read.value;
}

/** Builds the context a verb runs in. */
export function createContext(
  io: Required<CliIo>,
  verb: string,
  positionals: readonly string[],
  options: OptionValues,
  stores?: StoreProvider,
  sources: ReadonlyMap<string, string> = new Map(),
): OpenContext {
  const json = options.json === true;
  const storeOption = stringOption(options, "store");
  const storeDir = storeOption === undefined ? undefined : path.resolve(io.cwd, storeOption);
  const author = stringOption(options, "author") ?? defaultAuthor(io.env);
  const noColor = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== "";
  let full: Promise<HeldStore> | undefined;
  let read: Promise<HeldStore> | undefined;
  let progressShown = false;

  let caps: Promise<CapabilityManifest | undefined> | undefined;
  const capabilities = (): Promise<CapabilityManifest | undefined> => {
    caps ??= capabilitiesAt(storeDir ?? io.cwd);
    return caps;
  };

  const openFull = (): Promise<HeldStore> => {
    if (stores !== undefined) {
      full ??= stores.open(storeDir ?? io.cwd, author);
      return full;
    }
    // A call of its own keeps its check for the next one (the daemon keeps its checks in memory).
    full ??= openOwnHeld(storeDir ?? io.cwd, author, io.env.KUMIKI_CHECK_CACHE !== "off", verb, io.env);
    return full;
  };

  const ctx: CommandContext = {
    io,
    verb,
    positionals,
    options,
    json,
    color: !noColor && io.isTTY,
    author,
    task: stringOption(options, "task"),
    storeDir,
    optionName: (name) => sources.get(name) ?? `--${name}`,
    async openStore() {
      return (await openFull()).store;
    },
    capabilities,
    async openReadStore() {
      return (await openRead()).store;
    },
    async checkCache() {
      return (await openRead()).checkCache;
    },
    async keptChecks() {
      return (await openRead()).keptChecks;
    },
    ...tableOf(() => openRead(), author),
    async heldOps() {
      return (await (full ?? openRead())).ops();
    },
    readInput: (file) => readInput(io, file),
    readLine() {
      return io.readLine();
    },
    progress(message) {
      if (!io.isTTY || json) return;
      progressShown = true;
      io.stderr(`\r\x1b[2K${message}`);
    },
  };

  // Read verbs: from the workspace's op-log.jsonl when the storage shows it current (no Automerge
  // loaded), else the full open. Every writer keeps that file current, so after a write too.
  function openRead(): Promise<HeldStore> {
    // A held store is live (it takes in every other writer's ops as it is read): read from it.
    if (full !== undefined || stores !== undefined) return openFull();
    // Not current, or no workspace: the full open (which says what is wrong, if anything).
    read ??= (async () => (await readFromFiles(storeDir ?? io.cwd, author, io.env, verb)) ?? openFull())();
    return read;
  }

  return {
    ctx,
    async close() {
      if (progressShown) io.stderr("\r\x1b[2K");
      // A held store stays open: its appends were flushed before they were answered.
      if (stores !== undefined) return;
      if (full !== undefined && io.env.KUMIKI_CHECK_CACHE !== "off") await keepCheck(full, capabilities);
      if (full !== undefined && io.env.KUMIKI_VIEW_CACHE !== "off") await appendDefinitions(full);
      const opened = [full, read].filter((p): p is Promise<HeldStore> => p !== undefined);
      for (const p of new Set(opened)) {
        const o = await p.catch(() => undefined);
        try {
          await o?.store.close();
        } catch (e) {
          // Only the readable op-log.jsonl failed (a full disk): what the verb wrote is stored, so
          // its answer stands, with the file's state said beside it.
          if ((e as { code?: unknown }).code !== "op-log-file-failed") throw e;
          io.stderr(`kumiki ${verb}: warning: ${(e as Error).message}\n`);
        }
      }
    },
  };
}

/** Read verbs whose store takes its graph up from a kept fold snapshot (see `readFromFiles`). */
const SEEDED_VERBS = new Set(["check"]);

/**
 * The read store served from the workspace's op-log.jsonl, when the storage shows it current
 * (storage-automerge's read path): no Automerge loaded. Undefined when it does not serve.
 */
async function readFromFiles(
  dir: string,
  author: string,
  env: Readonly<Record<string, string | undefined>>,
  verb: string,
): Promise<HeldStore | undefined> {
  if (env.KUMIKI_READ_SNAPSHOT === "off") return undefined;
  const [sr, rc] = await Promise.all([loadStorageRead(), loadReadCore()]);
  const fast = await sr.readWorkspaceOps(dir, { walkUp: true });
  if (!fast.ok || fast.value.state === undefined) return undefined;
  const { paths, state } = fast.value;
  const held = fast.value;
  // Parsed when first read: a check answered from its cache reads no op.
  const log = new rc.SnapshotOpLog(
    () => {
      if (held.ops !== undefined) return held.ops;
      // The bytes matched their sidecar's stamps (size, inode, mtime) yet hold a line that is not an
      // op (a crash between the two writes), or a writer changed the file after the lock was
      // released and before this first read: `main` runs the verb again, opened in full.
      throw new SnapshotUnreadable(paths.opLog);
    },
    {
      wireChecked: () => held.wireChecked,
      // op-log.jsonl's fold a write in its own process kept: a check that goes on from a kept
      // check takes its graph up from it rather than reading and folding every op. Not a check
      // in full (KUMIKI_CHECK_CACHE=off), nor the other read verbs: what walks every definition
      // reads every row, which costs as much as folding (a full check at 100,012 ops measured
      // 888 ms of CPU so, 556 folding).
      ...(SEEDED_VERBS.has(verb) && env.KUMIKI_CHECK_CACHE !== "off"
        ? { seed: () => held.fold?.(CHECK_STAMP) }
        : {}),
    },
  );
  const store = rc.openStore({ log, author });
  if (!store.ok) throw fromRejection(store.error);
  return {
    store: store.value,
    ops: () => log.all(),
    ...(env.KUMIKI_CHECK_CACHE === "off"
      ? {}
      : {
          checkCache: new sr.CheckCacheFile(paths, state, CHECK_STAMP),
          keptChecks: new sr.KeptChecksFile(paths, CHECK_STAMP),
        }),
    ...(env.KUMIKI_VIEW_CACHE === "off"
      ? {}
      : { definitionsNow: () => new sr.DefinitionTableFile(paths, state, CHECK_STAMP) }),
  };
}

/**
 * Keeps the check `held`'s write gate left at the state the store holds now (see {@link keepCheck}),
 * under the capability manifest of the workspace at `dir`, and the table of every definition for
 * `kumiki view`: what the daemon does with each store it closes, so that the next call in its own
 * process, or the next daemon, goes on from them.
 */
export async function keepHeldCheck(held: HeldStore, dir: string): Promise<void> {
  await keepCheck(Promise.resolve(held), () => capabilitiesAt(dir));
  await keepDefinitions(Promise.resolve(held));
}

/**
 * Keeps the check the write gate left at the state the store holds now, for the next `kumiki
 * check` of it (core's `keepCheck`: nothing is checked here). Best effort: the verb's answer
 * stands whatever happens to the cache.
 */
async function keepCheck(
  opened: Promise<HeldStore>,
  capabilities: () => Promise<CapabilityManifest | undefined>,
): Promise<void> {
  try {
    const held = await opened;
    if (held.checkCacheNow === undefined) return;
    const [core, manifest] = await Promise.all([loadCore(), capabilities()]);
    core.keepCheck(
      held.store,
      manifest === undefined ? {} : { capabilities: manifest },
      held.checkCacheNow(),
      held.keptChecks,
    );
  } catch {
    // An open that failed is the verb's to report; a cache not kept costs the next check a check.
  }
}

/**
 * Keeps the table of every definition the store holds now, with its status, for the next `kumiki
 * view`, `list`, `refs` or `status` of this state in a process of its own (core's `definitionRows`
 * and `statusOfState`: nothing is rendered here). Best effort, as {@link keepCheck}.
 */
async function keepDefinitions(opened: Promise<HeldStore>): Promise<void> {
  try {
    const held = await opened;
    const table = held.definitionsNow?.();
    if (table === undefined) return;
    const rc = await loadReadCore();
    table.put(rc.definitionRows(held.store), rc.statusOfState(held.store));
  } catch {
    // An open that failed is the verb's to report; a table not kept costs the next view a fold.
  }
}

/** The context's reads and keeps of the table of every definition, of the read store `openRead` gives. */
function tableOf(
  openRead: () => Promise<HeldStore>,
  author: string,
): Pick<CommandContext, "keptView" | "keptList" | "keptRefs" | "keptStatus" | "keepDefinitions"> {
  // What `read` answers from the table kept for the read store's state; undefined when none is.
  const fromTable = async <T>(read: (rc: ReadCore, rows: DefinitionRowLookup) => T | undefined) => {
    const rows = (await openRead()).definitionsNow?.()?.rows();
    return rows === undefined ? undefined : read(await loadReadCore(), rows);
  };
  return {
    keptView: (selector, withDeps) =>
      fromTable((rc, rows) => rc.viewFromTable(rows, selector, { withDeps: withDeps === true })),
    keptList: (layer) => fromTable((rc, rows) => rc.listFromTable(rows, layer)),
    keptRefs: (selector) => fromTable((rc, rows) => rc.refsFromTable(rows, selector)),
    keptStatus: () => fromTable((rc, rows) => rc.statusFromTable(rows, author)),
    keepDefinitions: () => keepDefinitions(openRead()),
  };
}

/**
 * Takes what a write in its own process changed into the table of every definition kept for the
 * state it opened at (core's `changedRows`, a row or a few appended), so that the next `kumiki
 * view` reads the table instead of folding the ops. Best effort: when the file holds no table of
 * that state, or the write linked or changed what applies (a control op: its rows are not known
 * without the whole table), nothing is appended and the next read keeps a whole table.
 */
async function appendDefinitions(opened: Promise<HeldStore>): Promise<void> {
  try {
    const held = await opened;
    const since = held.definitionsSince?.();
    if (since === undefined || since.written.length === 0) return;
    const rc = await loadReadCore();
    const rows = rc.changedRows(held.store, since.written);
    if (rows !== undefined) since.file.append(since.now, rows, rc.statusOfState(held.store));
  } catch {
    // An open that failed is the verb's to report; a table not taken on costs the next view a fold.
  }
}

/** A usage error when `author` is not a valid author id; checked before the store is read. */
export async function checkAuthor(author: string): Promise<void> {
  const { isAuthorId } = await loadReadCore();
  if (!isAuthorId(author)) {
    throw usageError(
      `invalid author ${JSON.stringify(author)}: letters, digits and . _ : @ / + - without spaces, at most 128 characters (e.g. agent:claude-1)`,
    );
  }
}
