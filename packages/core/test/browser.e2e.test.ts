/**
 * `@kumiki-graph/core` in a browser (issue 40): the example page (examples/browser/) bundles with
 * esbuild and with Vite for the browser — the package's `browser` condition reaches no Node
 * built-in — and runs in a real headless Chromium (Debian's, driven by playwright-core), where the
 * store, its write gate (the checker) and `checkStore` answer exactly as the main entry does in Node.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as core from "@kumiki-graph/core";
import { buildPage, keptWarnings, nodeImports } from "@kumiki-graph/test-support/bundles";
import { CHROMIUM_INSTALL, chromiumOrSkip, serveFolder } from "@kumiki-graph/test-support/chromium";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const page = path.join(root, "examples", "browser");
const binary = chromiumOrSkip();

describe("@kumiki-graph/core in a browser", () => {
  let out: string;
  /** An entry that re-exports every name of the package (a page's bundle keeps only what it uses). */
  let everything: string;
  beforeAll(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-browser-"));
    // Inside the repository's node_modules, so that the bare import resolves as from a user's project.
    everything = fs.mkdtempSync(path.join(root, "node_modules", ".kumiki-browser-"));
    fs.writeFileSync(path.join(everything, "everything.js"), 'export * from "@kumiki-graph/core";\n');
  });
  afterAll(() => {
    fs.rmSync(out, { recursive: true, force: true });
    fs.rmSync(everything, { recursive: true, force: true });
  });

  it.each(["the page", "every export"])(
    "bundles %s with esbuild for the browser, with no Node built-in",
    async (what) => {
      const r = await esbuild.build({
        entryPoints: [
          what === "the page" ? path.join(page, "main.js") : path.join(everything, "everything.js"),
        ],
        bundle: true,
        platform: "browser",
        format: "esm",
        minify: true,
        write: false,
        logLevel: "silent",
      });
      expect(r.errors).toEqual([]);
      const code = r.outputFiles.map((f) => f.text).join("");
      expect(nodeImports(code)).toEqual([]);
      expect(code).toContain("checkStore");
    },
  );

  it("bundles every export with Vite for the browser (library mode), with no Node built-in", async () => {
    const warnings: string[] = [];
    const lib = path.join(out, "lib");
    await build({
      root: everything,
      logLevel: "silent",
      customLogger: keptWarnings(warnings),
      build: {
        outDir: lib,
        emptyOutDir: true,
        lib: { entry: path.join(everything, "everything.js"), formats: ["es"], fileName: "everything" },
      },
    });
    expect(warnings.filter((w) => /externalized for browser|node:/.test(w))).toEqual([]);
    const code = fs.readFileSync(path.join(lib, "everything.js"), "utf8");
    expect(code).not.toContain("__vite-browser-external");
    expect(nodeImports(code)).toEqual([]);
  }, 120_000);

  it("bundles the page with Vite for the browser, with no Node built-in", async () => {
    const built = await buildPage(page, out, false);
    // Vite stands an empty module in for a Node built-in, and says so in a warning.
    expect(built.stoodIn).toEqual([]);
    expect(built.code).not.toContain("__vite-browser-external");
    expect(nodeImports(built.code)).toEqual([]);
  }, 120_000);

  it.skipIf(binary === undefined)(
    `runs in Chromium as in Node: writes, the checker's refusal, a rename, a check (without Chromium: ${CHROMIUM_INSTALL})`,
    async () => {
      const server = await serveFolder(out);
      const browser = await chromium.launch({ executablePath: binary!, args: ["--no-sandbox"] });
      try {
        const tab = await browser.newPage();
        const errors: string[] = [];
        tab.on("pageerror", (e) => errors.push(e.message));
        await tab.goto(server.url);
        const result = tab.locator("#result:not([data-state=running])");
        await result.waitFor({ timeout: 60_000 });
        expect(await result.getAttribute("data-state"), (await result.textContent()) ?? "").toBe("done");
        expect(errors).toEqual([]);
        const inPage = JSON.parse((await result.textContent()) ?? "");
        const { scenario } = (await import(pathToScenario())) as {
          scenario: (c: typeof core) => Promise<unknown>;
        };
        const inNode = await scenario(core);
        expect(inPage).toEqual(inNode);
        // What the scenario shows, so that two equal wrong answers cannot pass.
        expect(inPage.program).toBe("slot total : Int = 0\nslot twice : Int = total + total\n");
        expect(inPage.steps[1]).toMatch(/^add slot\.label: refused \(validation-failed\) .*E0201/);
      } finally {
        await browser.close();
        await server.close();
      }
    },
    120_000,
  );
});

function pathToScenario(): string {
  return path.join(page, "scenario.js");
}
