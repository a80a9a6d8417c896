/**
 * Syncing a workspace with a server (ai-edit.md §9.8: push the ops, pull the others', converge).
 *
 * {@link syncWorkspace} opens the workspace with a {@link KumikiClientAdapter} on its Repo, waits for
 * the server's handshake, lets automerge-repo's sync run, and ends when the server reports, after
 * a durable flush, exactly the heads this replica has (a read-write token), or heads this replica
 * holds (read-only). It reconnects if the connection drops and gives up at the deadline. Sync
 * state is persisted by automerge-repo under the server's storage id, so a later sync sends only
 * what the server lacks. The report says what moved, what the merge recorded, and which of this
 * author's ops lost their effect (with how to retry).
 *
 * {@link cloneWorkspace} makes a new workspace of a graph held by a server; {@link fetchGraphDocument}
 * fetches a graph's whole document (what a repair takes up when a workspace lost its first change).
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as A from "@automerge/automerge";
import type { PeerId } from "@automerge/automerge-repo";
import {
  addsStandAlone,
  type Conflict,
  MemoryOpLog,
  openStore,
  type Quarantined,
  type Store,
  type StoredOp,
} from "@kumiki-graph/core";
import {
  type AutomergeOpLog,
  decodeChanges,
  findWorkspace,
  forEachStoredOp,
  initWorkspace,
  openWorkspace,
  openWorkspaceStore,
  readConfig,
  type Workspace,
  workspacePaths,
} from "@kumiki-graph/storage-automerge";
import { bundleOpIds } from "./bundle-op-ids.js";
import { KumikiClientAdapter } from "./client-adapter.js";
import type { FlushReply } from "./protocol.js";
import { addRemote, checkServerUrl, graphSocketUrl, parseGraphAddress } from "./remotes.js";
import { fail, ok, type SyncError, type SyncResult } from "./result.js";
import { SyncStateKeeper } from "./sync-state.js";

/** How to reach the server. */
export interface ConnectOptions {
  /** The bearer token, when the server wants one. */
  readonly token?: string;
  /** Give up after this many ms (default 60 000). */
  readonly timeoutMs?: number;
  /**
   * Give up after this many failed connection attempts when none succeeded (default 4: about
   * 1.75 s of back-off against a server that refuses or a host that is not found), instead of
   * waiting out `timeoutMs`. An attempt still under way (a slow network) is waited for.
   */
  readonly connectTries?: number;
  /** Progress lines (connecting, waiting), for a terminal. */
  readonly onProgress?: (message: string) => void;
}

/** How {@link syncWorkspace} runs. */
export interface SyncOptions extends ConnectOptions {
  /** The server, `ws://host:port`. */
  readonly url: string;
  /**
   * Other servers of the same service (sharing one database, docs/sync.md): when the server drops
   * or cannot be reached, the sync carries on through the next. The report names the one it ended on.
   */
  readonly alternates?: readonly string[];
  /**
   * Who writes the sync's own bookkeeping. `rolledBack` lists every author's ops the merge rolled
   * back, each with its author, so one syncer can serve several agents.
   */
  readonly author?: string;
}

/** An op whose effect the merge took away in this sync, whoever wrote it. */
export interface RolledBack {
  readonly opId: string;
  /** Who wrote it (one syncer may serve several agents). */
  readonly author: string;
  /** True when the op was held here before the sync (written here, not received). */
  readonly local: boolean;
  readonly conflict: Conflict;
}

/** What a sync did. */
export interface SyncReport {
  readonly server: string;
  readonly graph: string;
  /** The token's access to the graph. */
  readonly access: "read" | "write";
  /** Ops this replica sent that the server did not have. */
  readonly sent: number;
  /** Ops this replica received. */
  readonly received: number;
  /** Ops held after the sync. */
  readonly ops: number;
  /** The document heads both sides hold (read-only: the server's). */
  readonly heads: readonly string[];
  /** Conflicts the merge recorded that were not there before. */
  readonly conflicts: readonly Conflict[];
  /** The losers of those conflicts, every author's (each with its author; see `options.author`). */
  readonly rolledBack: readonly RolledBack[];
  /** Ops that arrived failing the op schema, kept out of the graph. */
  readonly quarantined: readonly Quarantined[];
  /** Read-only token: how many local ops the server does not have (not pushed). */
  readonly unpushed: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
}

/** What a clone made. */
export interface CloneReport {
  readonly root: string;
  readonly server: string;
  readonly graph: string;
  readonly ops: number;
  readonly heads: readonly string[];
  readonly access: "read" | "write";
  readonly bytesReceived: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_CONNECT_TRIES = 4;

function sameHeads(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((h) => s.has(h));
}

function timeoutError(adapter: KumikiClientAdapter, what: string, ms: number): SyncError {
  const why = adapter.lastProblem === undefined ? "" : ` (last problem: ${adapter.lastProblem.message})`;
  return {
    code: adapter.connected || adapter.lastProblem === undefined ? "timeout" : "unreachable",
    message: `${what} did not finish within ${Math.round(ms / 1000)} s${why}; nothing is lost: run it again`,
    details: { url: adapter.url, timeoutMs: ms },
  };
}

/** Waits for the server's handshake, or the session's failure, or the deadline. */
async function awaitPeer(
  adapter: KumikiClientAdapter,
  deadline: number,
  ms: number,
): Promise<SyncResult<void>> {
  for (;;) {
    if (adapter.failure !== undefined) return { ok: false, error: adapter.failure };
    if (adapter.connected) return ok(undefined);
    if (Date.now() >= deadline) return { ok: false, error: timeoutError(adapter, "connecting", ms) };
    await adapter.nextActivity(adapter.activity, deadline);
  }
}

/**
 * Runs the sync of `log`'s document until the server's durably stored heads are ours (write) or
 * are held here (read). Local changes to the document count as activity.
 */
async function converge(
  log: AutomergeOpLog,
  adapter: KumikiClientAdapter,
  deadline: number,
  ms: number,
  /** Told each reply's `taken` with the connection it came on (a failover opens another). */
  onTaken?: (connection: number, taken: number | undefined) => void,
): Promise<SyncResult<FlushReply>> {
  const poke = () => adapter.poke();
  log.handle.on("change", poke);
  try {
    for (;;) {
      if (adapter.failure !== undefined) return { ok: false, error: adapter.failure };
      if (Date.now() >= deadline) return { ok: false, error: timeoutError(adapter, "the sync", ms) };
      const seen = adapter.activity;
      if (!adapter.connected) {
        await adapter.nextActivity(seen, deadline);
        continue;
      }
      // A request the server never answers is ended by syncWorkspace's deadline, which disconnects
      // the adapter: that rejects it, and the loop meets the deadline.
      let reply: FlushReply;
      try {
        reply = await adapter.requestFlush(log.handle.documentId);
      } catch {
        continue; // dropped: the loop waits for the reconnection
      }
      onTaken?.(adapter.stats.connections, reply.taken);
      if (reply.access === "none") {
        return fail(
          "graph-unavailable",
          `${adapter.url} has no graph ${log.url} for this token (wrong server, or the token has no access to it)`,
          { url: adapter.url, graph: log.url },
        );
      }
      const local = log.heads();
      if (reply.access === "write" && sameHeads(reply.heads, local)) return ok(reply);
      if (reply.storageFault !== undefined && reply.access === "write") {
        return fail(
          "storage-failed",
          `${adapter.url} cannot store what was pushed (${reply.storageFault}): it confirmed nothing new, and every op stays here; sync again once the server has space`,
          { url: adapter.url, fault: reply.storageFault },
        );
      }
      if (reply.access === "read" && A.hasHeads(log.handle.doc(), [...reply.heads])) return ok(reply);
      await adapter.nextActivity(seen, deadline);
    }
  } finally {
    log.handle.off("change", poke);
  }
}

/** The op-ids in the bundles of sent sync messages (each counted once). */
function opIdsSent(messages: readonly Uint8Array[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    let changes: Uint8Array[];
    try {
      changes = A.decodeSyncMessage(m).changes;
    } catch {
      continue;
    }
    if (changes.length === 0) continue;
    const decoded = decodeChanges(changes);
    if (typeof decoded === "string") continue;
    for (const c of decoded) for (const id of bundleOpIds(c)) ids.add(id);
  }
  return ids;
}

/**
 * The conflicts and quarantined ops `store` holds that `heldBefore` (the ops held before the sync)
 * did not give. Nothing received and no held op replaced, nothing new: the graph is a function of
 * its ops, so the caller asks only otherwise. The ops before are folded apart only when the graph
 * has a conflict or a quarantined op.
 */
async function whatTheMergeRecorded(
  store: Store,
  heldBefore: readonly StoredOp[],
): Promise<{ conflicts: Conflict[]; quarantined: Quarantined[] }> {
  // The store takes remote ops in order with writes: an empty ingest waits for those in flight.
  await store.ingest([]);
  const conflicts = store.conflicts();
  const quarantined = [...store.status().quarantined];
  if (conflicts.length === 0 && quarantined.length === 0) return { conflicts, quarantined };
  const prior = openStore({ log: new MemoryOpLog(heldBefore), author: "user:sync", validators: [] });
  if (!prior.ok) throw new Error(`folding the ops held before the sync: ${prior.error.message}`);
  const conflictsBefore = new Set(prior.value.conflicts().map((c) => c.id));
  const quarantinedBefore = new Set(prior.value.status().quarantined.map((q) => q.opId));
  return {
    conflicts: conflicts.filter((c) => !conflictsBefore.has(c.id)),
    quarantined: quarantined.filter((q) => !quarantinedBefore.has(q.opId)),
  };
}

function peerIdFor(): PeerId {
  return `kumiki-${randomUUID()}` as PeerId;
}

/**
 * Synchronises the workspace at or above `dir` with the server at `options.url`. Answers within
 * `timeoutMs` whatever the server does: each step watches the deadline, and the whole sync races
 * it too (opening and closing the store, folding what arrived), so `kumiki sync --timeout 45` ends
 * by 45 s (was: a server that took a flush request and never answered held it past 100 s).
 */
export async function syncWorkspace(dir: string, options: SyncOptions): Promise<SyncResult<SyncReport>> {
  const ms = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + ms;
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const overtime = new Promise<SyncResult<SyncReport>>((resolve) => {
    timer = setTimeout(() => {
      stop.abort();
      resolve({
        ok: false,
        error: {
          code: "timeout",
          message: `the sync did not finish within ${Math.round(ms / 1000)} s; every op stays here, and what it pushed may or may not be on the server: run it again`,
          details: { url: options.url, timeoutMs: ms },
        },
      });
    }, ms);
  });
  try {
    return await Promise.race([syncUntil(dir, options, deadline, ms, stop.signal), overtime]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How many of this replica's ops the server took as new: the servers' own counts (the last reply
 * of each connection); from a server that does not count, the ops of ours in what we sent
 * (decoding it: 14-27 ms per 1,000 ops).
 */
function countSent(
  taken: ReadonlyMap<number, number | undefined>,
  sent: readonly Uint8Array[],
  before: ReadonlySet<string>,
): number {
  const counts = [...taken.values()];
  if (counts.every((n) => n !== undefined)) return counts.reduce<number>((a, n) => a + (n ?? 0), 0);
  let n = 0;
  for (const id of opIdsSent(sent)) if (before.has(id)) n++;
  return n;
}

/** The losers of `conflicts`, each with its author and whether it was written here (held `before`). */
function rolledBackOf(
  conflicts: readonly Conflict[],
  all: readonly StoredOp[],
  before: ReadonlySet<string>,
): RolledBack[] {
  if (conflicts.length === 0) return [];
  const authorOf = new Map(all.map((o) => [o["op-id"], (o as { author?: unknown }).author]));
  const out: RolledBack[] = [];
  for (const c of conflicts) {
    const lost = c.ops[0];
    if (lost === undefined) continue;
    const author = authorOf.get(lost);
    out.push({
      opId: lost,
      author: typeof author === "string" ? author : "(unknown)",
      local: before.has(lost),
      conflict: c,
    });
  }
  return out;
}

/**
 * How many ops this workspace holds that the server lacks. A read-only sync pushes nothing; a
 * damaged document holds fewer ops than the workspace shows (the rest recovered from
 * op-log.jsonl, which the document cannot send): both count what is not in the server's heads.
 * Otherwise every op is in the document, whose heads the server now has: none.
 */
function unpushedCount(
  log: AutomergeOpLog,
  done: { readonly access: string; readonly heads: readonly string[] },
  all: readonly StoredOp[],
): number {
  if (done.access !== "read" && log.damage === undefined) return 0;
  const serverIds = new Set<string>();
  forEachStoredOp(A.view(log.handle.doc(), [...done.heads]), (op) => serverIds.add(op["op-id"]));
  return all.filter((o) => !serverIds.has(o["op-id"])).length;
}

/**
 * What a sync connects: every server URL checked, the workspace found and its graph read, each
 * server's graph path (what a proxy routes by, and what pins the connection to this graph), and
 * the adapter that tries them in turn.
 */
function syncTarget(dir: string, options: SyncOptions) {
  const servers = [options.url, ...(options.alternates ?? [])];
  for (const url of servers) {
    const checked = checkServerUrl(url);
    if (!checked.ok) return checked;
  }
  const found = findWorkspace(dir);
  if (!found.ok) return { ok: false as const, error: { ...found.error, code: found.error.code } };
  const config = readConfig(found.value);
  if (!config.ok) return { ok: false as const, error: config.error };
  const documentId = config.value.graph.slice("automerge:".length);
  const sockets = servers.map((s) => graphSocketUrl(s, config.value.graph));
  const adapter = new KumikiClientAdapter(sockets[0]!, {
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(sockets.length > 1 ? { alternates: sockets.slice(1) } : {}),
    connectTries: (options.connectTries ?? DEFAULT_CONNECT_TRIES) * sockets.length,
  });
  return ok({ found, config, documentId, servers, sockets, adapter });
}

/** The sync of {@link syncWorkspace}, watching `deadline`; `stop` disconnects it. */
async function syncUntil(
  dir: string,
  options: SyncOptions,
  deadline: number,
  ms: number,
  stop: AbortSignal,
): Promise<SyncResult<SyncReport>> {
  const target = syncTarget(dir, options);
  if (!target.ok) return target;
  const { found, config, documentId, servers, sockets, adapter } = target.value;
  stop.addEventListener("abort", () => adapter.disconnect());
  const sent: Uint8Array[] = [];
  adapter.onSyncSent((m) => sent.push(...m));
  options.onProgress?.(`connecting to ${options.url}…`);
  // Core's one way to open a workspace, as the CLI and the MCP server do (network added).
  // The adapter joins once what the workspace holds is counted (below): given at open, a loaded
  // machine could take in the server's ops before the count, and report them as held, not received.
  const opened = await openWorkspaceStore(found.value.root, {
    peerId: peerIdFor(),
    sharePolicy: async (_peer, id) => id === documentId,
    author: options.author ?? "user:anonymous",
  });
  if (!opened.ok) {
    adapter.disconnect();
    return { ok: false, error: opened.error };
  }
  const ws = opened.value.workspace;
  const syncStates = new SyncStateKeeper(ws.log.repo);
  const store = opened.value.store;
  let closed = false;
  const close = async (): Promise<SyncError | undefined> => {
    if (closed) return undefined;
    closed = true;
    try {
      await syncStates.flush();
      await store.close();
      return undefined;
    } catch (e) {
      return {
        code: "storage-failed",
        message: `the synced ops could not be stored: ${(e as Error).message}`,
      };
    }
  };
  try {
    // The store folds its graph at the first question: a sync that receives nothing asks none.
    const heldBefore = [...ws.log.all()];
    const before = new Set(heldBefore.map((o) => o["op-id"]));
    const generationBefore = ws.log.generation;
    ws.log.repo.networkSubsystem.addNetworkAdapter(adapter);
    const peer = await awaitPeer(adapter, deadline, ms);
    if (!peer.ok) return peer;
    options.onProgress?.("syncing…");
    // What each connection's server says it took from us (its count grows; the last reply holds).
    const taken = new Map<number, number | undefined>();
    const done = await converge(ws.log, adapter, deadline, ms, (c, n) => taken.set(c, n));
    if (!done.ok) return done;
    const all = ws.log.all();
    const arrived = all.filter((o) => !before.has(o["op-id"]));
    const received = arrived.length;
    // The servers' own counts of the ops they took from us as new; from a server that does not
    // count, the ops of ours in what we sent (decoding it: 14-27 ms per 1,000 ops).
    const sentCount = countSent(taken, sent, before);
    // No held op replaced (a contested op-id decided anew), and the same op-ids or only adds
    // that provably stand alone (core's addsStandAlone): no new record, and no fold to find that.
    const nothingNew =
      ws.log.generation === generationBefore && (received === 0 || addsStandAlone(heldBefore, arrived));
    const { conflicts, quarantined } = nothingNew
      ? { conflicts: [], quarantined: [] }
      : await whatTheMergeRecorded(store, heldBefore);
    const rolledBack = rolledBackOf(conflicts, all, before);
    const damage = ws.log.damage;
    const unpushed = unpushedCount(ws.log, done.value, all);
    const report: SyncReport = {
      server: servers[sockets.indexOf(adapter.url)] ?? options.url,
      graph: config.value.graph,
      access: done.value.access === "read" ? "read" : "write",
      sent: sentCount,
      received,
      ops: all.length,
      heads: [...done.value.heads],
      conflicts,
      rolledBack,
      quarantined,
      unpushed,
      bytesSent: adapter.stats.bytesSent,
      bytesReceived: adapter.stats.bytesReceived,
    };
    const failed = await close();
    if (failed !== undefined) return { ok: false, error: failed };
    if (damage !== undefined && done.value.access !== "read" && unpushed > 0)
      return fail(
        "store-damaged",
        `synced with ${report.server}, but ${unpushed} op${unpushed === 1 ? "" : "s"} this workspace holds ${unpushed === 1 ? "is" : "are"} not on it: the workspace's document is damaged (${damage.chunks.length} chunk file${damage.chunks.length === 1 ? "" : "s"} held back, ${damage.lostChanges.length} change${damage.lostChanges.length === 1 ? "" : "s"} missing), and the op${unpushed === 1 ? "" : "s"} recovered from op-log.jsonl cannot be sent from it. Run kumiki repair: it writes ${unpushed === 1 ? "it" : "them"} back into the document and syncs with the remote. Nothing held here was lost.`,
        { report, unpushed },
      );
    return ok(report);
  } finally {
    await close();
  }
}

/**
 * Why a clone's workspace was not made: its folder could not be stored, the session failed (a bad
 * token), the deadline passed, or the server does not provide the graph.
 */
function cloneNotMade(
  error: { readonly code: string; readonly message: string },
  adapter: KumikiClientAdapter,
  at: { root: string; server: string; graph: string; deadline: number; ms: number },
): SyncResult<never> {
  if (error.code === "storage-failed")
    return fail(
      "storage-failed",
      `the clone could not be stored in ${at.root}: ${error.message}; nothing was kept`,
      { path: at.root },
    );
  if (adapter.failure !== undefined) return { ok: false, error: adapter.failure };
  if (Date.now() >= at.deadline) return { ok: false, error: timeoutError(adapter, "the clone", at.ms) };
  return fail("graph-unavailable", `${at.server} did not provide the graph ${at.graph} (${error.message})`, {
    server: at.server,
    graph: at.graph,
  });
}

/**
 * A fault of the disk (ENOSPC, EIO, a permission) mid-clone: an error, and nothing left behind
 * (a half-made workspace would name a graph it never stored, and block the next clone).
 */
function cloneNotStored(e: unknown, root: string): SyncResult<never> {
  const code = (e as NodeJS.ErrnoException).code;
  return fail(
    "storage-failed",
    `the clone could not be stored in ${root}${code === undefined ? "" : ` (${code})`}: ${(e as Error).message}; nothing was kept — free space (or fix the folder) and clone again`,
    { path: root, ...(code === undefined ? {} : { errno: code }) },
  );
}

/** Options of {@link cloneWorkspace}. */
export interface CloneOptions extends ConnectOptions {
  /** Token file to record with the `origin` remote. */
  readonly tokenFile?: string;
}

/**
 * Makes `dir` a new workspace holding the graph at `address` (`ws://host:port/automerge:…`), with
 * the server recorded as remote `origin`. Refused when `dir` is a workspace already; on failure
 * whatever it created is removed.
 */
export async function cloneWorkspace(
  address: string,
  dir: string,
  options: CloneOptions = {},
): Promise<SyncResult<CloneReport>> {
  const ms = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + ms;
  const parsed = parseGraphAddress(address);
  if (!parsed.ok) return parsed;
  const { server, graph } = parsed.value;
  const paths = workspacePaths(dir);
  if (fs.existsSync(paths.dir))
    return fail("workspace-exists", `${paths.root} is already a workspace (${paths.dir} exists)`, {
      path: paths.dir,
    });
  const createdRoot = !fs.existsSync(paths.root);
  const cleanUp = () => {
    fs.rmSync(createdRoot ? paths.root : paths.dir, { recursive: true, force: true });
  };
  const adapter = new KumikiClientAdapter(graphSocketUrl(server, graph), {
    ...(options.token === undefined ? {} : { token: options.token }),
    connectTries: options.connectTries ?? DEFAULT_CONNECT_TRIES,
  });
  // Nothing to load for a new workspace; the keeper saves the sync state once installed.
  adapter.hideStorageId = true;
  options.onProgress?.(`connecting to ${server}…`);
  let timer: NodeJS.Timeout | undefined;
  // A find waits for the adapter; at the deadline the adapter stops, which ends the find.
  const stop = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      adapter.disconnect();
      resolve();
    }, ms);
  });
  let ws: Workspace | undefined;
  try {
    const init = await initWorkspace(paths.root, {
      graph,
      network: [adapter],
      peerId: peerIdFor(),
      sharePolicy: async (_peer, id) => `automerge:${id}` === graph,
    });
    if (!init.ok) {
      cleanUp();
      return cloneNotMade(init.error, adapter, { root: paths.root, server, graph, deadline, ms });
    }
    ws = init.value;
    const syncStates = new SyncStateKeeper(ws.log.repo);
    adapter.hideStorageId = false;
    if (adapter.remotePeerId !== undefined && adapter.remoteMetadata !== undefined)
      syncStates.trackPeer(adapter.remotePeerId, adapter.remoteMetadata);
    const done = await converge(ws.log, adapter, deadline, ms);
    if (!done.ok) {
      await ws.log.close().catch(() => undefined);
      ws = undefined;
      cleanUp();
      return done;
    }
    const report: CloneReport = {
      root: paths.root,
      server,
      graph,
      ops: ws.log.all().length,
      heads: ws.log.heads(),
      access: done.value.access === "read" ? "read" : "write",
      bytesReceived: adapter.stats.bytesReceived,
    };
    const log = ws.log;
    ws = undefined;
    await syncStates.flush();
    await log.close();
    const remote = addRemote(paths, {
      name: "origin",
      url: server,
      ...(options.tokenFile === undefined ? {} : { tokenFile: path.resolve(options.tokenFile) }),
    });
    if (!remote.ok) {
      cleanUp();
      return remote;
    }
    return ok(report);
  } catch (e) {
    if (ws !== undefined) await ws.log.close().catch(() => undefined);
    ws = undefined;
    cleanUp();
    return cloneNotStored(e, paths.root);
  } finally {
    clearTimeout(timer);
    void stop;
    if (ws !== undefined) await ws.log.close().catch(() => undefined);
  }
}

/**
 * The graph document at `address` (`ws://host:port/automerge:…`) as the server holds it, as
 * `Automerge.save` bytes (what core's `repairWorkspace` takes as `fetchDocument`), or undefined
 * when the server does not hold that graph. It is cloned into a temporary folder, read and removed,
 * so it goes through exactly the checks and the convergence a clone does.
 */
export async function fetchGraphDocument(
  address: string,
  options: ConnectOptions = {},
): Promise<SyncResult<Uint8Array | undefined>> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-fetch-"));
  try {
    const cloned = await cloneWorkspace(address, path.join(tmp, "graph"), options);
    if (!cloned.ok) return cloned.error.code === "graph-unavailable" ? ok(undefined) : cloned;
    const ws = await openWorkspace(path.join(tmp, "graph"), { readOnly: true });
    if (!ws.ok) return fail("storage-failed", ws.error.message, { path: tmp });
    try {
      return ok(A.save(ws.value.log.handle.doc()));
    } finally {
      await ws.value.log.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
