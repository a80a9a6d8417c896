/**
 * A fold kept as data, so that a process can take a graph up without folding every op again
 * (issue 42: a write in its own process folded 5,000 definitions, or 100,000 ops, to change one).
 * The snapshot is a head — the causal order, which definition holds each op, every definition's
 * layer, name and life, the name and referrer indexes — and one row of text per definition (its
 * ops and merge state), read only when the graph first looks at that definition. Only a fold
 * without records is kept (nothing pending, quarantined, rolled back, orphaned, kept dangling, no
 * control op): each op is then one definition's, and its state is its ops and what they decided.
 */
import type { Layer } from "../lang/layers.js";
import type { Causality, CausalParts } from "../ops/causality.js";
import type { DefId, OpId } from "../ops/ids.js";
import type { ApplyFailure, Body, DefinitionState } from "../ops/merge.js";
import type { LogOp, Op, RefKey, RemoveOp } from "../ops/op.js";
import { mayConflict } from "./conflicts.js";
import type { FoldState } from "./fold-state.js";

/**
 * What a restored graph reads first (see the module comment). Compact, since every write parses
 * it: a definition is named by its row's index, and the name indexes keep only what the rows'
 * names do not say (see `headIndexes`).
 */
export interface FoldSnapshotHead {
  readonly v: 2;
  readonly causal: SnapshotCausal;
  /** Per position of the causal order, the row of the definition whose ops hold that op. */
  readonly owner: readonly number[];
  /**
   * Per row, in the fold's order: the definition's identity — a number when it is its add's
   * op-id spelt as a definition's (`def_` for `op_`): that op's position — layer, name, and life.
   */
  readonly defs: readonly (readonly [DefId | number, Layer, string, boolean])[];
  /** `layer:name` → the live rows claiming it, for names more than one claims (one claimant: the live row of that name). */
  readonly names: readonly (readonly [string, readonly number[]])[];
  /**
   * `layer:name` → every definition that ever claimed it (a row, or an identity no row has), where
   * that is not the rows of that name in row order (a rename's old name, a name claimed again).
   */
  readonly nameHistory: readonly (readonly [string, readonly (number | DefId)[]])[];
  /** target → the definitions whose text binds a reference to it (rows, or identities no row has). */
  readonly referrers: readonly (readonly [number | DefId, readonly (number | DefId)[]])[];
  /** The rows whose definition can hold a conflict record of its own (a lost register, a failure). */
  readonly records: readonly number[];
}

/**
 * The causal order as a head keeps it: its position lists packed ({@link PackedNumbers}), the
 * greatest op-id beside them (see `CausalParts`).
 */
export interface SnapshotCausal {
  readonly ids: readonly OpId[];
  readonly parentStart: PackedNumbers;
  readonly parentList: PackedNumbers;
  readonly dom: PackedNumbers;
  readonly heads: readonly number[];
  readonly max?: OpId;
}

/**
 * A list of integers as runs `{runs: [first, step, count, …]}` (each run is `first`, `first +
 * step`, … `count` of them) where that is shorter, else the list itself. A mostly linear history's
 * parent lists and dominators are a few runs: as lists they were 1.8 MB of the 5.4 MB head at
 * 100,012 ops, and parsing them about 7 ms of a write.
 */
export type PackedNumbers = readonly number[] | { readonly runs: readonly number[] };

/** `list` packed (see {@link PackedNumbers}). */
export function packNumbers(list: readonly number[]): PackedNumbers {
  const runs: number[] = [];
  for (let i = 0; i < list.length && runs.length < list.length; ) {
    const step = i + 1 < list.length ? list[i + 1]! - list[i]! : 0;
    let j = i + 1;
    while (j < list.length && list[j]! - list[j - 1]! === step) j++;
    runs.push(list[i]!, step, j - i);
    i = j;
  }
  return runs.length < list.length ? { runs } : list;
}

/**
 * The list `packed` holds, when every member is an integer from `min` to `max` and its runs are
 * whole; else undefined.
 */
export function unpackNumbers(packed: PackedNumbers, min: number, max: number): number[] | undefined {
  const fits = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
  if (Array.isArray(packed)) {
    for (let i = 0; i < packed.length; i++) if (!fits(packed[i])) return undefined;
    return packed as number[];
  }
  const runs = (packed as { runs?: unknown } | null)?.runs;
  if (!Array.isArray(runs) || runs.length % 3 !== 0) return undefined;
  const out: number[] = [];
  for (let r = 0; r < runs.length; r += 3) {
    const [first, step, count] = [runs[r], runs[r + 1], runs[r + 2]];
    if (!Number.isInteger(step) || !Number.isInteger(count) || count < 1 || !fits(first)) return undefined;
    if (!fits(first + step * (count - 1))) return undefined;
    for (let k = 0; k < count; k++) out.push(first + step * k);
  }
  return out;
}

/** A fold snapshot: its head, and each definition's row as JSON text (`Graph.snapshot` makes one). */
export interface FoldSnapshot {
  readonly head: FoldSnapshotHead;
  /** How many rows there are (one per entry of `head.defs`). */
  readonly rows: number;
  /** Row `i`'s text. */
  row(i: number): string;
}

/**
 * A row: the definition's ops (as stored, in causal order) and their positions, then its merge
 * state with every op named by its index among those ops. The body's bindings are an op's own
 * object when they were (`refsOf`), so that identity comparisons read as in the fold.
 */
type Row = [
  ops: Op[],
  at: number[],
  heads: number[],
  alive: boolean,
  tags: number[],
  removes: number[],
  name: string,
  nameWinner: number,
  nameMax: number[],
  textWinner: number,
  textMax: number[],
  body: [text: string, refs: Body["refs"] | number, version: OpId, exact: boolean],
  introducers: [RefKey, OpId][],
  failures: [OpId, ApplyFailure][],
];

/**
 * The snapshot of a fold, or undefined when the fold holds records a snapshot does not keep (see
 * the module comment). The head is a value; the rows are texts, to be stored one per line.
 */
export function encodeFold(
  st: FoldState,
  causality: Causality<LogOp>,
): { head: FoldSnapshotHead; rows: string[] } | undefined {
  for (const k of ["pending", "quarantine", "graveyard", "rolledBack", "orphans", "control", "kept"] as const)
    if (!st[k].isEmpty()) return undefined;
  const owner = new Array<number>(causality.size).fill(-1);
  const defs: [DefId | number, Layer, string, boolean][] = [];
  const rows: string[] = [];
  const records: number[] = [];
  const rowOf = new Map<DefId, number>();
  for (const s of st.defs.values()) {
    const row = encodeDefinition(s, causality);
    if (row === undefined) return undefined;
    for (const at of row[1]) {
      if (owner[at] !== -1) return undefined;
      owner[at] = rows.length;
    }
    if (mayConflict(s)) records.push(rows.length);
    rowOf.set(s.def, rows.length);
    defs.push([s.def === defIdOfOp(s.added["op-id"]) ? row[1][0]! : s.def, s.layer, s.name, s.alive]);
    rows.push(JSON.stringify(row));
  }
  if (owner.includes(-1)) return undefined;
  const ref = (id: DefId): number | DefId => rowOf.get(id) ?? id;
  const derived = derivedIndexes([...rowOf.keys()], defs);
  const names: [string, number[]][] = [];
  for (const [k, v] of st.names.entries())
    if (!sameList(v, derived.names.get(k))) names.push([k, v.map((id) => rowOf.get(id)!)]);
  const nameHistory: [string, (number | DefId)[]][] = [];
  for (const [k, v] of st.nameHistory.entries())
    if (!sameList(v, derived.nameHistory.get(k))) nameHistory.push([k, v.map(ref)]);
  return {
    head: {
      v: 2,
      causal: packCausal(causality.parts()),
      owner,
      defs,
      names,
      nameHistory,
      referrers: [...st.referrers.entries()].map(([t, rs]) => [ref(t), rs.map(ref)]),
      records,
    },
    rows,
  };
}

/** The causal order as a head keeps it. */
function packCausal(parts: CausalParts): SnapshotCausal {
  return {
    ids: parts.ids,
    parentStart: packNumbers(parts.parentStart),
    parentList: packNumbers(parts.parentList),
    dom: packNumbers(parts.dom),
    heads: parts.heads,
    ...(parts.max === undefined ? {} : { max: parts.max }),
  };
}

/**
 * The causal order a head keeps, when it is whole: its lists of the lengths its op-ids say, every
 * position in range; else undefined.
 */
export function unpackCausal(c: SnapshotCausal): CausalParts | undefined {
  if (c === null || typeof c !== "object" || !Array.isArray(c.ids) || !Array.isArray(c.heads))
    return undefined;
  const n = c.ids.length;
  const parentList = unpackNumbers(c.parentList, 0, n - 1);
  const parentStart = unpackNumbers(c.parentStart, 0, parentList?.length ?? 0);
  const dom = unpackNumbers(c.dom, -1, n - 1);
  if (parentList === undefined || parentStart?.length !== n + 1 || dom?.length !== n) return undefined;
  if (parentStart[n] !== parentList.length || (c.max !== undefined && !greatestOfEnds(c))) return undefined;
  return {
    ids: c.ids,
    parentStart,
    parentList,
    dom,
    heads: c.heads,
    ...(c.max === undefined ? {} : { max: c.max }),
  };
}

/**
 * Whether `c.max` is a string no less than the last op-id and each head's: what can be checked of
 * it without comparing every op-id (a damaged one would answer a held op as not held).
 */
function greatestOfEnds(c: SnapshotCausal): boolean {
  const max = c.max;
  if (typeof max !== "string" || (c.ids.length > 0 && !(max >= c.ids[c.ids.length - 1]!))) return false;
  for (const h of c.heads) if (!(typeof c.ids[h] === "string" && max >= c.ids[h]!)) return false;
  return true;
}

/** A definition's identity as its add's op-id spells it (`op_X` → `def_X`). */
function defIdOfOp(op: OpId): DefId {
  return `def_${op.slice(3)}` as DefId;
}

function sameList<T>(a: readonly T[], b: readonly T[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * The name indexes the rows' own names make — the live rows per name, and every row per name, in
 * row order — by the rows' identities (`ids`). What the head's name lists stand beside: the
 * snapshot keeps only the lists that differ. Plain loops in one pass: a write in a process of its
 * own (not optimized) runs this once, over every row.
 */
function derivedIndexes(
  ids: readonly DefId[],
  defs: FoldSnapshotHead["defs"],
): { names: Map<string, DefId[]>; nameHistory: Map<string, DefId[]> } {
  const names = new Map<string, DefId[]>();
  const nameHistory = new Map<string, DefId[]>();
  for (let i = 0; i < defs.length; i++) {
    const d = defs[i]!;
    const id = ids[i]!;
    const k = `${d[1]}:${d[2]}`;
    const h = nameHistory.get(k);
    if (h === undefined) nameHistory.set(k, [id]);
    else h.push(id);
    if (!d[3]) continue;
    const l = names.get(k);
    if (l === undefined) names.set(k, [id]);
    else l.push(id);
  }
  return { names, nameHistory };
}

/**
 * What a snapshot's head says in full: each row's identity, and the name and referrer indexes
 * (the rows' own names, with the head's entries in place of theirs).
 */
export function headIndexes(head: FoldSnapshotHead): {
  ids: DefId[];
  names: Map<string, readonly DefId[]>;
  nameHistory: Map<string, readonly DefId[]>;
  referrers: [DefId, DefId[]][];
} {
  const ids = head.defs.map(([ref]) => (typeof ref === "number" ? defIdOfOp(head.causal.ids[ref]!) : ref));
  const { names, nameHistory } = derivedIndexes(ids, head.defs);
  const id = (r: number | DefId): DefId => (typeof r === "number" ? ids[r]! : r);
  for (const [k, rows] of head.names) names.set(k, rows.map(id));
  for (const [k, rows] of head.nameHistory) nameHistory.set(k, rows.map(id));
  const referrers: [DefId, DefId[]][] = [];
  for (const [t, rs] of head.referrers) referrers.push([id(t), rs.map(id)]);
  return { ids, names, nameHistory, referrers };
}

function encodeDefinition(s: DefinitionState, causality: Causality<LogOp>): Row | undefined {
  const ops = s.ops;
  if (ops[0] !== s.added || ops.length !== s.history.length) return undefined;
  const at: number[] = [];
  for (let i = 0; i < ops.length; i++) {
    const p = causality.positionOfOp(ops[i]!);
    if (p === undefined || ops[i]!["op-id"] !== s.history[i]) return undefined;
    at.push(p);
  }
  const index = new Map<Op, number>(ops.map((o, i) => [o, i]));
  const idx = (list: readonly Op[]): number[] | undefined => {
    const out: number[] = [];
    for (const o of list) {
      const i = index.get(o);
      if (i === undefined) return undefined;
      out.push(i);
    }
    return out;
  };
  const heads = idx(s.heads);
  const tags = idx(s.tags);
  const removes = idx(s.removes);
  const nameMax = idx(s.nameMax);
  const textMax = idx(s.textMax);
  const nameWinner = index.get(s.nameWinner);
  const textWinner = index.get(s.textWinner);
  if (
    heads === undefined ||
    tags === undefined ||
    removes === undefined ||
    nameMax === undefined ||
    textMax === undefined ||
    nameWinner === undefined ||
    textWinner === undefined
  )
    return undefined;
  const refsOp = ops.findIndex((o) => "refs" in o && o.refs === s.body.refs);
  return [
    ops,
    at,
    heads,
    s.alive,
    tags,
    removes,
    s.name,
    nameWinner,
    nameMax,
    textWinner,
    textMax,
    [s.body.text, refsOp >= 0 ? refsOp : s.body.refs, s.body.version, s.body.exact],
    [...s.introducers],
    [...s.failures],
  ];
}

/**
 * Definition `def`'s state from its row's text, its ops handed to `causality` as they are read
 * (each op is in exactly one row, so this is where a restored order's ops come from). Throws on a
 * row that does not read as one: a restored graph is only made from a snapshot checked whole.
 */
export function decodeDefinition(
  def: DefId,
  layer: Layer,
  text: string,
  causality: Causality<LogOp>,
): DefinitionState {
  const row = JSON.parse(text) as Row;
  const [ops, at] = row;
  for (let i = 0; i < ops.length; i++) causality.restoreOp(at[i]!, ops[i]!);
  const pick = (list: readonly number[]): Op[] => list.map((i) => ops[i]!);
  const [bodyText, refs, version, exact] = row[11];
  return {
    def,
    layer,
    added: ops[0] as DefinitionState["added"],
    ops,
    history: ops.map((o) => o["op-id"]),
    heads: pick(row[2]),
    alive: row[3],
    tags: pick(row[4]),
    removes: pick(row[5]) as RemoveOp[],
    name: row[6],
    nameWinner: ops[row[7]] as DefinitionState["nameWinner"],
    nameMax: pick(row[8]) as DefinitionState["nameMax"],
    textWinner: ops[row[9]] as DefinitionState["textWinner"],
    textMax: pick(row[10]) as DefinitionState["textMax"],
    body: {
      text: bodyText,
      refs: typeof refs === "number" ? (ops[refs] as { refs: Body["refs"] }).refs : refs,
      version,
      exact,
    },
    introducers: new Map(row[12]),
    failures: new Map(row[13]),
  };
}
