/**
 * A real headless Chromium for browser tests: Debian's `chromium` package (or the binary
 * `KUMIKI_CHROMIUM` names), driven by playwright-core — never a browser downloaded at run time.
 * Where none is found a test skips, saying how to install one; under `CI=true` it fails instead,
 * so that a CI machine without the browser cannot pass by skipping.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

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

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".wasm": "application/wasm",
  ".css": "text/css",
};

/**
 * Serves the files of `dir` (a built page) on 127.0.0.1 at a free port, for a browser to load;
 * `close` stops it. Nothing outside `dir` is served.
 */
export async function serveFolder(dir: string): Promise<{ readonly url: string; close(): Promise<void> }> {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = path.join(root, rel === "/" ? "index.html" : rel);
    if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" })
      .end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
