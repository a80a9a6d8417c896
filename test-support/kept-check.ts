/**
 * A workspace's kept check (`.kumiki/cache/live-check*.json`, storage's `KeptChecksFile`) as the
 * tests of the CLI and of the MCP server read it, and a finding planted in it: proof, when a check
 * shows that finding, that the check went on from the kept state rather than checking in full.
 */
import { readFileSync, writeFileSync } from "node:fs";

/** The file's shape, as far as these tests read it. */
export interface KeptCheckFile {
  stamp: string;
  entries: {
    key: string;
    state: { at: string; checker: { defs: { id: string; diagnostics?: unknown[] }[] } };
  }[];
}

/** The kept check at `file`, parsed. */
export function readKeptCheck(file: string): KeptCheckFile {
  return JSON.parse(readFileSync(file, "utf8")) as KeptCheckFile;
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
  writeFileSync(file, JSON.stringify(kept));
}
