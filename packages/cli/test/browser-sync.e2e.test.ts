/**
 * A graph in a page and in a workspace, through one `kumiki serve` (issue 40): the example page
 * (examples/browser-sync/, built with Vite) runs in a real headless Chromium, opens the workspace's
 * graph from the server over WebSocket with a token, writes; the workspace's `kumiki sync` sees the
 * page's op, and the page sees the workspace's next op live. Opened again in a new tab without a
 * server, the page still has every op (IndexedDB). Bad input is refused at once.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { generateAutomergeUrl } from "@automerge/automerge-repo";
import { buildPage, nodeImports } from "@kumiki-graph/test-support/bundles";
import { CHROMIUM_INSTALL, chromiumOrSkip, serveFolder } from "@kumiki-graph/test-support/chromium";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, runBin, startServe, stopBin, tempDir } from "./support.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const example = path.join(repoRoot, "examples", "browser-sync");
const binary = chromiumOrSkip();
const TOKEN = "page-token-0123456789abcdef";

/** What the page's `(globalThis as unknown as PageGlobal).kumikiPage` answers (examples/browser-sync/main.js). */
interface PageAnswer {
  readonly ok: boolean;
  readonly graph?: string;
  readonly ops?: number;
  readonly opIds?: readonly string[];
  readonly error?: { readonly code: string; readonly message: string };
}

/** The page's global scope (the test's TypeScript has no DOM library: the page is reached by `globalThis`). */
interface PageGlobal {
  readonly kumikiPage: {
    open(options: Record<string, unknown>): Promise<PageAnswer>;
    add(input: { layer: string; name: string; body: string }): Promise<PageAnswer>;
    program(): string;
    close(): Promise<void>;
  };
}

describe.skipIf(binary === undefined)(
  `a graph in a browser page, synced through kumiki serve with a workspace (without Chromium: ${CHROMIUM_INSTALL})`,
  () => {
    let root: string;
    let built: string;
    /** The built page's assets (its script, Automerge's WebAssembly). */
    let pageBytes: readonly (readonly [string, Buffer])[];
    let site: Awaited<ReturnType<typeof serveFolder>>;
    let server: { child: ChildProcess; url: string };
    let browser: Browser;
    let ws: string;
    let graph: string;
    const env = { KUMIKI_AUTHOR: "agent:cli" };
    const kumiki = (...argv: string[]) => runBin(argv, { cwd: ws, env });

    beforeAll(async () => {
      root = tempDir("browser-sync");
      built = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-browser-sync-page-"));
      const page = await buildPage(example, built);
      // The storage package's browser entry reaches no Node built-in (Vite would stand one in, and say so).
      expect(page.stoodIn).toEqual([]);
      expect(nodeImports(page.code)).toEqual([]);
      pageBytes = page.assets;
      site = await serveFolder(built);
      fs.writeFileSync(
        path.join(root, "tokens.json"),
        JSON.stringify({
          format: 1,
          tokens: [{ name: "people", token: TOKEN, graphs: { "*": "write" } }],
        }),
      );
      fs.writeFileSync(path.join(root, "token"), TOKEN);
      server = await startServe(root);
      ws = path.join(root, "ws");
      fs.mkdirSync(ws);
      expect(kumiki("init").code).toBe(0);
      expect(kumiki("add", "slot", "count", ": Int = 1").code).toBe(0);
      expect(
        kumiki("remote", "add", "origin", server.url, "--token-file", path.join(root, "token")).code,
      ).toBe(0);
      const pushed = kumiki("sync", "--timeout", "30");
      expect(pushed.code, pushed.err).toBe(0);
      graph = JSON.parse(fs.readFileSync(path.join(ws, ".kumiki", "config.json"), "utf8")).graph;
      browser = await chromium.launch({
        executablePath: binary!,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      });
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      await site?.close();
      if (server !== undefined) await stopBin(server.child);
      cleanup(root, built);
    });

    /** A tab of the example page, opened with `query`, once its graph is open (or refused). */
    async function tab(context: Awaited<ReturnType<Browser["newContext"]>>, query: string): Promise<Page> {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${site.url}?${query}`);
      await page
        .locator("#program:not([data-state=opening])")
        .waitFor({ state: "attached", timeout: 30_000 });
      expect(errors).toEqual([]);
      return page;
    }

    /** `kumiki sync`, then the workspace's program: again until `want` is in it (at most 20 times). */
    function syncUntil(want: string): string {
      let text = "";
      for (let i = 0; i < 20 && !text.includes(want); i++) {
        const r = kumiki("sync", "--timeout", "20");
        expect(r.code, r.err).toBe(0);
        text = kumiki("view", "slot.*").out;
      }
      return text;
    }

    it("a page opens the workspace's graph from the server, writes, and the workspace syncs its op", async () => {
      const context = await browser.newContext();
      try {
        const page = await tab(
          context,
          new URLSearchParams({ graph, server: server.url, token: TOKEN, author: "user:page" }).toString(),
        );
        expect(await page.locator("#program").getAttribute("data-state")).toBe("open");
        expect(
          await page.evaluate(() => (globalThis as unknown as PageGlobal).kumikiPage.program()),
        ).toContain("slot count : Int = 1");
        // The checker is the page's write gate too: a type error is refused, nothing stored.
        const refused = await page.evaluate(() =>
          (globalThis as unknown as PageGlobal).kumikiPage.add({
            layer: "slot",
            name: "bad",
            body: ': Int = "x"',
          }),
        );
        expect(refused.error?.code).toBe("validation-failed");
        const t0 = performance.now();
        const added = await page.evaluate(() =>
          (globalThis as unknown as PageGlobal).kumikiPage.add({
            layer: "slot",
            name: "fromPage",
            body: ": Int = count + 1",
          }),
        );
        expect(added.ok, added.error?.message).toBe(true);
        const seen = syncUntil("fromPage");
        const pageToCli = performance.now() - t0;
        expect(seen).toContain("slot fromPage : Int = count + 1");
        expect(seen).not.toContain("slot bad");

        // The reverse, live: the workspace writes and syncs; the open page shows it.
        const t1 = performance.now();
        expect(kumiki("add", "slot", "fromCli", ": Int = fromPage * 2").code).toBe(0);
        expect(kumiki("sync", "--timeout", "20").code).toBe(0);
        await page.waitForFunction(
          () => (globalThis as unknown as PageGlobal).kumikiPage.program().includes("slot fromCli"),
          undefined,
          {
            timeout: 20_000,
          },
        );
        const cliToPage = performance.now() - t1;
        const sizes = pageBytes.map(([f, b]) => `${f} ${b.length} B (gzip ${gzipSync(b).length})`).join(", ");
        console.info(
          `browser sync round trip: page write → CLI sync sees it ${pageToCli.toFixed(0)} ms; CLI add+sync → page shows it ${cliToPage.toFixed(0)} ms; page: ${sizes}`,
        );
        await page.evaluate(() => (globalThis as unknown as PageGlobal).kumikiPage.close());

        // Opened again (a new tab of the same origin) with no server at all: IndexedDB holds the graph,
        // the page's op and the workspace's.
        const offline = await tab(context, new URLSearchParams({ graph, author: "user:page" }).toString());
        const text = await offline.evaluate(() => (globalThis as unknown as PageGlobal).kumikiPage.program());
        for (const want of ["slot count : Int = 1", "slot fromPage", "slot fromCli"])
          expect(text).toContain(want);
        // Written offline, then opened with the server again: the workspace gets it.
        const later = await offline.evaluate(() =>
          (globalThis as unknown as PageGlobal).kumikiPage.add({
            layer: "slot",
            name: "offline",
            body: ": Int = 7",
          }),
        );
        expect(later.ok, later.error?.message).toBe(true);
        await offline.evaluate(() => (globalThis as unknown as PageGlobal).kumikiPage.close());
        await tab(
          context,
          new URLSearchParams({ graph, server: server.url, token: TOKEN, author: "user:page" }).toString(),
        );
        expect(syncUntil("slot offline")).toContain("slot offline : Int = 7");
      } finally {
        await context.close();
      }
    }, 180_000);

    it("refuses bad input at once, saying what was wrong and what to give", async () => {
      const context = await browser.newContext();
      try {
        const page = await tab(context, new URLSearchParams({ author: "user:page" }).toString());
        const cases = [
          [{ author: "user:page", graph: "not-a-graph" }, "invalid-url", /not a graph URL/],
          [
            { author: "user:page", graph, server: { url: "http://127.0.0.1:1" } },
            "invalid-url",
            /not a WebSocket URL/,
          ],
          [{ author: "user:page", graph, server: { url: `${server.url}?token=x` } }, "invalid-url", /token/],
          [{ author: "no body", graph }, "invalid-author", /invalid author "no body"/],
          // A graph this page does not hold, and no server to fetch it from.
          [
            { author: "user:page", graph: generateAutomergeUrl(), timeoutMs: 500 },
            "graph-unavailable",
            /not in this page's IndexedDB/,
          ],
        ] as const;
        for (const [options, code, message] of cases) {
          const r = await page.evaluate(
            (o) => (globalThis as unknown as PageGlobal).kumikiPage.open(o),
            options as Record<string, unknown>,
          );
          expect([r.ok, r.error?.code], JSON.stringify(r)).toEqual([false, code]);
          expect(r.error?.message).toMatch(message);
          expect(r.error!.message.length).toBeLessThan(400);
        }
      } finally {
        await context.close();
      }
    }, 120_000);
  },
);
