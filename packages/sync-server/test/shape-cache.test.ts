/**
 * The server's shape of a graph (shape-cache.ts) against a document that also grows by other ways
 * than this server's check: real Automerge documents in the op log's layout, real ops.
 */
import * as A from "@automerge/automerge";
import type { StoredOp } from "@kumiki-graph/core";
import {
  checkChanges,
  decodeChanges,
  OP_LOG_FORMAT,
  OP_LOG_KIND,
  type OpLogDocument,
  pushBundle,
} from "@kumiki-graph/storage-automerge";
import { makeOps } from "@kumiki-graph/test-support/ops";
import { describe, expect, it } from "vitest";
import { ShapeCache } from "../src/shape-cache.js";

type Doc = A.Doc<OpLogDocument>;

/** A change on `doc` (pushing `ops` as one bundle, a new chunk list when `newList`) and the document after it. */
function push(doc: Doc, ops: readonly StoredOp[], newList = false): { doc: Doc; change: Uint8Array } {
  const next = A.change(doc, (d) => pushBundle(d, ops, newList ? 1 : 100));
  return { doc: next, change: A.getLastLocalChange(next)! };
}

/** The server's document: an op log holding `op`, written by actor aa…. */
function baseDoc(op: StoredOp): Doc {
  const init: OpLogDocument = { kind: new A.ImmutableString(OP_LOG_KIND), format: OP_LOG_FORMAT, chunks: [] };
  return push(A.from(init as unknown as Record<string, unknown>, { actor: "aa".repeat(16) }) as Doc, [op])
    .doc;
}

/** Another server's change (actor cc…) holding `op`, taken into `base` as the database brings it. */
function takenFromElsewhere(base: Doc, op: StoredOp): Doc {
  const other = push(A.clone(base, { actor: "cc".repeat(16) }), [op]);
  return A.applyChanges(A.clone(base), [other.change])[0] as Doc;
}

/** The server's check of `changes` against the cache's shape for document "g", as server.ts runs it. */
function check(cache: ShapeCache, doc: Doc, changes: readonly Uint8Array[]): string | undefined {
  const decoded = decodeChanges(changes, doc);
  if (typeof decoded === "string") return decoded;
  const r = checkChanges(cache.shape("g", doc), decoded);
  if (!r.ok) return r.reason;
  cache.accept(
    "g",
    r.shape,
    decoded.map((c) => c.hash),
  );
  return undefined;
}

describe("the server's shape of a graph", () => {
  it("keeps what it accepted when the document took another server's change before applying it", async () => {
    const [a, b, c, d] = await makeOps(4);
    const base = baseDoc(a!);
    const cache = new ShapeCache();
    // The server's document: the base. A peer's first push makes a new chunk list.
    const peer1 = push(A.clone(base, { actor: "bb".repeat(16) }), [b!], true);
    expect(check(cache, base, [peer1.change])).toBeUndefined();
    // Before the Repo applies it, the document takes another server's change from the database.
    const served = takenFromElsewhere(base, c!);
    cache.stale("g");
    // The peer's next push goes into the list its first push made: accepted (was: "outside the op log").
    const peer2 = push(peer1.doc, [d!]);
    expect(check(cache, served, [peer2.change])).toBeUndefined();
  });

  it("sees an op-id the document took by another way, without being told: a second content is refused", async () => {
    const [a, b] = await makeOps(2);
    const base = baseDoc(a!);
    const cache = new ShapeCache();
    cache.shape("g", base);
    // Another server's change holding op b, taken into the document (no stale() call).
    const served = takenFromElsewhere(base, b!);
    // A peer pushes another op under b's op-id.
    const forged = push(A.clone(base, { actor: "bb".repeat(16) }), [{ ...b!, body: "Int = 99" } as StoredOp]);
    expect(check(cache, served, [forged.change])).toMatch(/already held with other content/);
  });
});
