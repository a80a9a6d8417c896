/**
 * A workspace's kept check (`.kumiki/cache/live-check*.jsonl`, storage's `KeptChecksFile`) as the
 * tests of the CLI and of the MCP server read it, and a finding planted in it: proof, when a check
 * shows that finding, that the check went on from the kept state rather than checking in full.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KeptChecksFile, workspacePaths } from "@kumiki-graph/storage-automerge/read";

/** The file's shape, as far as these tests read it. */
export interface KeptCheckFile {
  stamp: string;
  entries: {
    key: string;
    state: { at: string; checker: { defs: { id: string; diagnostics?: unknown[] }[] } };
  }[];
}

/**
 * The kept check at `file` (in a workspace's `.kumiki/cache/`), its changes applied, as the store
 * reads it: the stamp from its header; no entries when it does not read.
 */
export function readKeptCheck(file: string): KeptCheckFile {
  const header = JSON.parse(readFileSync(file, "utf8").split("\n", 1)[0]!) as { stamp: string };
  const root = path.dirname(path.dirname(path.dirname(file)));
  const kept = new KeptChecksFile(workspacePaths(root), header.stamp, path.basename(file));
  const entries = [...kept.entries()].map(([key, state]) => ({ key, state }));
  return { stamp: header.stamp, entries: entries as unknown as KeptCheckFile["entries"] };
}

/** Writes `kept`'s first state over `file`, whole (its header and that state, no changes after it). */
export function writeKeptCheck(file: string, kept: KeptCheckFile): void {
  const [entry] = kept.entries;
  const lines = [
    { v: 2, stamp: kept.stamp },
    { key: entry!.key, state: entry!.state },
  ];
  writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

/**
 * Plants a finding whose message is `message` (a warning, or an error) on a definition of the
 * file's first state that has none (pick a program where nothing the test changes is that
 * definition).
 */
export function plantInKeptCheck(
  file: string,
  message: string,
  severity: "warning" | "error" = "warning",
): void {
  const kept = readKeptCheck(file);
  const def = kept.entries[0]!.state.checker.defs.find((d) => d.diagnostics === undefined)!;
  const code = severity === "error" ? "E0201" : "W0001";
  def.diagnostics = [{ code, kind: "planted", severity, location: "x", message, definition: def.id }];
  writeKeptCheck(file, kept);
}
