/**
 * Repairing a workspace whose stored document is damaged (see {@link StoreDamage}): the damaged
 * chunk files are moved aside into `.kumiki/damaged/<time>/` (never deleted), the sound Automerge
 * chunks at the start of each are kept, and the ops op-log.jsonl holds that the document lacks are
 * appended again, as one new change. A document whose first change was lost takes up the history a
 * remote holds ({@link RepairOptions.fetchDocument}), or, with no remote, gets a new first change
 * (a new history: see docs/semantics.md "Damage and repair" for what that means for sync). A
 * damaged op-log.jsonl is moved aside and written again from the document. A workspace that holds
 * an op the remote holds with other content (poisoned: its pushes are refused for good) takes up
 * the remote's copy, its contested ops put aside (repair-contested.ts).
 *
 * What cannot be recovered is said, never guessed: the changes op-log.jsonl was written after are
 * known by hash, so a report can say whether every op acknowledged before its last write is back;
 * a damaged chunk written after op-log.jsonl (ops a sync peer sent since) may have held ops no
 * local file has, and is named for a sync with the server to bring back.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as A from "@automerge/automerge";
import { makeDirs, type StoreDamage, type StoredOp } from "@kumiki-graph/core";
import { AutomergeOpLog } from "./automerge-op-log.js";
import { snapshotName, walkChunks } from "./chunk-check.js";
import { FileLock } from "./file-lock.js";
import { DurableFSStorageAdapter } from "./fs-storage.js";
import { OP_LOG_FORMAT, OP_LOG_KIND, type OpLogDocument } from "./op-log-document.js";
import { OpLogFile } from "./op-log-file.js";
import { PendingBundles } from "./pending-bundles.js";
import { type ContestedReport, claimsOf, contestedOps, remoteOps, takeUpRemote } from "./repair-contested.js";
import { OpLogOpenError } from "./repo-op-log.js";
import {
  findWorkspace,
  ignoreInGit,
  readConfig,
  type WorkspacePaths,
  type WorkspaceResult,
} from "./workspace-layout.js";

/** One damaged chunk file, and where the repair put it. */
export interface RepairedChunk {
  readonly name: string;
  readonly reason: string;
  /** Where the file was moved (absent on a dry run). */
  readonly movedTo?: string;
  /** Bytes of sound Automerge chunks at its start, kept as a new chunk (0: nothing could be kept). */
  readonly salvagedBytes: number;
  /**
   * Not among the chunks op-log.jsonl was derived from (written after it, or the file cannot say):
   * it may have held ops no local file has (a sync with the server fetches them).
   */
  readonly newerThanOpLog: boolean;
}

/** What {@link repairWorkspace} found and did. */
export interface RepairReport {
  /** False when nothing was wrong (and nothing was done). */
  readonly damaged: boolean;
  /** True when files were changed (false on a dry run or when nothing was wrong). */
  readonly repaired: boolean;
  readonly chunks: readonly RepairedChunk[];
  /** Changes op-log.jsonl was written after that the document lacked. */
  readonly lostChanges: readonly string[];
  readonly opLog: {
    /** Ops read from the file. */
    readonly ops: number;
    /** Lines that held no op (a damaged file). */
    readonly unreadableLines: number;
    /** The file is as kumiki last wrote it (its sidecar matches): its ops were all in the document. */
    readonly verified: boolean;
    /** Where a damaged file was moved before it was written again. */
    readonly movedTo?: string;
  };
  /** Ops the document held before the repair (its sound chunks). */
  readonly before: number;
  /**
   * Ops the remote's copy of the document brought that the sound chunks did not show (taken when
   * the first change was lost; then the local chunks that depended on it show again too).
   */
  readonly fromRemote: number;
  /** Ops taken back from op-log.jsonl. */
  readonly fromOpLog: number;
  /**
   * Ops of writes that waited beside the document (pending bundles a write in its own process
   * stored), folded into the repaired document.
   */
  readonly fromPending: number;
  /**
   * Ops the document holds after (`before + fromRemote + fromOpLog + fromPending`; on a dry run,
   * what it would hold from local files).
   */
  readonly after: number;
  /** The document's first change was lost and no remote gave it back: it was given a new one (a new history). */
  readonly newHistory: boolean;
  /** The document's first change was lost and was taken back from the remote's copy. */
  readonly rootFromRemote: boolean;
  /**
   * Whether every op acknowledged before op-log.jsonl's last write is held again: "all" when the
   * file was verified; "unknown" when it was not (edited, or its sidecar lost).
   */
  readonly acknowledged: "all" | "unknown";
  /**
   * Ops the workspace holds under op-ids the remote holds with other content, and what was done
   * (absent when the remote was not asked: no `fetchDocument`, or it could not be reached).
   */
  readonly contested?: ContestedReport;
}

/** How {@link repairWorkspace} runs. */
export interface RepairOptions {
  /** Report what would be done; change nothing. */
  readonly dryRun?: boolean;
  /** The time used to name the `damaged/` folder (tests). */
  readonly now?: Date;
  /**
   * The graph document as a remote holds it (`Automerge.save` bytes), or undefined when the remote
   * does not hold this graph; throws when the remote cannot be reached. Asked before anything is
   * changed. When the document's first change is lost, the repair takes up the remote's history
   * instead of starting a new one (which could not sync with it again), and when it throws then,
   * nothing is changed and the repair fails with `remote-unavailable`. Otherwise the remote's ops
   * are compared with the workspace's: ops it holds with other content under the same op-id are
   * put aside and the remote's copy taken up ({@link RepairReport.contested}); a remote that cannot
   * be reached leaves that comparison undone.
   */
  readonly fetchDocument?: () => Promise<Uint8Array | undefined>;
}

function fail<T>(
  code: "no-workspace" | "storage-failed" | "store-missing" | "remote-unavailable",
  message: string,
): WorkspaceResult<T> {
  return { ok: false, error: { code, message } };
}

/** Moves `file` into `dir` (made as needed), keeping its name; returns where it went. */
function moveAside(file: string, dir: string, name: string): string {
  makeDirs(dir);
  const to = path.join(dir, name.replaceAll("/", "-"));
  fs.renameSync(file, to);
  return to;
}

/**
 * Checks the workspace at or above `dir` and repairs what is damaged: its storage chunks and its
 * op-log.jsonl. Holds the workspace's lock throughout, so no other process writes meanwhile.
 */
export async function repairWorkspace(
  dir: string,
  options: RepairOptions = {},
): Promise<WorkspaceResult<RepairReport>> {
  const found = findWorkspace(dir);
  if (!found.ok) return found;
  const paths = found.value;
  const config = readConfig(paths);
  if (!config.ok) return config;
  const url = config.value.graph;
  const documentId = url.slice("automerge:".length);
  if (options.dryRun !== true) {
    try {
      fs.accessSync(paths.storage, fs.constants.W_OK);
    } catch {
      return fail("storage-failed", `no write access to ${paths.storage}: a repair needs it (try --dry-run)`);
    }
  }
  const lock = new FileLock(path.join(paths.storage, ".lock"));
  try {
    return await lock.run(() => repairLocked(paths, url, documentId, lock, options));
  } catch (e) {
    return fail("storage-failed", `cannot repair ${paths.dir}: ${(e as Error).message}`);
  }
}

/** What a workspace holds before a repair: op-log.jsonl as read, and the document opened read-only. */
interface Found {
  /** op-log.jsonl is as kumiki wrote it (its sidecar vouches for it). */
  readonly verified: boolean;
  /** The chunks op-log.jsonl was last written from. */
  readonly derivedFrom: ReadonlySet<string>;
  readonly fileOps: { readonly ops: StoredOp[]; readonly unreadable: number };
  readonly damage: StoreDamage | undefined;
  /** The document's ops (with what it took from op-log.jsonl when damaged). */
  readonly all: readonly StoredOp[];
  /** Every claim the document holds, a second one under an op-id included. */
  readonly claims: readonly StoredOp[];
  /** No chunk at all and no op-log.jsonl vouching for one, or a document that is no op log. */
  readonly noDocument: boolean;
  /** The change that made the document is not among the sound chunks (no op-log marker). */
  readonly rootLost: boolean;
}

async function inspect(paths: WorkspacePaths, url: string, documentId: string): Promise<Found> {
  const mirror = new OpLogFile(paths.opLog);
  const verified = mirror.writtenHeads(documentId) !== undefined;
  const derivedFrom = new Set(mirror.writtenChunks(documentId) ?? []);
  const fileOps = mirror.readTolerant();
  mirror.dispose();
  const found = { verified, derivedFrom, fileOps, damage: undefined, all: [], claims: [], rootLost: false };
  try {
    // Opened read-only, the document reports its damage and reads nothing else.
    const log = await AutomergeOpLog.open({
      directory: paths.storage,
      url,
      readOnly: true,
      readPending: false,
      mirror: new OpLogFile(paths.opLog),
    });
    // A sync that was refused may still have brought the original beside a forged copy; the log shows one.
    const doc = log.handle.doc();
    const held = { damage: log.damage, all: log.all(), claims: claimsOf(doc) };
    const rootLost = (doc as { kind?: unknown }).kind === undefined;
    await log.close();
    return { ...found, ...held, rootLost, noDocument: false };
  } catch {
    return { ...found, noDocument: true };
  }
}

/**
 * The remote's copy of the document, when its first change is lost here and a remote is given:
 * fetched before anything is changed (a failure then leaves every file as it was).
 */
async function remoteRoot(
  options: RepairOptions,
  found: Found,
): Promise<WorkspaceResult<{ document: Uint8Array; heads: string[] } | undefined>> {
  if (options.dryRun === true || !(found.rootLost || found.noDocument) || options.fetchDocument === undefined)
    return { ok: true, value: undefined };
  try {
    const document = await options.fetchDocument();
    if (document === undefined) return { ok: true, value: undefined };
    const remote = A.load<OpLogDocument>(document);
    const kind: unknown = remote.kind;
    const text = kind instanceof A.ImmutableString ? kind.val : kind;
    if (text !== OP_LOG_KIND) throw new Error("the remote's copy is not a Kumiki op log");
    return { ok: true, value: { document, heads: A.getHeads(remote) } };
  } catch (e) {
    return fail(
      "remote-unavailable",
      `the document's first change is lost and the remote's copy could not be fetched (${(e as Error).message}); nothing was changed: repair again once the remote can be reached, or repair offline to start a new history (which cannot sync with that remote again)`,
    );
  }
}

/** The remote's copy and its ops, to find ops in contest with it; undefined when it cannot be had. */
async function remoteToContest(
  options: RepairOptions,
  found: Found,
): Promise<{ bytes: Uint8Array; ops: Map<string, unknown> } | undefined> {
  if (found.rootLost || found.noDocument || options.fetchDocument === undefined) return undefined;
  try {
    const bytes = await options.fetchDocument();
    return bytes === undefined ? undefined : { bytes, ops: remoteOps(bytes) };
  } catch {
    // Unreachable: the local repair goes on, and the sync after it says why.
    return undefined;
  }
}

/**
 * Each damaged chunk: moved aside into `aside`, what of it is sound stored again as a new chunk
 * (a dry run only says what it would do).
 */
async function setAsideDamaged(
  found: Found,
  storage: DurableFSStorageAdapter,
  documentId: string,
  aside: string,
  dryRun: boolean,
): Promise<RepairedChunk[]> {
  const chunks: RepairedChunk[] = [];
  for (const c of found.damage?.chunks ?? []) {
    const file = c.path ?? storage.chunkFile(documentId, c.name);
    let data: Uint8Array = new Uint8Array(0);
    try {
      data = new Uint8Array(fs.readFileSync(file));
    } catch {
      // Gone since: nothing to keep.
    }
    const newer = !found.derivedFrom.has(c.name);
    const sound = walkChunks(data).sound;
    if (dryRun) {
      chunks.push({ name: c.name, reason: c.reason, salvagedBytes: sound.length, newerThanOpLog: newer });
      continue;
    }
    const movedTo = moveAside(file, aside, c.name);
    if (sound.length > 0) {
      const copy = new Uint8Array(sound);
      await storage.save([documentId, "incremental", createHash("sha256").update(copy).digest("hex")], copy);
    }
    chunks.push({
      name: c.name,
      reason: c.reason,
      movedTo,
      salvagedBytes: sound.length,
      newerThanOpLog: newer,
    });
  }
  return chunks;
}

/**
 * The document opened again from its sound chunks (and the remote's copy beside them); when it
 * no longer opens (its first change is gone, or every chunk), it is given a new first change.
 */
async function reopenDocument(
  paths: WorkspacePaths,
  url: string,
  documentId: string,
  lock: FileLock,
  storage: DurableFSStorageAdapter,
  remote: { document: Uint8Array; heads: string[] } | undefined,
): Promise<{ log: AutomergeOpLog; newHistory: boolean }> {
  const open = () =>
    AutomergeOpLog.open({
      directory: paths.storage,
      url,
      lock,
      acceptLostChanges: true,
      mirror: new OpLogFile(paths.opLog),
    });
  // The remote's history, beside the sound chunks: they depended on its first change.
  if (remote !== undefined)
    await storage.save([documentId, "snapshot", snapshotName(remote.heads)], remote.document);
  try {
    return { log: await open(), newHistory: false };
  } catch (e) {
    if (!(e instanceof OpLogOpenError) || e.code === "store-unsupported") throw e;
    const root = A.change(A.init<OpLogDocument>(), (d) => {
      d.kind = new A.ImmutableString(OP_LOG_KIND);
      d.format = OP_LOG_FORMAT;
      d.chunks = [];
    });
    await storage.save([documentId, "snapshot", snapshotName(A.getHeads(root))], A.save(root));
    return { log: await open(), newHistory: true };
  }
}

/**
 * Writes back what the document lacks: the ops op-log.jsonl holds (`missing`), less those the
 * remote's copy or chunks that show again brought. Returns how many came from each.
 */
async function takeBack(
  log: AutomergeOpLog,
  held: ReadonlySet<string>,
  missing: readonly StoredOp[],
  remote: boolean,
): Promise<{ fromRemote: number; fromOpLog: number }> {
  const heldNow = new Set(log.all().map((o) => o["op-id"]));
  let fromRemote = 0;
  if (remote) for (const id of heldNow) if (!held.has(id)) fromRemote++;
  try {
    if (!remote) {
      if (missing.length > 0) await log.append(missing);
      return { fromRemote, fromOpLog: missing.length };
    }
    // Only what neither the remote nor the chunks that show again hold.
    const take = missing.filter((o) => !heldNow.has(o["op-id"]));
    return { fromRemote, fromOpLog: take.length === 0 ? 0 : (await log.append(take)).length };
  } finally {
    await log.close();
  }
}

async function repairLocked(
  paths: WorkspacePaths,
  url: string,
  documentId: string,
  lock: FileLock,
  options: RepairOptions,
): Promise<WorkspaceResult<RepairReport>> {
  const dryRun = options.dryRun === true;
  const found = await inspect(paths, url, documentId);
  const { verified, fileOps, damage, all, noDocument } = found;
  const before = all.length - (damage?.fromOpLog ?? 0);
  // Unreadable lines, changed since kumiki wrote it, or gone: written again from the document.
  const opLogDamaged = fileOps.unreadable > 0 || !verified;
  let chunks: RepairedChunk[] = [];
  const stamp = (options.now ?? new Date()).toISOString().replaceAll(":", "-");
  const aside = path.join(paths.dir, "damaged", stamp);
  // Ops the file holds that the document lacks: taken back when the file is verified, or when the
  // document is known to be missing pieces (then the file is the only copy a local repair has).
  const held = new Set(all.slice(0, before).map((o) => o["op-id"]));
  const takeFromFile = verified || damage !== undefined || noDocument;
  const missing = takeFromFile ? fileOps.ops.filter((o) => !held.has(o["op-id"])) : [];
  // Writes that waited beside the document: the reopened document folds them in (a read-only
  // inspection does not read them, so `all` is the document's and op-log.jsonl's alone).
  const taking = new Set([...held, ...missing.map((o) => o["op-id"])]);
  const pendingIds = new Set<string>();
  for (const bundle of new PendingBundles(paths.storage).read())
    for (const op of bundle.ops) if (!taking.has(op["op-id"])) pendingIds.add(op["op-id"]);
  let contested: ContestedReport | undefined;
  const report = (
    repaired: boolean,
    newHistory: boolean,
    movedOpLog?: string,
    counts: { fromRemote: number; fromOpLog: number; root: boolean } = {
      fromRemote: 0,
      fromOpLog: missing.length,
      root: false,
    },
    fromPending = pendingIds.size,
  ): RepairReport => ({
    damaged: damage !== undefined || noDocument || opLogDamaged || (contested?.ops.length ?? 0) > 0,
    repaired,
    chunks,
    lostChanges: damage?.lostChanges ?? [],
    opLog: {
      ops: fileOps.ops.length,
      unreadableLines: fileOps.unreadable,
      verified,
      ...(movedOpLog === undefined ? {} : { movedTo: movedOpLog }),
    },
    before,
    fromRemote: counts.fromRemote,
    fromOpLog: counts.fromOpLog,
    fromPending,
    after: before + counts.fromRemote + counts.fromOpLog + fromPending,
    newHistory,
    rootFromRemote: counts.root,
    acknowledged: verified ? "all" : "unknown",
    ...(contested === undefined ? {} : { contested }),
  });
  const remote = await remoteRoot(options, found);
  if (!remote.ok) return remote;
  // Ops in contest with the remote's copy (a forged or stale op taken before the original).
  const theirs = await remoteToContest(options, found);
  if (theirs !== undefined) {
    // The document's claims, and what op-log.jsonl gave back beside them (a damaged document).
    const mine = [...found.claims, ...all];
    const ops = contestedOps(mine, theirs.ops);
    contested = { ops, kept: 0 };
    if (ops.length > 0) {
      if (dryRun) return { ok: true, value: report(false, false) };
      contested = await takeUpRemote(paths, url, lock, all, mine, theirs, ops, aside);
      ignoreDamagedFolder(paths);
      const value = report(true, false, undefined, { fromRemote: 0, fromOpLog: 0, root: false });
      return { ok: true, value: { ...value, after: theirs.ops.size + contested.kept } };
    }
  }
  const storage = new DurableFSStorageAdapter(paths.storage, { lock });
  try {
    chunks = await setAsideDamaged(found, storage, documentId, aside, dryRun);
    if (dryRun || report(false, false).damaged === false) return { ok: true, value: report(false, false) };
    // A damaged op-log.jsonl is kept aside; the log writes it again in full on close.
    const movedOpLog =
      opLogDamaged && fs.existsSync(paths.opLog) ? moveAside(paths.opLog, aside, "op-log.jsonl") : undefined;
    const { log, newHistory } = await reopenDocument(paths, url, documentId, lock, storage, remote.value);
    storage.dispose();
    const taken = await takeBack(log, new Set([...held, ...pendingIds]), missing, remote.value !== undefined);
    ignoreDamagedFolder(paths);
    const counts = { ...taken, root: remote.value !== undefined && !newHistory };
    return { ok: true, value: report(true, newHistory, movedOpLog, counts) };
  } finally {
    storage.dispose();
  }
}

/** Keeps `.kumiki/damaged/` out of git: what was moved aside is evidence, not state. */
function ignoreDamagedFolder(paths: WorkspacePaths): void {
  ignoreInGit(paths, "damaged/");
}
