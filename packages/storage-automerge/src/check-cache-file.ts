/**
 * A workspace's check results kept in `.kumiki/cache/check.json`, so that a `kumiki check` of ops
 * nobody changed since the last one answers without checking (core's `CheckCache`).
 */
import path from "node:path";
// Types only: this entry loads no more of core than its read entry.
import type { CheckCache, Diagnostic } from "@kumiki-graph/core";
import { putCacheEntry, readCacheEntries } from "./cache-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

/** Results kept for this many (state, options) pairs, the latest first. */
const ENTRIES = 4;

interface Entry {
  readonly key: string;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * {@link CheckCache} over `.kumiki/cache/check.json`, bound to `state` (what the ops the store read
 * are: `readWorkspaceOps`' `state`). `stamp` names the code that checked (the CLI passes its own
 * module's URL, whose bundle file name changes with its content): results of another stamp are
 * dropped, so an upgraded checker never answers with an older one's findings.
 *
 * Written by rename from a temporary file, without fsync: a cache lost to a crash is a miss. A file
 * that cannot be read or does not have the expected shape is a miss too; nothing here throws.
 */
export class CheckCacheFile implements CheckCache {
  private readonly file: string;

  constructor(
    private readonly paths: WorkspacePaths,
    readonly state: string,
    private readonly stamp: string,
  ) {
    this.file = path.join(paths.cache, "check.json");
  }

  /** The diagnostics kept under `key` for this state by this build, or undefined (a miss). */
  get(key: string): readonly Diagnostic[] | undefined {
    return this.read().find((e) => e.key === key)?.diagnostics;
  }

  /** Keeps `diagnostics` under `key` for this state (the file's last few results; a failed write is ignored). */
  put(key: string, diagnostics: readonly Diagnostic[]): void {
    putCacheEntry(this.paths, this.file, this.stamp, this.read(), { key, diagnostics }, ENTRIES);
  }

  private read(): Entry[] {
    return readCacheEntries<Entry>(this.file, this.stamp, (e) => Array.isArray(e.diagnostics));
  }
}
