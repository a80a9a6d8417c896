/**
 * A real headless Chromium for browser tests: Debian's `chromium` package (or the binary
 * `KUMIKI_CHROMIUM` names), driven by playwright-core — never a browser downloaded at run time.
 * Where none is found a test skips, saying how to install one; under `CI=true` it fails instead,
 * so that a CI machine without the browser cannot pass by skipping.
 */
import fs from "node:fs";

/** How to get the browser these tests drive. */
export const CHROMIUM_INSTALL =
  "apt-get install -y chromium (Debian's package; or set KUMIKI_CHROMIUM to a Chromium binary)";

/** The Chromium binary to drive, or undefined when this machine has none. */
export function findChromium(): string | undefined {
  const candidates = [process.env.KUMIKI_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  return candidates.find((c): c is string => c !== undefined && c !== "" && fs.existsSync(c));
}

/**
 * The binary, or: under `CI=true` an error saying what to install; elsewhere undefined (the caller
 * skips, and its title says {@link CHROMIUM_INSTALL}).
 */
export function chromiumOrSkip(): string | undefined {
  const found = findChromium();
  if (found === undefined && process.env.CI === "true")
    throw new Error(`no Chromium on this CI machine: ${CHROMIUM_INSTALL}`);
  return found;
}
