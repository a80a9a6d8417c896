/**
 * Bundle items in the words of ai-edit.md §9.3.2: every op kind may name its target with `layer`
 * and `name` (not only add), a rename its new name with `new-name`, and an item may carry the
 * §9.3.2 fields `author`, `ts` and `depends-on`. {@link canonicalItem} turns such an item into the
 * store's own form (`qname`, `newName`); the store then holds `author` to its own author, checks
 * each `depends-on` entry against the graph (the hash of what the text references, as the writer
 * saw it), and stamps its own `ts`. `op-id` and `parent-ops` are not a request's: an op that
 * carries them was written elsewhere and is taken by `ingest`.
 */
import { OP_KINDS } from "../ops/op.js";

/** The kinds whose target is named (all but add). */
const TARGETED: ReadonlySet<unknown> = new Set(OP_KINDS.filter((k) => k !== "add"));

/** `raw` in the store's own bundle-item form (see the module comment); anything else unchanged. */
export function canonicalItem(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const o = raw as Record<string, unknown>;
  if (!TARGETED.has(o.op)) return raw;
  const out: Record<string, unknown> = { ...o };
  if (o.qname === undefined && typeof o.layer === "string" && typeof o.name === "string") {
    out.qname = `${o.layer}.${o.name}`;
    delete out.layer;
    delete out.name;
  }
  if (o.op === "rename" && o.newName === undefined && typeof o["new-name"] === "string") {
    out.newName = o["new-name"];
    delete out["new-name"];
  }
  return out;
}
