import * as A from "@automerge/automerge";
import type { StoredOp } from "@kumiki-graph/core";
import { makeOps } from "@kumiki-graph/test-support/ops";
import { describe, expect, it } from "vitest";
import {
  checkBundle,
  checkChanges,
  type DocumentShape,
  decodeChanges,
  OP_LOG_FORMAT,
  OP_LOG_KIND,
  type OpLogDocument,
  pushBundle,
  shapeOf,
} from "../src/index.js";

function newDoc(): A.Doc<OpLogDocument> {
  const init: OpLogDocument = { kind: new A.ImmutableString(OP_LOG_KIND), format: OP_LOG_FORMAT, chunks: [] };
  return A.from(init as unknown as Record<string, unknown>) as unknown as A.Doc<OpLogDocument>;
}

/** The changes of `doc` past `since`, checked against `shape`; on success the shape is extended. */
function check(shape: DocumentShape, doc: A.Doc<unknown>, since: A.Heads): string | undefined {
  const decoded = decodeChanges(A.getChangesSince(doc, since));
  if (typeof decoded === "string") return decoded;
  const r = checkChanges(shape, decoded);
  if (!r.ok) return r.reason;
  for (const [id, claim] of r.shape.ops) if (!shape.ops.has(id)) shape.ops.set(id, claim);
  for (const l of r.shape.lists) shape.lists.add(l);
  shape.chunks ??= r.shape.chunks;
  return undefined;
}

describe("checking a peer's changes against the op-ids a graph holds", () => {
  it("refuses an op under an op-id accepted earlier with other content, and takes it again unchanged", async () => {
    const [op, other] = await makeOps(2);
    let doc = newDoc();
    const shape = shapeOf(undefined);
    expect(check(shape, doc, [])).toBeUndefined();
    let at = A.getHeads(doc);
    doc = A.change(doc, (d) => pushBundle(d, [op!]));
    expect(check(shape, doc, at)).toBeUndefined();
    // The same op again (another replica wrote it too): the same content, taken.
    at = A.getHeads(doc);
    const again = A.change(A.clone(doc), (d) => pushBundle(d, [op!, other!]));
    expect(check(shape, again, at)).toBeUndefined();
    // Another body under the accepted op-id: refused, whatever else the change holds.
    const forged = A.change(A.clone(doc), (d) => pushBundle(d, [{ ...op!, body: "Int = 99" } as StoredOp]));
    expect(check(shape, forged, at)).toMatch(/already held with other content/);
  });

  it("refuses an op-id held when the shape was read, under other content", async () => {
    const [op] = await makeOps(1);
    const doc = A.change(newDoc(), (d) => pushBundle(d, [op!]));
    const shape = shapeOf(doc);
    const forged = A.change(A.clone(doc), (d) => pushBundle(d, [{ ...op!, body: "Int = 99" } as StoredOp]));
    expect(check(shape, forged, A.getHeads(doc))).toMatch(/already held with other content/);
    const same = A.change(A.clone(doc), (d) => pushBundle(d, [op!]));
    expect(check(shape, same, A.getHeads(doc))).toBeUndefined();
  });

  it("refuses a bundle naming one op-id twice with two contents, and takes it twice with one", async () => {
    const [op] = await makeOps(1);
    const twice = JSON.stringify([op, { ...op, body: "Int = 99" }]);
    expect(checkBundle(twice)).toMatch(/already held with other content/);
    expect(checkBundle(JSON.stringify([op, op]))).toBeUndefined();
    // Against held hashes: what one bundle accepts, the next is judged by.
    const held = new Map<string, string>();
    expect(checkBundle(JSON.stringify([op]), held)).toBeUndefined();
    expect(held.size).toBe(1);
    expect(checkBundle(JSON.stringify([{ ...op, body: "Int = 99" }]), held)).toMatch(/other content/);
  });
});
