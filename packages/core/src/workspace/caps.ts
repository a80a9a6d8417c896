/**
 * The capability manifest beside a workspace (`kumiki.caps.json`, the public toolchain's name,
 * stdlib.md §2.5): the custom capabilities `app.caps` may declare. The write gate, `check` and `fix`
 * of every edge read it through here, so the CLI and the MCP server judge one workspace alike.
 */
import fs from "node:fs";
import path from "node:path";
import type { CapabilityManifest } from "../lang/stdlib.js";

/** The manifest's file name, in the folder that holds `.kumiki/`. */
export const CAPS_FILE = "kumiki.caps.json";

/** Why a manifest could not be used: `caps-unreadable` (I/O) or `caps-invalid` (its content). */
export interface CapsError {
  readonly code: "caps-unreadable" | "caps-invalid";
  readonly message: string;
  readonly details: { readonly path: string };
}

/**
 * The manifest of the workspace rooted at `root`: undefined when there is none, an error (with the
 * file's path and what to do) when it cannot be read or is not a manifest.
 */
export function readCapabilityManifest(
  root: string,
): { ok: true; value: CapabilityManifest | undefined } | { ok: false; error: CapsError } {
  const file = path.join(root, CAPS_FILE);
  const fail = (code: CapsError["code"], message: string) => ({
    ok: false as const,
    error: { code, message, details: { path: file } },
  });
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, value: undefined };
    return fail("caps-unreadable", `${file}: cannot read (${(e as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return fail("caps-invalid", `${file} is not JSON (${(e as Error).message}): fix or remove it`);
  }
  const list = (parsed as { capabilities?: unknown } | null)?.capabilities;
  if (!Array.isArray(list)) {
    return fail(
      "caps-invalid",
      `${file} needs a "capabilities" list, e.g. {"capabilities": [{"name": "telemetry.track"}]}`,
    );
  }
  return { ok: true, value: parsed as CapabilityManifest };
}
