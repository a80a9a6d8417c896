/**
 * A decoder for the one kind of Automerge change a push is made of: list insertions (a new chunk
 * list into `chunks`, bundle strings into a chunk list), one actor's change with no message.
 *
 * Why not only Automerge's `decodeChange`: it costs about 14 µs a call whatever the change's size
 * (1,000 calls: 14.0 ms for 40-byte changes, 13.8 ms for 370-byte ones), and a server checks
 * every change of every push before its Repo sees it: 16-25 ms of the server's 28 ms check per
 * 1,000 ops (docs/sync.md "Speed"). This reads such a change in about 5 µs.
 *
 * It answers only when it can answer exactly as `decodeChange` would, and `undefined` for anything
 * else (another chunk type, a compressed column, a column it does not know, a map key, an op with
 * predecessors, a value other than a string, a message, extra bytes, a bad checksum, any
 * inconsistency): the caller then asks Automerge. test/change-decoder.property.test.ts holds it to
 * `decodeChange` over random changes and over their bytes mutated (checksum made good again).
 * Format: https://automerge.org/automerge-binary-format-spec/ (change chunks, columnar ops).
 */
import { hash as digest } from "node:crypto";
import type * as A from "@automerge/automerge";

const MAGIC = [0x85, 0x6f, 0x4a, 0x83];
const CHANGE_CHUNK = 1;

/** Column specs (id << 4 | type): those a list-insertion change has; any other is not ours. */
const OBJ_ACTOR = (0 << 4) | 1;
const OBJ_CTR = (0 << 4) | 2;
const KEY_ACTOR = (1 << 4) | 1;
const KEY_CTR = (1 << 4) | 3;
const INSERT = (3 << 4) | 4;
const ACTION = (4 << 4) | 2;
const VAL_META = (5 << 4) | 6;
const VAL_RAW = (5 << 4) | 7;
const PRED_GROUP = (7 << 4) | 0;
const KNOWN = new Set([
  OBJ_ACTOR,
  OBJ_CTR,
  KEY_ACTOR,
  KEY_CTR,
  INSERT,
  ACTION,
  VAL_META,
  VAL_RAW,
  PRED_GROUP,
]);

const MAKE_LIST = 2;
const SET = 1;
const VALUE_NULL = 0;
const VALUE_STRING = 6;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The largest op counter read here. Automerge refuses a change whose counters it finds too large
 * ("counter too large": a forged start op of 229,955,840,201 was read here and refused there, found
 * by the forger property test); a real op log never comes near 2^31 ops, so anything above is left
 * to Automerge, whose answer stands.
 */
const MAX_COUNTER = 2 ** 31 - 1;

/** An op as `decodeChange` gives a list insertion. */
interface ListInsert {
  readonly action: "makeList" | "set";
  readonly obj: string;
  readonly elemId: string;
  readonly insert: true;
  readonly value?: string;
  readonly pred: readonly string[];
}

/** Thrown inside the decoder for anything it does not read exactly; never leaves this module. */
class NotOurs extends Error {}

class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public at: number,
    readonly end: number,
  ) {}

  byte(): number {
    if (this.at >= this.end) throw new NotOurs();
    return this.bytes[this.at++]!;
  }

  /** An unsigned LEB128, canonical and within 2^53. */
  uleb(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      const b = this.byte();
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        // A trailing zero byte (an over-long encoding) is refused by Automerge: so here.
        if (i > 0 && b === 0) throw new NotOurs();
        break;
      }
      scale *= 128;
      if (i >= 7) throw new NotOurs();
    }
    if (!Number.isSafeInteger(value)) throw new NotOurs();
    return value;
  }

  /** A signed LEB128, canonical and within ±2^53. */
  sleb(): number {
    let value = 0;
    let scale = 1;
    let b: number;
    let i = 0;
    for (; ; i++) {
      b = this.byte();
      value += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) break;
      if (i >= 7) throw new NotOurs();
    }
    if ((b & 0x40) !== 0) value -= scale;
    // Over-long: a last byte that only repeats the sign of the one before.
    if (i > 0) {
      const prev = this.bytes[this.at - 2]!;
      if ((b === 0 && (prev & 0x40) === 0) || (b === 0x7f && (prev & 0x40) !== 0)) throw new NotOurs();
    }
    if (!Number.isSafeInteger(value)) throw new NotOurs();
    return value;
  }

  take(n: number): Uint8Array {
    if (n > this.end - this.at) throw new NotOurs();
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  done(): void {
    if (this.at !== this.end) throw new NotOurs();
  }
}

/**
 * A run-length column (runs of one value, literal runs, runs of nulls) of exactly `n` values,
 * each read by `value`.
 */
function runLengthColumn(r: Reader | undefined, n: number, value: (r: Reader) => number): (number | null)[] {
  if (r === undefined) return new Array<null>(n).fill(null);
  const out: (number | null)[] = [];
  while (r.at < r.end) {
    const count = r.sleb();
    if (count > 0) {
      const v = value(r);
      for (let i = 0; i < count && out.length <= n; i++) out.push(v);
    } else if (count < 0) {
      for (let i = 0; i < -count; i++) out.push(value(r));
    } else {
      const nulls = r.uleb();
      if (nulls === 0) throw new NotOurs();
      for (let i = 0; i < nulls && out.length <= n; i++) out.push(null);
    }
    if (out.length > n) throw new NotOurs();
  }
  if (out.length !== n) throw new NotOurs();
  return out;
}

/** A run-length column of unsigned integers. */
function uintColumn(r: Reader | undefined, n: number): (number | null)[] {
  return runLengthColumn(r, n, (x) => x.uleb());
}

/** A delta column: run-length signed deltas, summed (a null stays null and adds nothing). */
function deltaColumn(r: Reader | undefined, n: number): (number | null)[] {
  let sum = 0;
  return runLengthColumn(r, n, (x) => x.sleb()).map((d) => {
    if (d === null) return null;
    sum += d;
    if (!Number.isSafeInteger(sum) || sum < 0) throw new NotOurs();
    return sum;
  });
}

/** A boolean column: alternating run lengths, false first, exactly `n` values. */
function booleanColumn(r: Reader | undefined, n: number): boolean[] {
  if (r === undefined) return new Array<boolean>(n).fill(false);
  const out: boolean[] = [];
  let value = false;
  let first = true;
  while (r.at < r.end) {
    const count = r.uleb();
    // Only the first run may be empty (a column that starts with true).
    if (count === 0 && !first) throw new NotOurs();
    first = false;
    for (let i = 0; i < count && out.length <= n; i++) out.push(value);
    if (out.length > n) throw new NotOurs();
    value = !value;
  }
  if (out.length !== n) throw new NotOurs();
  return out;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** The last actor read, kept: a push's changes are nearly all one actor's. */
let lastActor: { readonly bytes: Buffer; readonly hex: string } | undefined;

function actorHex(bytes: Uint8Array): string {
  if (lastActor?.bytes.equals(bytes) !== true) lastActor = { bytes: Buffer.from(bytes), hex: hex(bytes) };
  return lastActor.hex;
}

/**
 * The change `bytes` (one change chunk) as Automerge's `decodeChange` gives it, when it is a
 * list-insertion change this reads exactly; otherwise undefined (ask `decodeChange`).
 */
export function decodeInsertChange(bytes: Uint8Array): A.DecodedChange | undefined {
  try {
    return decode(bytes);
  } catch {
    // NotOurs, or a string that is not UTF-8: Automerge's decoder says what it is.
    return undefined;
  }
}

function decode(bytes: Uint8Array): A.DecodedChange | undefined {
  if (bytes.length < 9) return undefined;
  for (let i = 0; i < 4; i++) if (bytes[i] !== MAGIC[i]) return undefined;
  const head = new Reader(bytes, 8, bytes.length);
  if (head.byte() !== CHANGE_CHUNK) return undefined;
  const length = head.uleb();
  if (length !== bytes.length - head.at) return undefined;
  const hash = digest("sha256", bytes.subarray(8), "buffer");
  for (let i = 0; i < 4; i++) if (hash[i] !== bytes[4 + i]) return undefined;
  const r = new Reader(bytes, head.at, bytes.length);
  const deps: string[] = [];
  const depCount = r.uleb();
  for (let i = 0; i < depCount; i++) deps.push(hex(r.take(32)));
  const actor = actorHex(r.take(r.uleb()));
  const seq = r.uleb();
  const startOp = r.uleb();
  // Automerge reads the start op as a non-zero LEB128 ("leb128 was zero when it was expected to
  // be nonzero"): a zero is not ours to read.
  if (startOp === 0) return undefined;
  const time = r.sleb();
  if (r.uleb() !== 0) return undefined; // a message
  const actors = [actor];
  const others = r.uleb();
  for (let i = 0; i < others; i++) actors.push(hex(r.take(r.uleb())));
  const columnCount = r.uleb();
  const specs: { spec: number; length: number }[] = [];
  for (let i = 0; i < columnCount; i++) {
    const spec = r.uleb();
    const length = r.uleb();
    // Known, uncompressed, in ascending order: anything else is for Automerge to read.
    if (!KNOWN.has(spec) || (specs.length > 0 && spec <= specs[specs.length - 1]!.spec)) return undefined;
    specs.push({ spec, length });
  }
  const columns = new Map<number, Reader>();
  for (const { spec, length } of specs) {
    const start = r.at;
    r.take(length);
    if (length > 0) columns.set(spec, new Reader(bytes, start, start + length));
  }
  r.done(); // no extra bytes
  if (!columns.has(ACTION)) return undefined;
  const actions = uintColumn(columns.get(ACTION), countOf(columns.get(ACTION)!));
  const n = actions.length;
  const objActor = uintColumn(columns.get(OBJ_ACTOR), n);
  const objCtr = uintColumn(columns.get(OBJ_CTR), n);
  const keyActor = uintColumn(columns.get(KEY_ACTOR), n);
  const keyCtr = deltaColumn(columns.get(KEY_CTR), n);
  const insert = booleanColumn(columns.get(INSERT), n);
  const meta = uintColumn(columns.get(VAL_META), n);
  const preds = uintColumn(columns.get(PRED_GROUP), n);
  const raw = columns.get(VAL_RAW) ?? new Reader(bytes, 0, 0);
  const ops: ListInsert[] = [];
  if (startOp + n > MAX_COUNTER) return undefined;
  const idOf = (ctr: number | null, actorIndex: number | null): string => {
    if (ctr === null || actorIndex === null || ctr === 0 || ctr > MAX_COUNTER) throw new NotOurs();
    const who = actors[actorIndex];
    if (who === undefined) throw new NotOurs();
    return `${ctr}@${who}`;
  };
  for (let i = 0; i < n; i++) {
    if (!insert[i] || preds[i] !== 0) return undefined;
    const obj = idOf(objCtr[i]!, objActor[i]!);
    const ctr = keyCtr[i];
    let elemId: string;
    if (ctr === 0 && keyActor[i] === null) elemId = "_head";
    else elemId = idOf(ctr!, keyActor[i]!);
    const m = meta[i];
    if (m === null || m === undefined) return undefined;
    const type = m & 0xf;
    const size = Math.floor(m / 16);
    if (actions[i] === MAKE_LIST && type === VALUE_NULL && size === 0) {
      ops.push({ action: "makeList", obj, elemId, insert: true, pred: [] });
    } else if (actions[i] === SET && type === VALUE_STRING) {
      const value = UTF8.decode(raw.take(size));
      ops.push({ action: "set", obj, elemId, insert: true, value, pred: [] });
    } else return undefined;
  }
  raw.done();
  // Automerge's type gives every op a `key`; at run time a list op has `elemId`, as here. No
  // `author`: Automerge gives none for a change that carries none (no extra bytes here).
  const decoded = { ops, actor, hash: hash.toString("hex"), seq, startOp, time, message: null, deps };
  return decoded as unknown as A.DecodedChange;
}

/** How many values a run-length column holds (read once to size the others). */
function countOf(column: Reader): number {
  const r = new Reader(column.bytes, column.at, column.end);
  let n = 0;
  while (r.at < r.end) {
    const count = r.sleb();
    if (count > 0) {
      r.uleb();
      n += count;
    } else if (count < 0) {
      for (let i = 0; i < -count; i++) r.uleb();
      n -= count;
    } else n += r.uleb();
    if (n > 1_000_000) throw new NotOurs();
  }
  return n;
}
