/**
 * A workspace's live checks kept in `.kumiki/cache/live-check.json` (core's `KeptChecks`): what a
 * write in a process of its own goes on from, so that its gate re-checks only what it touches.
 */
import path from "node:path";
// Types only: this entry loads no more of core than its read entry.
import type { KeptChecks, LiveCheckState } from "@kumiki-graph/core";
import { putCacheEntry, readCacheEntries } from "./cache-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

/**
 * States kept: the latest only. Each is about 240 bytes per definition (1.2 MB at 5,000), read
 * whole by the next write; a state of the graph before the last write is of no use to it.
 */
const ENTRIES = 1;

interface Entry {
  readonly key: string;
  readonly state: LiveCheckState;
}

/**
 * {@link KeptChecks} over `.kumiki/cache/live-check.json` (or another file of that folder).
 * `stamp` names the code that checked (as for the check cache file): a state of another stamp is
 * never read, so an upgraded checker never goes on from an older one's findings. Written by rename from a temporary file, without
 * fsync (a state lost to a crash costs the next write a full check); a file that cannot be read
 * or is not of this shape is a miss; nothing here throws.
 */
export class KeptChecksFile implements KeptChecks {
  private readonly file: string;
  /** The file as last read or written by this object (a process reads it at most once). */
  private held: readonly Entry[] | undefined;

  /**
   * `name`: the file in the cache folder (the CLI's is `live-check.json`). Code of another stamp
   * that keeps states in a workspace (the MCP server) keeps them in a file of its own: a file holds
   * one stamp's, and each process would otherwise replace the other's.
   */
  constructor(
    private readonly paths: WorkspacePaths,
    private readonly stamp: string,
    name = "live-check.json",
  ) {
    this.file = path.join(paths.cache, name);
  }

  /** The state kept under `key` by this build, or undefined (a miss). */
  get(key: string): LiveCheckState | undefined {
    return this.read().find((e) => e.key === key)?.state;
  }

  /** Keeps `state` under `key` (the latest few; a failed write is ignored). */
  put(key: string, state: LiveCheckState): void {
    this.held = putCacheEntry(this.paths, this.file, this.stamp, this.read(), { key, state }, ENTRIES);
  }

  /** Every state kept by this build, with its key (the latest only: a file keeps one). */
  entries(): Iterable<readonly [string, LiveCheckState]> {
    return this.read().map((e) => [e.key, e.state] as const);
  }

  private read(): readonly Entry[] {
    this.held ??= readCacheEntries<Entry>(this.file, this.stamp, (e) => typeof e.state === "object");
    return this.held;
  }
}
