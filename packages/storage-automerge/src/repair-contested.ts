/**
 * A workspace poisoned by a contested op: it holds an op under an op-id that its remote holds with
 * other content (a forged op taken through `patch apply`, a stale copy of an op rewritten since).
 * An op-id names exactly one op, so the server refuses every push that carries the workspace's
 * copy, and since every later change of the document depends on it, the workspace could never
 * push its honest ops again.
 *
 * The repair takes up the remote's copy of the document and appends to it the workspace's own ops
 * the remote lacks, but the contested ones: those are written to
 * `.kumiki/damaged/<time>/contested-ops.jsonl` (nothing the workspace held is lost), and the old
 * document's files and op-log.jsonl are moved beside them. The sync that follows pushes the rest.
 */
import fs from "node:fs";
import path from "node:path";
import * as A from "@automerge/automerge";
import { makeDirs, opContentHash, type StoredOp, writeFileAtomic } from "@kumiki-graph/core";
import { AutomergeOpLog } from "./automerge-op-log.js";
import { eachOp } from "./change-check.js";
import { snapshotName } from "./chunk-check.js";
import type { FileLock } from "./file-lock.js";
import { DurableFSStorageAdapter } from "./fs-storage.js";
import { OP_LOG_KIND, type OpLogDocument } from "./op-log-document.js";
import { OpLogFile } from "./op-log-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

/** An op the workspace holds under an op-id its remote holds with other content. */
export interface ContestedOp {
  readonly opId: string;
  /** The content hash of the workspace's op, and of the remote's. */
  readonly local: string;
  readonly remote: string;
}

/** What the repair found against the remote, and did. */
export interface ContestedReport {
  /** The ops in contest (none: the workspace and the remote agree on every op-id they share). */
  readonly ops: readonly ContestedOp[];
  /** Where the workspace's copies were written (absent on a dry run or when there were none). */
  readonly movedTo?: string;
  /** The workspace's own ops appended to the remote's copy (the sync pushes them). */
  readonly kept: number;
}

/** Every op an op-log document holds, in order: every claim, a second one under an op-id too. */
export function claimsOf(doc: A.Doc<unknown>): StoredOp[] {
  const out: StoredOp[] = [];
  eachOp(doc, (_id, op) => out.push(op as StoredOp));
  return out;
}

/** The remote's ops by op-id (its first claim of each); throws when the bytes are not a Kumiki op log. */
export function remoteOps(bytes: Uint8Array): Map<string, unknown> {
  const doc = A.load<OpLogDocument>(bytes);
  const kind: unknown = doc.kind;
  if ((kind instanceof A.ImmutableString ? kind.val : kind) !== OP_LOG_KIND)
    throw new Error("the remote's copy is not a Kumiki op log");
  const out = new Map<string, unknown>();
  for (const op of claimsOf(doc)) if (!out.has(op["op-id"])) out.set(op["op-id"], op);
  return out;
}

/** The claims of `local` under op-ids `remote` holds with other content (each op-id once). */
export function contestedOps(
  local: readonly StoredOp[],
  remote: ReadonlyMap<string, unknown>,
): ContestedOp[] {
  const out = new Map<string, ContestedOp>();
  for (const op of local) {
    const theirs = remote.get(op["op-id"]);
    if (theirs === undefined || out.has(op["op-id"])) continue;
    const mine = opContentHash(op);
    const other = opContentHash(theirs);
    if (mine !== other) out.set(op["op-id"], { opId: op["op-id"], local: mine, remote: other });
  }
  return [...out.values()];
}

/**
 * Rebuilds the document from the remote's copy plus `local`'s ops the remote lacks, the contested
 * ones written aside (see the module comment). Runs under the workspace's lock (`lock`).
 */
export async function takeUpRemote(
  paths: WorkspacePaths,
  url: string,
  lock: FileLock,
  local: readonly StoredOp[],
  claims: readonly StoredOp[],
  remote: { readonly bytes: Uint8Array; readonly ops: ReadonlyMap<string, unknown> },
  contested: readonly ContestedOp[],
  aside: string,
): Promise<ContestedReport> {
  const documentId = url.slice("automerge:".length);
  const out = new Set(contested.map((c) => c.opId));
  makeDirs(aside);
  const movedTo = path.join(aside, "contested-ops.jsonl");
  // Every claim the remote does not hold as it is: the workspace's copies of the contested ops,
  // durable before the document they come from is moved aside (it was written without an fsync).
  writeFileAtomic(
    movedTo,
    claims
      .filter(
        (o) =>
          out.has(o["op-id"]) && opContentHash(o) !== contested.find((c) => c.opId === o["op-id"])?.remote,
      )
      .map((o) => `${JSON.stringify(o)}\n`)
      .join(""),
  );
  // The old document (its chunks and sync states) and its mirror, beside them: evidence, not state.
  const storage = new DurableFSStorageAdapter(paths.storage, { lock });
  const folder = path.dirname(path.dirname(storage.chunkFile(documentId, "snapshot/x")));
  if (fs.existsSync(folder)) fs.renameSync(folder, path.join(aside, "document"));
  for (const f of [paths.opLog, `${paths.opLog}.state`])
    if (fs.existsSync(f)) fs.renameSync(f, path.join(aside, path.basename(f)));
  try {
    await storage.save(
      [documentId, "snapshot", snapshotName(A.getHeads(A.load(remote.bytes)))],
      remote.bytes,
    );
  } finally {
    storage.dispose();
  }
  const log = await AutomergeOpLog.open({
    directory: paths.storage,
    url,
    lock,
    mirror: new OpLogFile(paths.opLog),
  });
  let kept = 0;
  try {
    const take = local.filter((o) => !out.has(o["op-id"]) && !remote.ops.has(o["op-id"]));
    if (take.length > 0) kept = (await log.append(take)).length;
  } finally {
    await log.close();
  }
  return { ops: contested, movedTo, kept };
}
