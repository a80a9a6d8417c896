import { blake3HexOfText } from "../lang/blake3.js";
import { defIdOf, type OpId } from "../ops/ids.js";
import type { LogOp } from "../ops/op.js";

/**
 * The fingerprint of the exact ops of a write (what a preview shows and `apply(bundle, {expect})`
 * checks): blake3 over the canonical JSON (keys sorted, no whitespace) of the ops without their
 * `op-id` and `ts`, which are minted afresh at every attempt. Everything else counts, `parent-ops`
 * included, so a write against a graph that changed in between (other heads) has another
 * fingerprint. Within the write, an op-id (a parent, an edit's base) and the definition id an add
 * mints are replaced by the op's position (`@0`, `@0:def`), so the same ops written again have the
 * same fingerprint.
 */
export function fingerprintOps(ops: readonly LogOp[]): string {
  const local = new Map<string, string>();
  ops.forEach((op, i) => {
    local.set(op["op-id"], `@${i}`);
    if (op.op === "add") local.set(defIdOf(op["op-id"] as OpId), `@${i}:def`);
  });
  const parts = ops.map((op) => {
    const { "op-id": _id, ts: _ts, ...rest } = op;
    return canonical(rest, local);
  });
  return blake3HexOfText(`kumiki-ops-v1\n[${parts.join(",")}]`);
}

/**
 * The hash of one op's whole content (every field, `op-id` and `ts` included): blake3 over its
 * canonical JSON (keys sorted, no whitespace). An op-id names exactly one op: two ops with one
 * op-id and different hashes mean one of them was forged or corrupted (refused at ingest and by
 * the sync server; see docs/semantics.md, "Op identity").
 */
export function opContentHash(op: unknown): string {
  return blake3HexOfText(`kumiki-op-v1\n${canonical(op, NO_LOCALS)}`);
}

const NO_LOCALS: ReadonlyMap<string, string> = new Map();

function canonical(x: unknown, local: ReadonlyMap<string, string>): string {
  if (typeof x === "string") return JSON.stringify(local.get(x) ?? x);
  if (x === null || typeof x !== "object") return JSON.stringify(x);
  if (Array.isArray(x)) return `[${x.map((v) => canonical(v, local)).join(",")}]`;
  const entries = Object.entries(x as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => [local.get(k) ?? k, v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, local)}`).join(",")}}`;
}
