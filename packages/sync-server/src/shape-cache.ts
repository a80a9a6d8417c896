/**
 * The sync server's record of each graph's shape (storage-automerge's `DocumentShape`: its chunk
 * lists and the op-ids it holds), which a peer's changes are checked against before they are
 * taken (`checkChanges`). Read from the document once, then kept up to date with every change
 * this server accepts — accepted changes reach the document a little later, when the Repo applies
 * them, so the shape is ahead of the document in between.
 *
 * A document also takes changes that never come through the check: another server's, from the
 * shared database; the server's own writes (MCP over HTTP); its load from storage when it was not
 * ready at the first push. Whenever the document holds a head the shape does not account for, the
 * shape is read from the document again and what was accepted and not applied yet is kept. (It was
 * dropped and read afresh, which lost the accepted part: a peer's push into a chunk list its
 * previous push had just made was refused as "outside the op log".)
 */
import * as A from "@automerge/automerge";
import { type DocumentShape, shapeOf } from "@kumiki-graph/storage-automerge";

export class ShapeCache {
  private readonly shapes = new Map<string, DocumentShape>();
  /** Per graph, the changes its shape accounts for: the heads it was read at and every change accepted since. */
  private readonly known = new Map<string, Set<string>>();

  /** The shape of `documentId` to check changes against, given its document as it is now. */
  shape(documentId: string, doc: A.Doc<unknown> | undefined): DocumentShape {
    const cached = this.shapes.get(documentId);
    const heads = doc === undefined ? [] : A.getHeads(doc);
    const known = this.known.get(documentId);
    if (cached !== undefined && known !== undefined && heads.every((h) => known.has(h))) return cached;
    const fresh = shapeOf(doc);
    if (cached !== undefined) {
      // The document only grows: what the cached shape holds beyond it was accepted, not yet applied.
      fresh.chunks ??= cached.chunks;
      for (const l of cached.lists) fresh.lists.add(l);
      for (const [id, claim] of cached.ops)
        if (claim !== null && !fresh.ops.has(id)) fresh.ops.set(id, claim);
    }
    this.shapes.set(documentId, fresh);
    this.known.set(documentId, new Set([...heads, ...(known ?? [])]));
    return fresh;
  }

  /**
   * Takes into `documentId`'s shape what `checkChanges` accepted (`next`, from changes `hashes`);
   * returns how many ops were new. Concurrent checks of one graph each add what they accepted.
   */
  accept(documentId: string, next: DocumentShape, hashes: readonly string[]): number {
    const shape = this.shapes.get(documentId);
    if (shape === undefined) return 0;
    shape.chunks ??= next.chunks;
    for (const l of next.lists) shape.lists.add(l);
    let newOps = 0;
    for (const [id, claim] of next.ops)
      if (!shape.ops.has(id)) {
        shape.ops.set(id, claim);
        newOps++;
      }
    const known = this.known.get(documentId);
    for (const h of hashes) known?.add(h);
    return newOps;
  }

  /** The document of `documentId` took changes by another way: read it again at the next check. */
  stale(documentId: string): void {
    this.known.delete(documentId);
  }
}
