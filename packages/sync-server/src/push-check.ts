/**
 * What the server checks of a pushed sync message before automerge-repo applies it: the changes
 * decode, only those new to the graph are judged, each fits the graph's document shape
 * (ShapeCache) and the size limit, and every op in them is by an author the token may push as.
 */
import * as A from "@automerge/automerge";
import type { DocHandle } from "@automerge/automerge-repo";
import { checkChanges, decodeChanges } from "@kumiki-graph/storage-automerge";
import { bundleOpIds } from "./bundle-op-ids.js";
import type { CheckVerdict } from "./server-adapter.js";
import type { ShapeCache } from "./shape-cache.js";
import { type Grant, mayAuthor } from "./tokens.js";

/** What a {@link PushCheck} needs of the server. */
export interface PushCheckOptions {
  /** The graph's handle, loaded (or found unavailable) first. */
  readonly handleOf: (documentId: string) => Promise<DocHandle<unknown>>;
  readonly shapes: ShapeCache;
  /** The largest bundle of ops one change may carry, in bytes. */
  readonly maxChangeBytes: number;
}

/** Forgets accepted hashes the document holds once this many are kept for one graph. */
const ACCEPTED_SWEEP = 10_000;

/** The check of pushed changes, one per server (it remembers what it accepted, per graph). */
export class PushCheck {
  /** Change hashes accepted per graph and maybe not applied yet. */
  private readonly accepted = new Map<string, Set<string>>();
  /** Of those, per graph, the ones accepted before a change they depend on came (see checkChanges' `known`). */
  private readonly early = new Map<string, Set<string>>();
  /**
   * Per graph, the ops an early change brought first (op-id → that change's hash). Automerge holds
   * such a change back until its dependency comes, and when that one is refused (a forged op it
   * builds on) it never applies: the shape claims ops the document will never hold. A later change
   * that brings one again (the repair's) counts it as new while the early change is still not
   * applied, so the push's count says what it put on the server.
   */
  private readonly waiting = new Map<string, Map<string, string>>();

  constructor(private readonly options: PushCheckOptions) {}

  /** The verdict on `entries` (a sync message's changes) pushed to `documentId` under `grant`. */
  async check(documentId: string, entries: readonly Uint8Array[], grant: Grant): Promise<CheckVerdict> {
    const handle = await this.options.handleOf(documentId);
    const doc = handle.isReady() ? (handle.doc() as A.Doc<unknown>) : undefined;
    const decoded = decodeChanges(entries, doc);
    if (typeof decoded === "string") return { ok: false, reason: decoded };
    const shape = this.options.shapes.shape(documentId, doc);
    // Changes the server holds or accepted already (sent again: a reconnect, a reply that
    // crossed) were checked when they first came.
    const seen = this.accepted.get(documentId) ?? new Set<string>();
    this.accepted.set(documentId, seen);
    const early = this.early.get(documentId) ?? new Set<string>();
    this.early.set(documentId, early);
    const fresh: typeof decoded = [];
    for (const c of decoded) {
      if (seen.has(c.hash) || (doc !== undefined && A.hasHeads(doc, [c.hash]))) continue;
      seen.add(c.hash);
      fresh.push(c);
    }
    const authors = grant.authors;
    const r = checkChanges(shape, fresh, {
      maxBundleBytes: this.options.maxChangeBytes,
      // A change that came before one it depends on (the sync's Bloom filter erred) is judged by
      // what it inserts; Automerge applies it once that one comes, and checks it then.
      known: (h) => (doc !== undefined && A.hasHeads(doc, [h])) || (seen.has(h) && !early.has(h)),
      ...(authors === undefined
        ? {}
        : {
            refuseAuthor: (author: string) =>
              mayAuthor(authors, author)
                ? undefined
                : `authored ${JSON.stringify(author)}, but the token ${JSON.stringify(grant.name)} may push ops only by ${authors.join(", ")} (its "authors" in the token file)`,
          }),
    });
    if (!r.ok) {
      for (const c of fresh) seen.delete(c.hash);
      return { ok: false, reason: r.reason };
    }
    for (const h of r.early) early.add(h);
    // Before `accept`: which ops the shape claimed already.
    const broughtAgain = this.broughtAgain(documentId, doc, shape.ops, fresh, r.early);
    if (seen.size > ACCEPTED_SWEEP && doc !== undefined)
      for (const h of seen)
        if (A.hasHeads(doc, [h])) {
          seen.delete(h);
          early.delete(h);
        }
    const newOps = this.options.shapes.accept(
      documentId,
      r.shape,
      fresh.map((c) => c.hash),
    );
    return { ok: true, newOps: newOps + broughtAgain };
  }

  /**
   * Notes the ops `fresh`'s early changes bring first (see {@link waiting}), and returns how many
   * ops its other changes bring that only a still unapplied early change had brought. Decodes
   * bundles only while an early change is in play (the Bloom filter's rare error).
   */
  private broughtAgain(
    documentId: string,
    doc: A.Doc<unknown> | undefined,
    claimed: ReadonlyMap<string, unknown>,
    fresh: readonly A.DecodedChange[],
    earlyHashes: readonly string[],
  ): number {
    let waiting = this.waiting.get(documentId);
    // An early change applied since (its dependency came, as after most Bloom-filter errors) brought
    // its ops for good: forgotten, so that pushes stop being decoded for them.
    if (waiting !== undefined && doc !== undefined)
      for (const [id, h] of waiting) if (A.hasHeads(doc, [h])) waiting.delete(id);
    if (earlyHashes.length === 0 && (waiting === undefined || waiting.size === 0)) return 0;
    if (waiting === undefined) {
      waiting = new Map();
      this.waiting.set(documentId, waiting);
    }
    const isEarly = new Set(earlyHashes);
    let n = 0;
    for (const c of fresh) {
      const ids = bundleOpIds(c);
      if (isEarly.has(c.hash)) {
        for (const id of ids) if (!claimed.has(id)) waiting.set(id, c.hash);
        continue;
      }
      for (const id of ids) {
        const by = waiting.get(id);
        if (by === undefined) continue;
        waiting.delete(id);
        if (doc === undefined || !A.hasHeads(doc, [by])) n++;
      }
    }
    return n;
  }
}
