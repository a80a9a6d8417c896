/**
 * The server's count of the ops a push brought (push-check.ts: the `taken` a flush reply reports,
 * which `kumiki sync` and `kumiki repair` print as "sent") when a change came before the one it
 * depends on — the sync's Bloom filter erred — and that one was then refused: real Automerge
 * documents in the op log's layout, real ops.
 */
import * as A from "@automerge/automerge";
import type { DocHandle } from "@automerge/automerge-repo";
import type { StoredOp } from "@kumiki-graph/core";
import { OP_LOG_FORMAT, OP_LOG_KIND, type OpLogDocument, pushBundle } from "@kumiki-graph/storage-automerge";
import { makeOps } from "@kumiki-graph/test-support/ops";
import { describe, expect, it } from "vitest";
import { PushCheck } from "../src/push-check.js";
import { ShapeCache } from "../src/shape-cache.js";
import type { Grant } from "../src/tokens.js";

type Doc = A.Doc<OpLogDocument>;

/** A change on `doc` pushing `ops` as one bundle, and the document after it. */
function push(doc: Doc, ops: readonly StoredOp[]): { doc: Doc; change: Uint8Array } {
  const next = A.change(doc, (d) => pushBundle(d, ops, 100));
  return { doc: next, change: A.getLastLocalChange(next)! };
}

const GRANT: Grant = { name: "test", access: () => "write" };

/** A push check of graph "g" whose document is whatever `current()` answers. */
function checkOf(current: () => Doc): PushCheck {
  const handle = { isReady: () => true, doc: () => current() } as unknown as DocHandle<unknown>;
  return new PushCheck({ handleOf: async () => handle, shapes: new ShapeCache(), maxChangeBytes: 1 << 20 });
}

/**
 * The server holds `seed` and `x`; a replica cloned at `seed` took a forgery of `x` (same op-id,
 * other body) and then wrote `honest`, whose change depends on the forgery's.
 */
async function poisoned() {
  const [seed, x, honest] = await makeOps(3);
  const init: OpLogDocument = { kind: new A.ImmutableString(OP_LOG_KIND), format: OP_LOG_FORMAT, chunks: [] };
  const base = push(A.from(init as unknown as Record<string, unknown>, { actor: "aa".repeat(16) }) as Doc, [
    seed!,
  ]).doc;
  const server = push(A.clone(base), [x!]).doc;
  const forged = push(A.clone(base, { actor: "bb".repeat(16) }), [{ ...x!, body: "Int = 99" } as StoredOp]);
  const written = push(forged.doc, [honest!]);
  return { server, forged: forged.change, honestChange: written.change, honest: honest!, x: x! };
}

describe("the ops a push brought, as the server counts them", () => {
  it("counts an op again when the change that first brought it waits on a refused one, and is never applied", async () => {
    const p = await poisoned();
    let doc = p.server;
    const check = checkOf(() => doc);
    // The Bloom filter erred: the honest change came first, judged by what it inserts.
    expect(await check.check("g", [p.honestChange], GRANT)).toEqual({ ok: true, newOps: 1 });
    // Then the forgery it depends on: refused, so the honest change is never applied.
    expect((await check.check("g", [p.forged], GRANT)).ok).toBe(false);
    expect(A.hasHeads(doc, [A.decodeChange(p.honestChange).hash!])).toBe(false);
    // The repair's push: the honest op on top of the server's document. The server did not hold
    // it (was: 0, and `kumiki repair` reported "sent 0" for the op it had just put there).
    const repaired = push(A.clone(doc, { actor: "cc".repeat(16) }), [p.honest]);
    expect(await check.check("g", [repaired.change], GRANT)).toEqual({ ok: true, newOps: 1 });
    doc = A.applyChanges(doc, [repaired.change])[0] as Doc;
    // Pushed once more (another replica's copy of it): the server holds it now.
    const again = push(A.clone(doc, { actor: "dd".repeat(16) }), [p.honest]);
    expect(await check.check("g", [again.change], GRANT)).toEqual({ ok: true, newOps: 0 });
  });

  it("does not count an op twice when the change that came early is applied once its dependency comes", async () => {
    const [seed, a, b] = await makeOps(3);
    const init: OpLogDocument = {
      kind: new A.ImmutableString(OP_LOG_KIND),
      format: OP_LOG_FORMAT,
      chunks: [],
    };
    let doc = push(A.from(init as unknown as Record<string, unknown>, { actor: "aa".repeat(16) }) as Doc, [
      seed!,
    ]).doc;
    const check = checkOf(() => doc);
    const first = push(A.clone(doc, { actor: "bb".repeat(16) }), [a!]);
    const second = push(first.doc, [b!]);
    expect(await check.check("g", [second.change], GRANT)).toEqual({ ok: true, newOps: 1 });
    expect(await check.check("g", [first.change], GRANT)).toEqual({ ok: true, newOps: 1 });
    doc = A.applyChanges(doc, [first.change, second.change])[0] as Doc;
    expect(A.hasHeads(doc, [A.decodeChange(second.change).hash!])).toBe(true);
    // Another replica pushes b again in a change of its own: held, not new.
    const copy = push(A.clone(doc, { actor: "cc".repeat(16) }), [b!]);
    expect(await check.check("g", [copy.change], GRANT)).toEqual({ ok: true, newOps: 0 });
  });
});
