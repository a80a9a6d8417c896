/**
 * A peer's changes in any order (issue: a sync server refused, now and then, a sound push as
 * "set on an object outside the op log"). Automerge's sync protocol may send a change before one it
 * depends on: its Bloom filter says the receiver holds a change it does not (about 1 % of the time,
 * the automerge-poison analysis measured), so the dependent goes first and the other follows when
 * the receiver asks for it. A change whose dependencies the receiver lacks cannot be applied until
 * they come (Automerge holds it back), and it may insert into a chunk list one of them creates: it is
 * judged by what it inserts, and the list by the change that makes it, when that one comes. A
 * change whose dependencies are all held is judged as before: an object it names must be known.
 */
import * as A from "@automerge/automerge";
import type { StoredOp } from "@kumiki-graph/core";
import { makeOps } from "@kumiki-graph/test-support/ops";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkChanges,
  type DocumentShape,
  decodeChanges,
  emptyOpLogDocument,
  type OpLogDocument,
  pushBundle,
  shapeOf,
} from "../src/index.js";

type Doc = A.Doc<OpLogDocument>;

function newDoc(): Doc {
  return A.from(emptyOpLogDocument() as unknown as Record<string, unknown>) as unknown as Doc;
}

/** The receiver: its document, the shape its checks extend, and the changes it accepted. */
class Receiver {
  doc: Doc;
  shape: DocumentShape;
  readonly accepted = new Set<string>();
  /** Accepted before a change they depend on came (checkChanges' `early`). */
  readonly early = new Set<string>();
  constructor(held: Doc) {
    this.doc = A.clone(held);
    this.shape = shapeOf(this.doc);
  }
  /** Checks `changes` as a server checks one sync message; takes them (Automerge may hold some back) or says why not. */
  take(changes: readonly Uint8Array[]): string | undefined {
    const decoded = decodeChanges(changes, this.doc);
    if (typeof decoded === "string") return decoded;
    const fresh = decoded.filter((c) => !this.accepted.has(c.hash) && !A.hasHeads(this.doc, [c.hash]));
    const r = checkChanges(this.shape, fresh, {
      known: (h) => A.hasHeads(this.doc, [h]) || (this.accepted.has(h) && !this.early.has(h)),
    });
    if (!r.ok) return r.reason;
    this.shape = r.shape;
    for (const c of fresh) this.accepted.add(c.hash);
    for (const h of r.early) this.early.add(h);
    [this.doc] = A.applyChanges(this.doc, [...changes]);
    return undefined;
  }
}

describe("a peer's changes, checked in the order the sync brings them", () => {
  it("takes a bundle pushed before the change that made its chunk list, then that change", async () => {
    const [a, b] = await makeOps(2);
    const base = newDoc();
    const made = A.change(A.clone(base), (d) => pushBundle(d, [a!], 4));
    const grown = A.change(A.clone(made), (d) => pushBundle(d, [b!], 4));
    const [makeList, insert] = A.getChangesSince(grown, A.getHeads(base));
    const server = new Receiver(base);
    expect(server.take([insert!])).toBeUndefined();
    expect(server.take([makeList!])).toBeUndefined();
    expect(A.getHeads(server.doc)).toEqual(A.getHeads(grown));
    expect(server.doc.chunks[0]!.map((s) => s.val)).toEqual([JSON.stringify([a]), JSON.stringify([b])]);
  });

  it("still refuses a change whose dependencies are held when it names an object outside the op log", async () => {
    const [a] = await makeOps(1);
    const base = newDoc();
    // A change that writes into a map of its own making: every dependency held, the object unknown.
    const outside = A.change(A.clone(base), (d) => {
      (d as unknown as { extra: Record<string, string> }).extra = { x: "y" };
    });
    const server = new Receiver(base);
    expect(server.take(A.getChangesSince(outside, A.getHeads(base)))).toMatch(/root|outside the op log/);
    // Held back or not, a bundle is judged by what it holds: a malformed op is refused at once.
    const made = A.change(A.clone(base), (d) => pushBundle(d, [a!], 4));
    const bad = A.change(A.clone(made), (d) => pushBundle(d, [{ "op-id": 7 } as unknown as StoredOp], 4));
    const [, badInsert] = A.getChangesSince(bad, A.getHeads(base));
    expect(server.take([badInsert!])).toBeDefined();
  });

  it("takes every change of two replicas' concurrent histories, whatever the order and grouping", async () => {
    const ops = await makeOps(24);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 3 })), { minLength: 2, maxLength: 10 }),
        fc.integer({ min: 1, max: 3 }),
        fc.infiniteStream(fc.integer({ min: 0, max: 1_000_000 })),
        async (writes, chunk, picks) => {
          const base = newDoc();
          let left = A.clone(base);
          let right = A.clone(base);
          let next = 0;
          for (const [onLeft, n] of writes) {
            const bundle = ops.slice(next, next + n);
            next += n;
            if (bundle.length === 0) break;
            if (onLeft) left = A.change(left, (d) => pushBundle(d, bundle, chunk));
            else right = A.change(right, (d) => pushBundle(d, bundle, chunk));
          }
          const all = A.merge(A.clone(left), right);
          const changes = A.getChangesSince(all, A.getHeads(base));
          // Delivered in an order and grouping of the picks' choosing (a message of 1-3 changes).
          const pending = [...changes];
          const it = picks[Symbol.iterator]();
          const server = new Receiver(base);
          while (pending.length > 0) {
            const size = 1 + (it.next().value % 3);
            const message: Uint8Array[] = [];
            for (let i = 0; i < size && pending.length > 0; i++)
              message.push(pending.splice(it.next().value % pending.length, 1)[0]!);
            expect(server.take(message)).toBeUndefined();
          }
          expect([...A.getHeads(server.doc)].sort()).toEqual([...A.getHeads(all)].sort());
        },
      ),
      { numRuns: 60 },
    );
  });
});
