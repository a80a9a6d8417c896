/**
 * A workspace's check results kept in `.kumiki/cache/check.json`, so that a `kumiki check` of ops
 * nobody changed since the last one answers without checking (core's `CheckCache`).
 */
import fs from "node:fs";
import path from "node:path";
// Types only: this entry loads no more of core than its read entry.
import type { CheckCache, Diagnostic } from "@kumiki-graph/core";
import { writeCacheFile } from "./cache-file.js";
import type { WorkspacePaths } from "./workspace-layout.js";

/** Results kept for this many (state, options) pairs, the latest first. */
const ENTRIES = 4;

interface Entry {
  readonly key: string;
  readonly diagnostics: readonly Diagnostic[];
}

interface CacheFile {
  readonly v: 1;
  readonly stamp: string;
  readonly entries: readonly Entry[];
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
    return this.read()?.entries.find((e) => e.key === key)?.diagnostics;
  }

  /** Keeps `diagnostics` under `key` for this state (the file's last few results; a failed write is ignored). */
  put(key: string, diagnostics: readonly Diagnostic[]): void {
    const kept = (this.read()?.entries ?? []).filter((e) => e.key !== key).slice(0, ENTRIES - 1);
    const next: CacheFile = { v: 1, stamp: this.stamp, entries: [{ key, diagnostics }, ...kept] };
    writeCacheFile(this.paths, this.file, JSON.stringify(next));
  }

  private read(): CacheFile | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(this.file, "utf8"));
    } catch {
      return undefined;
    }
    const f = parsed as Partial<CacheFile> | null;
    if (
      f === null ||
      typeof f !== "object" ||
      f.v !== 1 ||
      f.stamp !== this.stamp ||
      !Array.isArray(f.entries)
    )
      return undefined;
    const entries = f.entries.filter(
      (e): e is Entry =>
        typeof e === "object" && e !== null && typeof e.key === "string" && Array.isArray(e.diagnostics),
    );
    return { v: 1, stamp: f.stamp, entries };
  }
}
