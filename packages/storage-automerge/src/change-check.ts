/**
 * What a sync server accepts into a graph document: a peer's Automerge changes are decoded and
 * every operation in them checked against the op log's layout (core's `OpLogDocument`) before the
 * Repo sees them. Accepted: the document's creation (root `kind`, `format`, `chunks`, once, when the
 * server does not hold the graph), a new chunk list inserted into `chunks`, and a bundle string
 * inserted into a chunk list whose ops all pass the op schema (`parseOp`). Anything else (a deletion,
 * an overwrite, a write outside the op log, a malformed op) refuses the whole message.
 *
 * Each change is checked on its own, so a change whose dependencies have not arrived yet is still
 * checked now; only the ids of chunk lists come from the document or from earlier changes.
 */
import * as A from "@automerge/automerge";
import { opContentHash, parseOp } from "@kumiki-graph/core";
import { decodeInsertChange } from "./change-decoder.js";
import { chunkFrameAt } from "./chunk-framing.js";
import { OP_LOG_FORMAT, OP_LOG_KIND } from "./op-log-document.js";

/**
 * What the checker knows of one graph document: the ids of its `chunks` list and chunk lists, and
 * every op it holds, by op-id, with its content hash (an op-id names one op: another op under a
 * held op-id is forged or corrupted, and refused).
 */
export interface DocumentShape {
  /** `chunks`' object id; undefined while the document does not exist here. */
  chunks: string | undefined;
  /** Object ids of the chunk lists. */
  readonly lists: Set<string>;
  /**
   * op-id → the content of every op held or accepted: its {@link opContentHash}; or a function
   * working it out (and keeping it) for an op accepted since the shape was read; or `null` for an
   * op held when the shape was read, whose hash {@link DocumentShape.heldHash} works out. A hash is
   * needed only when an op-id comes again, which most pushes never do: hashing every new op took
   * 8 ms per 1,000 on the server.
   */
  readonly ops: Map<string, OpClaim>;
  /** The content hash of an op held when the shape was read (undefined: none under that op-id). */
  readonly heldHash: (opId: string) => string | undefined;
}

/** What a {@link DocumentShape} knows of the op under an op-id (see {@link DocumentShape.ops}). */
export type OpClaim = string | null | (() => string);

/** A claim whose hash is worked out when first asked for, then kept (the op is held till then). */
function lazyHash(op: unknown): () => string {
  let hash: string | undefined;
  return () => {
    hash ??= opContentHash(op);
    return hash;
  };
}

/**
 * Every op of an op log document, in order, as its bundles hold them (every claim: a document
 * holds one per op-id unless a forged or stale copy came beside the original).
 */
export function eachOp(doc: A.Doc<unknown>, visit: (opId: string, op: unknown) => void): void {
  const chunks = (doc as { chunks?: unknown }).chunks;
  if (!Array.isArray(chunks)) return;
  for (const list of chunks) {
    if (!Array.isArray(list)) continue;
    for (const bundle of list) {
      const text =
        bundle instanceof A.ImmutableString ? bundle.val : typeof bundle === "string" ? bundle : "";
      let ops: unknown;
      try {
        ops = JSON.parse(text);
      } catch {
        continue;
      }
      for (const op of Array.isArray(ops) ? ops : []) {
        const opId = (op as { "op-id"?: unknown } | null)?.["op-id"];
        if (typeof opId === "string") visit(opId, op);
      }
    }
  }
}

/**
 * The shape of a document as held (an empty or absent one has no `chunks`). The held ops' content
 * hashes are worked out only when a new op comes under a held op-id (all at once, then kept): most
 * pushes bring none, and hashing every op of a 10,000-op graph took about 100 ms at each first push
 * after a load or a merge from another server.
 */
export function shapeOf(doc: A.Doc<unknown> | undefined): DocumentShape {
  let hashes: Map<string, string> | undefined;
  const heldHash = (opId: string): string | undefined => {
    if (doc === undefined) return undefined;
    if (hashes === undefined) {
      const all = new Map<string, string>();
      eachOp(doc, (id, op) => {
        // A server's document has one claim per op-id: it refuses a second (docs/semantics.md).
        if (!all.has(id)) all.set(id, opContentHash(op));
      });
      hashes = all;
    }
    return hashes.get(opId);
  };
  const shape: DocumentShape = { chunks: undefined, lists: new Set(), ops: new Map(), heldHash };
  if (doc === undefined) return shape;
  const chunks = (doc as { chunks?: unknown }).chunks;
  if (!Array.isArray(chunks)) return shape;
  shape.chunks = A.getObjectId(chunks) ?? undefined;
  for (const list of chunks) {
    const id = Array.isArray(list) ? A.getObjectId(list) : null;
    if (id) shape.lists.add(id);
  }
  eachOp(doc, (id) => {
    if (!shape.ops.has(id)) shape.ops.set(id, null);
  });
  return shape;
}

/** Splits concatenated Automerge chunks (a sync message's change entries may hold several). */
export function splitChunks(bytes: Uint8Array): { type: number; bytes: Uint8Array }[] | string {
  const out: { type: number; bytes: Uint8Array }[] = [];
  for (let at = 0; at < bytes.length; ) {
    const frame = chunkFrameAt(bytes, at);
    if (typeof frame === "string") return frame;
    out.push({ type: frame.type, bytes: bytes.subarray(at, frame.end) });
    at = frame.end;
  }
  return out;
}

/**
 * Decodes a sync message's change entries into changes (a document chunk holds many). With `held`
 * (the document as the receiver holds it), a document chunk yields only the changes that are not
 * ancestors of heads `held` shares with it: what `held` lacks, and no more to decode and check. A
 * peer sends a whole document when the receiver lacks much of it, so it usually holds a prefix.
 */
export function decodeChanges(
  entries: readonly Uint8Array[],
  held?: A.Doc<unknown>,
): A.DecodedChange[] | string {
  const out: A.DecodedChange[] = [];
  for (const entry of entries) {
    const chunks = splitChunks(entry);
    if (typeof chunks === "string") return chunks;
    for (const c of chunks) {
      try {
        if (c.type === 0) {
          const doc = A.load(c.bytes);
          const shared = held === undefined ? [] : A.getHeads(held).filter((h) => A.hasHeads(doc, [h]));
          for (const ch of A.getChangesSince(doc, shared)) out.push(decodeChange(ch));
        } else out.push(decodeChange(c.bytes));
      } catch (e) {
        return `undecodable change: ${(e as Error).message}`;
      }
    }
  }
  return out;
}

/** A change decoded: by change-decoder.ts when it is a list insertion (5 µs a change against 14), else by Automerge. */
function decodeChange(bytes: Uint8Array): A.DecodedChange {
  return decodeInsertChange(bytes) ?? A.decodeChange(bytes);
}

/** Content hashes of ops by op-id, as {@link checkBundle} reads and extends them. */
export type OpHashes = Pick<Map<string, string>, "get" | "set">;

/**
 * Why a bundle string is refused, or undefined when every op in it passes the op schema and names
 * by its op-id no op other than the one `held` (op-id → content hash) has under it. Accepted ops
 * are added to `held`.
 */
export function checkBundle(text: string, held: OpHashes = new Map()): string | undefined {
  return screenBundle(
    text,
    {
      has: (id) => held.get(id) !== undefined,
      hashOf: (id) => held.get(id),
      accept: (id, op) => held.set(id, opContentHash(op)),
    },
    {},
  );
}

/** What {@link screenBundle} asks of the ops held or accepted before a bundle. */
interface HeldOps {
  has(opId: string): boolean;
  /** The content hash of the op under `opId` (asked only when {@link has} says there is one). */
  hashOf(opId: string): string | undefined;
  /** Records a new op (by its content, hashed only if its op-id comes again). */
  accept(opId: string, op: unknown): void;
}

/**
 * {@link checkBundle} against held ops that are hashed on demand: a new op is hashed only when
 * its op-id is held already or comes twice in the bundle.
 */
function screenBundle(text: string, held: HeldOps, options: ChangeCheckOptions): string | undefined {
  const refuseAuthor = options.refuseAuthor;
  const max = options.maxBundleBytes;
  // A string's UTF-8 size is at most 3 bytes per UTF-16 unit: counted only when it could be over.
  if (max !== undefined && text.length * 3 > max) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > max)
      return `a bundle of ${bytes.toLocaleString("en")} bytes, over this server's limit of ${max.toLocaleString("en")} bytes per change (write it in smaller parts, or ask the operator to raise --max-change)`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return `a bundle that is not JSON (${(e as Error).message})`;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return "a bundle that is not a non-empty list of ops";
  const mine = new Map<string, unknown>();
  for (const op of parsed) {
    const r = parseOp(op);
    if (!r.ok) {
      const id = (op as { "op-id"?: unknown } | null)?.["op-id"];
      return `op ${typeof id === "string" ? id : "(no op-id)"} fails the op schema: ${r.error.message}`;
    }
    const id = r.op["op-id"];
    const known = mine.has(id) ? opContentHash(mine.get(id)) : held.has(id) ? held.hashOf(id) : undefined;
    if (known !== undefined && known !== opContentHash(op))
      return `op ${id} is already held with other content: an op-id names exactly one op (forged or corrupted)`;
    // Only a new op is the pusher's to answer for: one held already came from its author's push.
    if (known === undefined && refuseAuthor !== undefined) {
      const author = (r.op as { author?: unknown }).author;
      const why = refuseAuthor(typeof author === "string" ? author : "");
      if (why !== undefined) return `op ${id}: ${why}`;
    }
    if (!mine.has(id)) mine.set(id, op);
  }
  for (const [id, op] of mine) if (!held.has(id)) held.accept(id, op);
  return undefined;
}

/** What {@link checkChanges} holds a peer's changes to besides the op log's layout. */
export interface ChangeCheckOptions {
  /** Why a new op's author may not be pushed by this peer (its token binds the authors), or undefined. */
  readonly refuseAuthor?: (author: string) => string | undefined;
  /** The largest bundle (one write's ops, as JSON) a change may insert, in UTF-8 bytes; default: any. */
  readonly maxBundleBytes?: number;
  /**
   * Whether the receiver holds the change `hash` (or accepted it, not applied yet). A change with a
   * dependency it lacks (and that no earlier change of the call brings) may insert bundles into a
   * chunk list it does not know yet: Automerge's sync sends a change before one it depends on when
   * its Bloom filter errs (about 1 % of the time), and Automerge holds such a change back until its
   * dependencies come. Its bundles are judged now; the list by the change that makes it (every
   * object a checked change may make is a chunk list). Such a change is returned in `early`: until
   * Automerge applies it, a change that depends on it is one of them too (answer false for it).
   * Default: every dependency is held, and an object outside `shape` is refused.
   */
  readonly known?: (hash: string) => boolean;
}

/**
 * Checks decoded changes against `shape`; on success returns the shape they lead to (a new
 * object, `shape` untouched) and the changes judged before a dependency came (see
 * {@link ChangeCheckOptions.known}), on refusal the reason.
 */
export function checkChanges(
  shape: DocumentShape,
  changes: readonly A.DecodedChange[],
  options: ChangeCheckOptions = {},
): { ok: true; shape: DocumentShape; early: readonly string[] } | { ok: false; reason: string } {
  // New ops go into a layer over the held ones, merged into `shape` only if every change passes.
  const ops = new Map<string, OpClaim>();
  const held: HeldOps = {
    has: (id) => ops.has(id) || shape.ops.has(id),
    hashOf: (id) => {
      const claim = ops.has(id) ? ops.get(id) : shape.ops.get(id);
      if (typeof claim === "function") return claim();
      return claim === null ? shape.heldHash(id) : claim;
    },
    accept: (id, op) => ops.set(id, lazyHash(op)),
  };
  const next: DocumentShape = {
    chunks: shape.chunks,
    lists: new Set(shape.lists),
    ops,
    heldHash: shape.heldHash,
  };
  const creating = shape.chunks === undefined;
  const rootKeys = new Set<string>();
  /** The changes checked so far in this call, not held back: a later one may depend on them. */
  const before = new Set<string>();
  const heldBack: string[] = [];
  const known = options.known;
  for (const change of changes) {
    const where = `change ${change.hash.slice(0, 12)}`;
    // Held back by Automerge until a dependency comes: it may name a chunk list that one makes.
    const early = known !== undefined && change.deps.some((d) => !before.has(d) && !known(d));
    // A change held back makes its dependents held back too (their objects may be its).
    if (early) heldBack.push(change.hash);
    else before.add(change.hash);
    for (let i = 0; i < change.ops.length; i++) {
      const op = change.ops[i] as A.DecodedChange["ops"][number] & { insert?: boolean; elemId?: string };
      const opId = `${change.startOp + i}@${change.actor}`;
      const refuse = (why: string) => ({ ok: false as const, reason: `${where}: ${why}` });
      if (op.obj === "_root") {
        if (!creating || op.pred.length > 0 || rootKeys.has(op.key))
          return refuse(`rewrites the document's root (${op.action} ${op.key}); the op log only grows`);
        rootKeys.add(op.key);
        if (op.key === "chunks" && op.action === "makeList") next.chunks = opId;
        else if (op.key === "kind" && op.action === "set" && op.value === OP_LOG_KIND) continue;
        else if (
          op.key === "format" &&
          op.action === "set" &&
          typeof op.value === "number" &&
          Number.isInteger(op.value) &&
          op.value >= 1 &&
          op.value <= OP_LOG_FORMAT
        )
          continue;
        else return refuse(`creates a document that is not a Kumiki op log (${op.action} ${op.key})`);
        continue;
      }
      if (op.obj === next.chunks) {
        if (op.action !== "makeList" || op.insert !== true)
          return refuse(`${op.action} in the chunk list; only new chunk lists may be inserted`);
        next.lists.add(opId);
        continue;
      }
      if (next.lists.has(op.obj) || early) {
        if (
          op.action !== "set" ||
          op.insert !== true ||
          typeof op.value !== "string" ||
          op.datatype !== undefined
        )
          return refuse(`${op.action} in a chunk; only bundle strings may be inserted`);
        const why = screenBundle(op.value, held, options);
        if (why !== undefined) return refuse(why);
        continue;
      }
      return refuse(`${op.action} on an object outside the op log (${op.obj})`);
    }
  }
  if (creating && next.chunks !== undefined && !(rootKeys.has("kind") && rootKeys.has("format")))
    return { ok: false, reason: "creates a document without the op log's kind and format" };
  return { ok: true, shape: next, early: heldBack };
}
