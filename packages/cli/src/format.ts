/** Text formatting shared by the verbs (the JSON they print is the core value, documented in docs/cli.md). */
import type { RefsResult, WriteReceipt } from "@kumiki-graph/core";

/** `1 op`, `3 ops`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The JSON of a write: the receipt as core gives it (op-ids, the wire ops, removed, warnings). */
export function receiptJson(receipt: WriteReceipt): unknown {
  return receipt;
}

/** `added slot.todos (op_…)`; a write of several ops lists how many. */
export function receiptText(what: string, receipt: WriteReceipt): string {
  const ids = receipt.opIds;
  const first = ids[0];
  if (first === undefined) return `${what}: nothing to write (every op was already held)`;
  const tail = ids.length === 1 ? first : `${first} and ${plural(ids.length - 1, "more op")}`;
  const removed = receipt.removed ?? [];
  return `${what} (${tail})${removed.length > 0 ? `\nremoved: ${removed.join(", ")}` : ""}`;
}

/** The receipt's warnings, for stderr. */
export function receiptWarnings(receipt: WriteReceipt): readonly string[] {
  return receipt.warnings ?? [];
}

/** `slot.draft is referenced by 3 tiles, 2 reducers` and one `  tile.NewForm:1` line per site. */
export function refsText(r: RefsResult): string {
  if (r.referrers.length === 0) return `nothing references ${r.target}`;
  const counts = Object.entries(r.byLayer)
    .map(([layer, n]) => plural(n ?? 0, layer, layer === "fn" ? "fns" : `${layer}s`))
    .join(", ");
  const to = (x: RefsResult["referrers"][number]) =>
    x.refersTo === undefined ? "" : ` (${x.refersTo.join(", ")})`;
  const lines = r.referrers.flatMap((x) =>
    x.lines.length === 0 ? [`${x.qname}${to(x)}`] : x.lines.map((l) => `${x.qname}:${l}${to(x)}`),
  );
  const what = r.matched === undefined ? r.target : `${r.target} (${plural(r.matched.length, "definition")})`;
  return [`${what} is referenced by ${counts}`, ...lines.map((l) => `  ${l}`)].join("\n");
}

/** A timestamp as ISO text. */
export function when(ts: number): string {
  return new Date(ts).toISOString();
}

const COLORS = { red: 31, yellow: 33, green: 32, dim: 2 } as const;

/** `text` in a colour when colour is allowed (a TTY, NO_COLOR unset), else as it is. */
export function paint(color: boolean, c: keyof typeof COLORS, text: string): string {
  return color ? `\x1b[${COLORS[c]}m${text}\x1b[0m` : text;
}
