/**
 * A workspace's table of every definition (core's `definitionTable`) kept in
 * `.kumiki/cache/definitions.jsonl` for the state of the ops it was made from: what `kumiki view`,
 * `list`, `refs` and `status` in a process of their own answer from without reading op-log.jsonl
 * or folding it.
 *
 * One JSON value per line: a header (`{v, stamp}`), a row per definition, and a trailer naming the
 * state the rows above it make and what `status` says of it (`{state, n, status}`). A write in a
 * process of its own appends the rows it changed and a trailer of its new state (core's
 * `changedRows`): a row stands in for its definition's rows before it. A lookup reads the file's
 * bytes and parses only the lines it finds by searching them (the row of a name that shows, the
 * rows of what it references, the rows that hold an identity), or each row's first five values for
 * a list: parsing all of it took 52 ms at 5,000 definitions (2.5 MB). A row is found by bytes only
 * an unescaped quote can make (`,"slot","todos",true,true,`: inside a JSON string a quote is
 * escaped), and core checks every row it is given.
 */
import fs from "node:fs";
import path from "node:path";
import { writeCacheFile } from "./cache-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

/** A row by its first five values (core's `RowHead`). */
export interface TableRowHead {
  /** `[def, layer, name, alive, visible]`, parsed, not checked. */
  readonly head: unknown;
  /** The whole row, parsed when asked (not checked). */
  row(): unknown;
}

/** The rows core's `viewFromTable` looks up (core's `DefinitionRows`; structural, so this entry loads no core). */
export interface DefinitionRowLookup {
  /** The latest row that shows under `layer`.`name` (parsed, not checked), or undefined. */
  shownAs(layer: string, name: string): unknown;
  /** The latest row of the definition `def` (parsed, not checked), or undefined. */
  rowOf(def: string): unknown;
  /** The latest row of every definition: its first five values read, the rest on demand; undefined when a line does not read. */
  every(): readonly TableRowHead[] | undefined;
  /** The latest rows whose bytes hold `def`'s identity as a JSON string (parsed, not checked); undefined as for `every`. */
  referencing(def: string): readonly unknown[] | undefined;
  /** The status kept in the trailer (core's `statusOfState`; parsed, not checked), or undefined. */
  status(): unknown;
}

/**
 * The table file bound to `state` (`readWorkspaceOps`' `state`, or a store's after it wrote).
 * `stamp` names the code that made it (as for the check cache): another build's table is never
 * read. Written by rename from a temporary file, without fsync: a table lost to a crash is a miss,
 * and so is a file that cannot be read or is of another state; nothing here throws.
 */
export class DefinitionTableFile {
  private readonly file: string;

  constructor(
    private readonly paths: WorkspacePaths,
    readonly state: string,
    private readonly stamp: string,
  ) {
    this.file = path.join(paths.cache, "definitions.jsonl");
  }

  /** The table kept for this state by this build, to look rows up in; undefined (a miss) otherwise. */
  rows(): DefinitionRowLookup | undefined {
    const bytes = this.read();
    if (bytes === undefined) return undefined;
    const trailer = trailerOf(bytes);
    if (trailer?.state !== this.state) return undefined;
    const from = this.header().length;
    const rowStart = (def: string): number => bytes.lastIndexOf(`\n[${JSON.stringify(def)},`) + 1;
    let latest: Latest | undefined | null = null;
    let starts: Set<number> | undefined;
    const index = () => {
      if (latest === null) latest = latestRows(bytes, from);
      return latest;
    };
    return {
      // The latest row of a definition is the one that holds: a row appended for a write stands in
      // for the rows before it. So from the end, and a name's row only if no later row of its
      // definition says otherwise.
      shownAs: (layer, name) => {
        const needle = Buffer.from(`,${JSON.stringify(layer)},${JSON.stringify(name)},true,true,`);
        for (let at = bytes.lastIndexOf(needle); at >= from; at = bytes.lastIndexOf(needle, at - 1)) {
          const start = bytes.lastIndexOf(NEWLINE, at) + 1;
          const row = rowAround(bytes, at);
          if (Array.isArray(row) && typeof row[0] === "string" && rowStart(row[0]) === start) return row;
        }
        return undefined;
      },
      rowOf: (def) => {
        // Once every row's head was read, by that index (a byte search from the end is about 10 ms).
        if (latest) return latest.get(def)?.row();
        const start = rowStart(def);
        return start < from ? undefined : rowAround(bytes, start);
      },
      status: () => trailer.status,
      every: () => {
        const l = index();
        return l === undefined ? undefined : [...l.values()];
      },
      referencing: (def) => {
        const l = index();
        if (l === undefined) return undefined;
        starts ??= new Set([...l.values()].map((r) => r.start));
        const needle = Buffer.from(JSON.stringify(def));
        const out: unknown[] = [];
        let line = -1;
        for (let at = bytes.indexOf(needle, from); at >= 0; at = bytes.indexOf(needle, at + 1)) {
          const start = bytes.lastIndexOf(NEWLINE, at) + 1;
          if (start === line || !starts.has(start)) continue;
          line = start;
          out.push(rowAround(bytes, start));
        }
        return out;
      },
    };
  }

  /**
   * Keeps `rows` (core's `definitionRows`) as the table of this state, in place of any other, and
   * `status` (core's `statusOfState`) in its trailer (a failed write is ignored).
   */
  put(rows: Iterable<unknown>, status?: unknown): void {
    const header = this.header();
    const trailer = `${JSON.stringify({ state: this.state, n: 0, status })}\n`;
    writeCacheFile(
      this.paths,
      this.file,
      (function* () {
        yield header;
        for (const r of rows) yield `${JSON.stringify(r)}\n`;
        yield trailer;
      })(),
    );
  }

  /**
   * Makes the table of this state the table of `next` by appending `rows` (core's `changedRows` of
   * the write between them) and a trailer with `status` (of `next`), when the file holds this
   * state's table and fewer than 256 appends; says whether it did. Else the file stays as it is: a
   * view of `next` finds no table and keeps a whole one. An append cut short leaves no trailer of
   * `next`, which reads as no table.
   */
  append(next: string, rows: readonly unknown[], status?: unknown): boolean {
    try {
      // The header and the trailer only: a write does not read the table.
      const bytes = this.read(TAIL_BYTES);
      if (bytes === undefined) return false;
      const trailer = trailerOf(bytes);
      if (trailer?.state !== this.state || typeof trailer.n !== "number" || trailer.n >= MOST_APPENDS)
        return false;
      const lines = rows.map((r) => `${JSON.stringify(r)}\n`);
      lines.push(`${JSON.stringify({ state: next, n: trailer.n + 1, status })}\n`);
      fs.appendFileSync(this.file, lines.join(""));
      return true;
    } catch {
      return false;
    }
  }

  private header(): string {
    return `${JSON.stringify({ v: 1, stamp: this.stamp })}\n`;
  }

  /**
   * The file's bytes (with `last`, only its last `last` bytes) when its header is this build's,
   * checked before the rest is read; else undefined.
   */
  private read(last?: number): Buffer | undefined {
    const header = Buffer.from(this.header());
    try {
      const fd = fs.openSync(this.file, "r");
      try {
        const head = Buffer.alloc(header.length);
        if (fs.readSync(fd, head, 0, head.length, 0) !== head.length || !head.equals(header))
          return undefined;
        if (last === undefined) return fs.readFileSync(fd);
        const size = fs.fstatSync(fd).size;
        const tail = Buffer.alloc(Math.min(last, size));
        const n = fs.readSync(fd, tail, 0, tail.length, size - tail.length);
        return tail.subarray(0, n);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return undefined;
    }
  }
}

/** What an append reads of the file's end: more than a trailer takes (its state names at most 64 pending files). */
const TAIL_BYTES = 64 * 1024;

/** Appends a table takes before a view keeps a whole one again (each about a row, a few hundred bytes). */
const MOST_APPENDS = 256;

/** The last line of a table: the state its rows make, and how many appends made it. */
interface Trailer {
  readonly state?: unknown;
  readonly n?: unknown;
  readonly status?: unknown;
}

/** The last line of `bytes` as a trailer, when they end with a newline (an append cut short does not). */
function trailerOf(bytes: Buffer): Trailer | undefined {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== NEWLINE) return undefined;
  return parseLine(bytes, bytes.lastIndexOf(NEWLINE, bytes.length - 2) + 1, bytes.length - 1) as
    | Trailer
    | undefined;
}

/** The latest row of each definition, by identity: its head, where its line starts, the whole row on demand. */
type Latest = Map<unknown, TableRowHead & { readonly start: number }>;

/**
 * The latest row of each definition in the lines of `bytes` from `from` to the trailer: each row's
 * first five values parsed (identity, layer, name, alive, visible: the bytes up to the fifth comma
 * outside a string), the rest when asked. A list of 5,000 names so parses 5,000 short strings, not
 * 2.5 MB of texts. Lines of an object are the trailers of earlier states (appends follow them).
 * Undefined when another line is not a row's start.
 */
function latestRows(bytes: Buffer, from: number): Latest | undefined {
  const latest: Latest = new Map();
  const last = bytes.lastIndexOf(NEWLINE, bytes.length - 2) + 1;
  for (let start = from; start < last; ) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end < 0) return undefined;
    // The trailer of a state the appends after it made into another.
    if (bytes[start] === OPEN_BRACE) {
      start = end + 1;
      continue;
    }
    const cut = fifthComma(bytes, start, end);
    if (cut < 0) return undefined;
    let head: unknown;
    try {
      head = JSON.parse(`${bytes.toString("utf8", start, cut)}]`);
    } catch {
      return undefined;
    }
    if (!Array.isArray(head)) return undefined;
    const [s, e] = [start, end];
    // A later row of a definition stands in for the earlier ones.
    latest.set(head[0], { head, start, row: () => parseLine(bytes, s, e) });
    start = end + 1;
  }
  return latest;
}

/** The offset of the fifth comma outside a JSON string in the line `[start, end)`, or -1. */
function fifthComma(bytes: Buffer, start: number, end: number): number {
  let commas = 0;
  let inString = false;
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2c && ++commas === 5) return i;
  }
  return -1;
}

/** The JSON value of the line holding byte `at`, or undefined. */
function rowAround(bytes: Buffer, at: number): unknown {
  const start = bytes.lastIndexOf(NEWLINE, at) + 1;
  const end = bytes.indexOf(NEWLINE, at);
  return end < 0 ? undefined : parseLine(bytes, start, end);
}

function parseLine(bytes: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(bytes.toString("utf8", start, end));
  } catch {
    return undefined;
  }
}
