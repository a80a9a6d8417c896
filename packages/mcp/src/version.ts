/**
 * The versions `kumiki mcp serve --version` prints: this adapter, the core it delegates to, the
 * specification they implement, and the MCP protocol revision the SDK speaks. They are released
 * separately, so each is stated on its own.
 */
import { readFileSync } from "node:fs";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

/**
 * The Kumiki specification this server implements: ai-edit.md §9.7 of the public kumikijs/Kumiki
 * docs/spec at commit 69e43e9 (2026-08-08), the text the project was built against.
 */
export const SPEC_VERSION = "kumiki-spec@69e43e9 (ai-edit.md §9.7)";

function versionAt(packageJson: URL): string {
  return (JSON.parse(readFileSync(packageJson, "utf8")) as { version: string }).version;
}

/** This package's version, from its own package.json. */
export const MCP_VERSION: string = versionAt(new URL("../package.json", import.meta.url));

/** What `--version` reports. */
export interface Versions {
  /** `@kumiki-graph/mcp`. */
  readonly server: string;
  /** `@kumiki-graph/core`, as resolved from this package (the copy actually loaded). */
  readonly core: string;
  readonly spec: string;
  /** The MCP protocol revision. */
  readonly protocol: string;
}

/** The versions of the server, the core it loads, the spec and the protocol. */
export function versions(): Versions {
  // The core entry resolves to <core>/dist/index.js; its package.json is one level up.
  const coreEntry = new URL(import.meta.resolve("@kumiki-graph/core"));
  return {
    server: MCP_VERSION,
    core: versionAt(new URL("../package.json", coreEntry)),
    spec: SPEC_VERSION,
    protocol: LATEST_PROTOCOL_VERSION,
  };
}
