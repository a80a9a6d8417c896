/**
 * The layout of a graph's Automerge document (format 1; repo-op-log.ts has the reasons):
 * `kind` and `format` at the root, and `chunks`, lists of bundles, each bundle the JSON text of
 * one append's ops. What reads and writes that layout without holding a log: the constants, the
 * push of one bundle, and the walk over every op the document stores.
 */
import * as A from "@automerge/automerge";
import type { StoredOp } from "@kumiki-graph/core";

/** The document's `kind` marker. */
export const OP_LOG_KIND = "kumiki-op-log";
/** The layout version this code writes and reads. */
export const OP_LOG_FORMAT = 1;
/** Bundles per inner list (see the module comment). */
export const CHUNK_SIZE = 512;

/** The Automerge document of a graph: a grow-only set of ops (see the module comment). */
export interface OpLogDocument {
  kind: A.ImmutableString;
  format: number;
  /** Lists of bundles; each bundle is the JSON array of one append's ops. */
  chunks: A.ImmutableString[][];
}

/** The value of a new, empty graph document (what `Repo.create` is given to make one). */
export function emptyOpLogDocument(): OpLogDocument {
  return { kind: new A.ImmutableString(OP_LOG_KIND), format: OP_LOG_FORMAT, chunks: [] };
}

/** An entry of the document that is not a valid bundle: kept out of {@link AutomergeOpLog.all}, reported here. */
export interface InvalidEntry {
  /** Where it is: `[chunk, bundle]`, with the op's index in the bundle when one op is at fault. */
  readonly at: readonly number[];
  readonly reason: string;
  /** The op-id, for an op that reuses a held op-id with other content (`op-id-reused`). */
  readonly opId?: string;
}

/**
 * Adds one bundle to the document inside a change: the whole of an append, as one Automerge change
 * (exported so benchmarks build histories exactly as appends do).
 */
export function pushBundle(d: OpLogDocument, ops: readonly StoredOp[], chunkSize = CHUNK_SIZE): void {
  const text = new A.ImmutableString(JSON.stringify(ops));
  const last = d.chunks[d.chunks.length - 1];
  if (last !== undefined && last.length < chunkSize) last.push(text);
  else d.chunks.push([text]);
}

/** A bundle's JSON text (an ImmutableString, or a plain string a peer may have written). */
export function bundleText(v: unknown): string | undefined {
  if (v instanceof A.ImmutableString) return v.val;
  if (typeof v === "string") return v;
  return undefined;
}

export function reuseReason(opId: string): string {
  return `op ${opId} reuses a held op-id with other content (forged or corrupted); kept: the causally first claim (of concurrent ones, the lowest content hash)`;
}

/**
 * The ops of one bundle's JSON text, with their index in it: the JSON objects with a non-empty
 * string "op-id" (what the log holds; anything else in a bundle is reported by the log, not here).
 */
export function bundleOps(text: string): { readonly op: StoredOp; readonly index: number }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const list: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  const out: { op: StoredOp; index: number }[] = [];
  list.forEach((op, index) => {
    if (typeof op !== "object" || op === null || Array.isArray(op)) return;
    const id = (op as { "op-id"?: unknown })["op-id"];
    if (typeof id === "string" && id !== "") out.push({ op: op as StoredOp, index });
  });
  return out;
}

/** Calls `fn` with every op of the document's bundles (JSON objects with a non-empty string "op-id") and its `[chunk, bundle, op]` position. */
export function forEachStoredOp(doc: A.Doc<OpLogDocument>, fn: (op: StoredOp, at: number[]) => void): void {
  const chunks: unknown = doc.chunks;
  if (!Array.isArray(chunks)) return;
  chunks.forEach((chunk: unknown, c) => {
    if (!Array.isArray(chunk)) return;
    chunk.forEach((b: unknown, i) => {
      const text = bundleText(b);
      if (text !== undefined) for (const { op, index } of bundleOps(text)) fn(op, [c, i, index]);
    });
  });
}
