/**
 * A workspace's live checks kept in `.kumiki/cache/live-check.jsonl` (core's `KeptChecks`): what a
 * write in a process of its own goes on from, so that its gate re-checks only what it touches.
 *
 * One JSON value per line: a header (`{v, stamp}`), a state in full (`{key, state}`), then what
 * each later put changed (`{key, from, at, defs, gone, unparsed, timers}`): the definitions whose
 * entry the new state does not hold as the same object as the state this file read (a resumed
 * check keeps the entries it did not re-check as they were parsed), and the identities it no
 * longer holds. A state is about 240 bytes per definition (1.2 MB at 5,000), which every write
 * wrote whole: 8–10 ms of a write's CPU at 5,000 definitions, 35 at 20,000; a change is a few
 * hundred bytes. A change applies to the state under `from`: one that does not (two processes
 * that went on from one state: the later one's) is skipped, as is a line that does not parse (an
 * append being written). After {@link MOST_CHANGES} changes, or changes of more than a quarter of
 * the state's bytes, the next put writes the state whole again.
 */
import fs from "node:fs";
import path from "node:path";
// Types only: this entry loads no more of core than its read entry.
import type { CheckedDefinition, KeptChecks, LiveCheckState } from "@kumiki-graph/core";
import { writeCacheFile } from "./cache-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

/** Changes appended before a put writes the state whole (each is parsed by every read). */
const MOST_CHANGES = 64;

/** A state and what its file holds: the line it was written whole in, the changes after it. */
interface Held {
  readonly key: string;
  readonly state: LiveCheckState;
  readonly changes: number;
  /** Bytes of the line of the state in full, and of the changes appended after it. */
  readonly whole: number;
  readonly appended: number;
}

/** A change line (see the module comment). */
interface Change {
  readonly key: string;
  readonly from: string;
  readonly at: string;
  readonly defs: readonly CheckedDefinition[];
  readonly gone: readonly string[];
  readonly unparsed: LiveCheckState["unparsed"];
  readonly timers: LiveCheckState["timers"];
}

/**
 * {@link KeptChecks} over `.kumiki/cache/live-check.jsonl` (or another file of that folder), the
 * latest state only: a state of the graph before the last write is of no use to the next.
 * `stamp` names the code that checked (as for the check cache file): a state of another stamp is
 * never read, so an upgraded checker never goes on from an older one's findings. A state is
 * written whole by rename from a temporary file, a change appended; neither is synced (a state
 * lost to a crash costs the next write a full check). A file that cannot be read or is not of this
 * shape is a miss; nothing here throws.
 */
export class KeptChecksFile implements KeptChecks {
  private readonly file: string;
  /** The file as last read or written by this object (a process reads it at most once); null: not read yet. */
  private held: Held | undefined | null = null;

  /**
   * `name`: the file in the cache folder (the CLI's is `live-check.jsonl`). Code of another stamp
   * that keeps states in a workspace (the MCP server) keeps them in a file of its own: a file holds
   * one stamp's, and each process would otherwise replace the other's.
   */
  constructor(
    private readonly paths: WorkspacePaths,
    private readonly stamp: string,
    name = "live-check.jsonl",
  ) {
    this.file = path.join(paths.cache, name);
  }

  /** The state kept under `key` by this build, or undefined (a miss). */
  get(key: string): LiveCheckState | undefined {
    const held = this.read();
    return held?.key === key ? held.state : undefined;
  }

  /**
   * Keeps `state` under `key` in place of the state kept before (a failed write is ignored): as
   * what changed since the state this object read or wrote when that is where it goes on from.
   */
  put(key: string, state: LiveCheckState): void {
    const held = this.read();
    if (held !== undefined && held.changes < MOST_CHANGES) {
      const line = changeLine(held, key, state);
      if (line !== undefined && held.appended + line.length <= held.whole / 4) {
        try {
          fs.appendFileSync(this.file, line);
          this.held = {
            ...held,
            key,
            state,
            changes: held.changes + 1,
            appended: held.appended + line.length,
          };
          return;
        } catch {
          // Written whole below (or not at all, as a full folder leaves it).
        }
      }
    }
    const whole = `${JSON.stringify({ key, state })}\n`;
    writeCacheFile(this.paths, this.file, [this.header(), whole]);
    this.held = { key, state, changes: 0, whole: whole.length, appended: 0 };
  }

  /** The state kept by this build, with its key (one at most: a file keeps the latest). */
  entries(): Iterable<readonly [string, LiveCheckState]> {
    const held = this.read();
    return held === undefined ? [] : [[held.key, held.state] as const];
  }

  private header(): string {
    return `${JSON.stringify({ v: 2, stamp: this.stamp })}\n`;
  }

  private read(): Held | undefined {
    if (this.held !== null) return this.held;
    this.held = undefined;
    let text: string;
    try {
      text = fs.readFileSync(this.file, "utf8");
    } catch {
      return undefined;
    }
    const header = this.header();
    if (!text.startsWith(header)) return undefined;
    const end = text.indexOf("\n", header.length);
    const whole = parseLine(text.slice(header.length, end < 0 ? undefined : end + 1)) as
      | Partial<Held>
      | undefined;
    if (typeof whole?.key !== "string" || !isState(whole.state) || end < 0) return undefined;
    this.held = applyChanges(
      { key: whole.key, state: whole.state, changes: 0, whole: end + 1 - header.length, appended: 0 },
      text,
      end + 1,
    );
    return this.held;
  }
}

/** `held` with the changes in `text` from `at` on applied, each to the state it goes on from. */
function applyChanges(held: Held, text: string, at: number): Held {
  let [key, changes, appended] = [held.key, 0, 0];
  let defs: Map<string, CheckedDefinition> | undefined;
  let last: Change | undefined;
  for (let from = at; from < text.length; ) {
    const end = text.indexOf("\n", from);
    const line = text.slice(from, end < 0 ? undefined : end + 1);
    from = end < 0 ? text.length : end + 1;
    changes++;
    appended += line.length;
    const c = parseLine(line) as Partial<Change> | undefined;
    if (c === undefined || !isChange(c) || c.from !== key || end < 0) continue;
    if (defs === undefined) {
      defs = new Map();
      for (const d of held.state.checker.defs) defs.set(d.id, d);
    }
    for (const id of c.gone) defs.delete(id);
    // A re-checked definition's entry comes after the others, as in the state the put was given.
    for (const d of c.defs) {
      defs.delete(d.id);
      defs.set(d.id, d);
    }
    key = c.key;
    last = c;
  }
  if (last === undefined || defs === undefined) return { ...held, changes, appended };
  const state: LiveCheckState = {
    v: 1,
    at: last.at,
    checker: { v: 1, defs: [...defs.values()] },
    unparsed: last.unparsed,
    timers: last.timers,
  };
  return { ...held, key, state, changes, appended };
}

/**
 * The change line of `state` (under `key`) going on from `held`'s state, or undefined when it
 * does not: another checker or shape, or a state that holds none of `held`'s entries as they were.
 */
function changeLine(held: Held, key: string, state: LiveCheckState): string | undefined {
  if (state.v !== 1 || state.checker.v !== 1 || held.state.checker.v !== 1) return undefined;
  const before = new Set<CheckedDefinition>(held.state.checker.defs);
  const ids = new Set<string>();
  const defs: CheckedDefinition[] = [];
  for (const d of state.checker.defs) {
    ids.add(d.id);
    if (!before.has(d)) defs.push(d);
  }
  if (defs.length === state.checker.defs.length && defs.length > 0) return undefined;
  const gone: string[] = [];
  for (const d of held.state.checker.defs) if (!ids.has(d.id)) gone.push(d.id);
  const change: Change = {
    key,
    from: held.key,
    at: state.at,
    defs,
    gone,
    unparsed: state.unparsed,
    timers: state.timers,
  };
  return `${JSON.stringify(change)}\n`;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Whether `s` has a state's outer shape (core checks the rest as it resumes: a misfit is a full check). */
function isState(s: unknown): s is LiveCheckState {
  const state = s as Partial<LiveCheckState> | null;
  return (
    typeof state === "object" &&
    state !== null &&
    typeof state.at === "string" &&
    typeof state.checker === "object" &&
    state.checker !== null &&
    Array.isArray(state.checker.defs)
  );
}

function isChange(c: Partial<Change>): c is Change {
  return (
    typeof c.key === "string" &&
    typeof c.from === "string" &&
    typeof c.at === "string" &&
    Array.isArray(c.defs) &&
    c.defs.every((d) => typeof d?.id === "string") &&
    Array.isArray(c.gone) &&
    c.gone.every((id) => typeof id === "string") &&
    Array.isArray(c.unparsed) &&
    Array.isArray(c.timers)
  );
}
