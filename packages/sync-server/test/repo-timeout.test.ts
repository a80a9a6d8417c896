/**
 * automerge-repo's own 60-second wait for a document that never became ready rejects where no one
 * catches it (its synchronizer's beginSync); after a storage fault left a document loading, that
 * unhandled TimeoutError ended the sync server about a minute later. A real process: the server
 * serves on after such a rejection, and a bug's rejection still ends it.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const DIST = fileURLToPath(new URL("../dist/index.js", import.meta.url));
/** automerge-repo's own TimeoutError, from where the server's copy of the package is. */
const WITH_TIMEOUT = createRequire(DIST).resolve("@automerge/automerge-repo/helpers/withTimeout.js");

describe("an unhandled rejection in the server process", () => {
  it("automerge-repo's TimeoutError is logged and the server serves on; any other still ends it", async () => {
    const root = tempDir("repo-timeout");
    dirs.push(root);
    const script = path.join(root, "serve.mjs");
    fs.writeFileSync(
      script,
      `import { startSyncServer } from ${JSON.stringify(pathToFileURL(DIST).href)};
import { TimeoutError } from ${JSON.stringify(pathToFileURL(WITH_TIMEOUT).href)};
const s = await startSyncServer({ dataDir: ${JSON.stringify(path.join(root, "data"))} });
if (!s.ok) throw new Error(s.error.message);
Promise.reject(new TimeoutError("withTimeout: timed out after 60000ms"));
setTimeout(async () => {
  const h = await fetch(s.value.url.replace("ws", "http") + "/health");
  console.log("alive", h.status);
  Promise.reject(new Error("a bug"));
}, 200);
`,
    );
    const child = spawn(process.execPath, [script], {
      cwd: path.dirname(DIST),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString("utf8");
    });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.once("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(out).toContain("alive 200");
    expect(err).toMatch(
      /withTimeout: timed out after 60000ms \(a document did not become ready\); serving on/,
    );
    // The bug's rejection still ends the process, as it would without the handler.
    expect(err).toContain("a bug");
    expect(code).not.toBe(0);
  }, 30_000);
});
