/**
 * `kumiki ui` in a real headless Chromium (Debian's, through playwright-core): the live view of a
 * workspace holding the corpus's project-management example shows its definitions, follows a write
 * the CLI makes, shows a conflict two workspaces made through `kumiki serve`, and renders a
 * definition's history. Each view's screenshot is taken; with KUMIKI_UPDATE_SCREENSHOTS=1 it is
 * written to docs/ui/, where docs/ui.md shows what the page is.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { CHROMIUM_INSTALL, chromiumOrSkip } from "@kumiki-graph/test-support/chromium";
import { corpusMissingMessage, hasCorpus, kumikiShared, repoRoot } from "@kumiki-graph/test-support/corpus";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, runBin, startBin, startServe, stopBin, tempDir } from "./support.js";

/** What the page's functions read of it (the tests compile without the DOM's types). */
interface PageDoc {
  readonly document: {
    readonly body: { readonly dataset: Record<string, string | undefined> };
    querySelector(selector: string): { readonly textContent: string | null } | null;
  };
}

const binary = chromiumOrSkip();

/** The status of a GET of `url` whose Host header names `host` (what a DNS-rebinding page sends). */
/** How many definitions the page says it shows (the map's `data-definitions`). */
async function shownDefinitions(page: Page): Promise<number> {
  return Number(
    await page.evaluate(() => (globalThis as unknown as PageDoc).document.body.dataset.definitions),
  );
}

function statusAs(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on("error", reject);
  });
}
const example = path.join(kumikiShared, "examples", "apps", "05-project-management", "app.kumiki");
/**
 * Where the screenshots go: docs/ui/ with KUMIKI_UPDATE_SCREENSHOTS=1 (as KUMIKI_UPDATE_API=1
 * rewrites the API reports), else a folder of this run's, so that a test run leaves the tree as it
 * was (the page shows times, so every run's pictures differ). Taken either way.
 */
const shots =
  process.env.KUMIKI_UPDATE_SCREENSHOTS === "1"
    ? path.join(repoRoot, "docs", "ui")
    : fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-ui-shots-"));
afterAll(() => {
  if (process.env.KUMIKI_UPDATE_SCREENSHOTS !== "1") fs.rmSync(shots, { recursive: true, force: true });
});
const TOKEN = "ui-test-token-0123456789abcdef";
const VIEWER = "ui-test-viewer-0123456789abcdef";

describe.skipIf(binary === undefined || !hasCorpus)(
  `kumiki ui in Chromium${binary === undefined ? ` (skipped: no Chromium; ${CHROMIUM_INSTALL})` : ""}${hasCorpus ? "" : ` (skipped: ${corpusMissingMessage})`}`,
  () => {
    let root: string;
    let a: string;
    let b: string;
    let ui: { child: ChildProcess; url: string };
    let server: { child: ChildProcess; url: string };
    let browser: Browser;
    let page: Page;
    const errors: string[] = [];
    const kumiki = (cwd: string, author: string, ...argv: string[]) =>
      runBin(argv, { cwd, env: { KUMIKI_AUTHOR: author } });
    const rendered = (view: string) =>
      page.waitForFunction(
        (v) => (globalThis as unknown as PageDoc).document.body.dataset.rendered?.startsWith(v),
        view,
        { timeout: 20_000 },
      );

    beforeAll(async () => {
      root = tempDir("ui");
      fs.writeFileSync(
        path.join(root, "tokens.json"),
        JSON.stringify({
          format: 1,
          tokens: [
            { name: "agents", token: TOKEN, graphs: { "*": "write" } },
            { name: "viewer", token: VIEWER, graphs: { "*": "read" } },
          ],
        }),
      );
      fs.writeFileSync(path.join(root, "token"), TOKEN);
      a = path.join(root, "a");
      fs.mkdirSync(a);
      expect(kumiki(a, "agent:importer", "init").code).toBe(0);
      const imported = kumiki(a, "agent:importer", "import", example);
      expect(imported.code, imported.err).toBe(0);
      ui = await startBin(["ui", "--port", "0", "--store", a], /live view on (http:\/\/\S+)/, {
        KUMIKI_DAEMON: "off",
      });
      browser = await chromium.launch({
        executablePath: binary!,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      });
      page = await browser.newPage({ viewport: { width: 1400, height: 820 } });
      page.on("pageerror", (e) => errors.push(e.message));
      fs.mkdirSync(shots, { recursive: true });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      if (ui !== undefined) await stopBin(ui.child);
      if (server !== undefined) await stopBin(server.child);
      cleanup(root);
    });

    it("shows every definition of the example on the map, with the counts kumiki list and check give", async () => {
      await page.goto(ui.url);
      await rendered("map");
      const listed = (JSON.parse(kumiki(a, "agent:x", "list", "--json").out) as { definitions: unknown[] })
        .definitions;
      expect(await shownDefinitions(page)).toBe(listed.length);
      expect(await page.textContent("#summary")).toContain(`${listed.length} definitions · 0 errors`);
      // Search by name marks and lists the matches.
      await page.fill("#search", "slot.task*");
      expect(await page.textContent("#matches")).toMatch(/^\d+ match(es)?: slot\.task/);
      await page.screenshot({ path: path.join(shots, "map.png") });
      await page.fill("#search", "");
      // Only this machine's names: another site's name pointed at 127.0.0.1 reads nothing.
      const port = new URL(ui.url).port;
      expect(await statusAs(`${ui.url}api/overview`, `evil.example:${port}`)).toBe(403);
      expect(await statusAs(`${ui.url}api/overview`, `localhost:${port}`)).toBe(200);
      expect(errors).toEqual([]);
    }, 60_000);

    it("follows a write the CLI makes, without a reload", async () => {
      await page.goto(ui.url);
      await rendered("map");
      const before = await shownDefinitions(page);
      const wrote = Date.now();
      expect(kumiki(a, "agent:writer", "add", "slot", "uiProbe", "Int = 0").code).toBe(0);
      const done = Date.now();
      await page.waitForFunction(
        (n) => Number((globalThis as unknown as PageDoc).document.body.dataset.definitions) === n,
        before + 1,
        {
          timeout: 10_000,
        },
      );
      // The figure for the closing note (the bench has none yet): from the write's exit to the page.
      process.stderr.write(
        `ui: a CLI write showed in the page ${Date.now() - done} ms after it returned (${done - wrote} ms to write)\n`,
      );
      expect(await page.textContent("#summary")).toContain(`${before + 1} definitions`);
    }, 60_000);

    it("shows a conflict two workspaces made through kumiki serve, and the write that lost", async () => {
      server = await startServe(root);
      expect(
        kumiki(a, "agent:a", "remote", "add", "origin", server.url, "--token-file", path.join(root, "token"))
          .code,
      ).toBe(0);
      expect(kumiki(a, "agent:a", "sync", "--timeout", "30").code).toBe(0);
      const graph = JSON.parse(fs.readFileSync(path.join(a, ".kumiki", "config.json"), "utf8")).graph;
      b = path.join(root, "b");
      const cloned = kumiki(
        root,
        "agent:b",
        "clone",
        `${server.url}/${graph}`,
        b,
        "--token-file",
        path.join(root, "token"),
      );
      expect(cloned.code, cloned.err).toBe(0);
      // Both replace the same slot before either syncs: one replace wins, the other is lost.
      expect(
        kumiki(a, "agent:a", "replace", "slot.themeName", 'Text = "Dark"', "--task", "dark-theme").code,
      ).toBe(0);
      expect(
        kumiki(b, "agent:b", "replace", "slot.themeName", 'Text = "Solar"', "--task", "solar-theme").code,
      ).toBe(0);
      expect(kumiki(b, "agent:b", "sync", "--timeout", "30").code).toBe(0);
      // A's sync takes in B's op and says that its own replace lost (exit 1: a write did not stand).
      const synced = kumiki(a, "agent:a", "sync", "--timeout", "30");
      expect(synced.code, synced.err).toBeLessThanOrEqual(1);
      const records = (
        JSON.parse(kumiki(a, "agent:a", "conflicts", "--json").out) as {
          conflicts: { id: string; kind: string }[];
        }
      ).conflicts;
      const lost = records.find((c) => c.kind === "replace-lost");
      expect(lost).toBeDefined();
      await page.goto(`${ui.url}#/conflicts`);
      await page.waitForFunction(
        (id) =>
          (globalThis as unknown as PageDoc).document
            .querySelector("table.conflicts")
            ?.textContent?.includes(id),
        lost!.id,
        {
          timeout: 10_000,
        },
      );
      await page.screenshot({ path: path.join(shots, "conflicts.png") });
      await page.goto(`${ui.url}#/activity`);
      await rendered("activity");
      const activity = await page.textContent("#activity");
      expect(activity).toContain("lost");
      expect(activity).toContain(lost!.id);
      expect(await page.textContent("#authors")).toContain("agent:b");
      // The timeline: a lane per author, a dot per op, the lost one red.
      expect(await page.locator("#timeline circle").count()).toBeGreaterThan(0);
      expect(await page.locator('#timeline circle[fill="#c62828"]').count()).toBe(1);
      await page.screenshot({ path: path.join(shots, "activity.png") });
      expect(errors).toEqual([]);
    }, 120_000);

    it("kumiki serve shows each graph's live view at /g/<graph>/, to a token that grants it", async () => {
      const graph = JSON.parse(fs.readFileSync(path.join(a, ".kumiki", "config.json"), "utf8"))
        .graph as string;
      const httpUrl = server.url.replace(/^ws:/, "http:");
      const base = `${httpUrl}/g/${graph}/`;
      // Without a token, or with one the server does not accept: refused, saying how to open it.
      const none = await fetch(`${base}api/overview`);
      expect(none.status).toBe(401);
      // A server on 127.0.0.1 answers its views to this machine's names only, as its MCP endpoints.
      expect(
        await statusAs(`${base}api/overview?token=${TOKEN}`, `evil.example:${new URL(httpUrl).port}`),
      ).toBe(403);
      expect(((await none.json()) as { error: { message: string } }).error.message).toContain("?token=");
      expect((await fetch(`${base}?token=wrong-token`, { redirect: "manual" })).status).toBe(403);
      // Opened once with the token: a cookie for this graph's path, and the page without the token.
      const context = await browser.newContext({ viewport: { width: 1400, height: 820 } });
      try {
        const tab = await context.newPage();
        await tab.goto(`${base}?token=${TOKEN}`);
        expect(tab.url()).toBe(base);
        await tab.waitForFunction(
          () => (globalThis as unknown as PageDoc).document.body.dataset.rendered?.startsWith("map"),
          undefined,
          {
            timeout: 20_000,
          },
        );
        // The server's own copy of the graph: what workspace a synced to it.
        const listed = (JSON.parse(kumiki(a, "agent:x", "list", "--json").out) as { definitions: unknown[] })
          .definitions;
        expect(await shownDefinitions(tab)).toBe(listed.length);
        const cookies = await context.cookies();
        expect(cookies.map((c) => [c.name, c.path, c.httpOnly, c.sameSite])).toEqual([
          ["kumiki_view_token", `/g/${graph}/`, true, "Strict"],
        ]);
        // It follows the graph: a write synced to the server shows without a reload.
        expect(kumiki(b, "agent:b", "add", "slot", "fromB", "Int = 1").code).toBe(0);
        expect(kumiki(b, "agent:b", "sync", "--timeout", "30").code).toBe(0);
        await tab.waitForFunction(
          (n) => Number((globalThis as unknown as PageDoc).document.body.dataset.definitions) === n,
          listed.length + 1,
          {
            timeout: 10_000,
          },
        );
      } finally {
        await context.close();
      }
      // The graph's MCP endpoint is still MCP's (a GET without a session is refused by it, not a 404).
      const mcp = await fetch(`${base}mcp`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(mcp.status).not.toBe(404);
      // And only it is timed as MCP on /metrics: the page's requests and its event stream are not.
      const metrics = await (await fetch(`${httpUrl}/metrics`)).text();
      const counted = [...metrics.matchAll(/^kumiki_mcp_request_seconds_count\{[^}]*\} (\d+)$/gm)];
      expect(counted.reduce((sum, m) => sum + Number(m[1]), 0)).toBe(1);
      expect(errors).toEqual([]);
    }, 120_000);

    it("on kumiki serve, a token that grants writing replaces through the page; the gate and the grant hold", async () => {
      const graph = JSON.parse(fs.readFileSync(path.join(a, ".kumiki", "config.json"), "utf8"))
        .graph as string;
      const base = `${server.url.replace(/^ws:/, "http:")}/g/${graph}/`;
      const overview = (await (
        await fetch(`${base}api/overview`, { headers: { authorization: `Bearer ${VIEWER}` } })
      ).json()) as { definitions: { def: string; name: string }[] };
      const def = overview.definitions.find((d) => d.name === "themeName")!.def;
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      try {
        const tab = await context.newPage();
        await tab.goto(`${base}?token=${TOKEN}`);
        await tab.goto(`${base}#/def/${def}`);
        await tab.waitForFunction(
          () => (globalThis as unknown as PageDoc).document.body.dataset.rendered?.startsWith("def"),
          undefined,
          { timeout: 20_000 },
        );
        // A type error: refused by the store's gate, said in the page, nothing written.
        await tab.fill("#replace textarea", "slot themeName : Text = 3");
        await tab.click("#replace button");
        await tab.waitForFunction(
          () =>
            (globalThis as unknown as PageDoc).document.querySelector("#write-result")?.textContent !== "",
        );
        expect(await tab.textContent("#write-result")).toMatch(/^refused \(validation-failed\)/);
        await tab.fill("#replace textarea", 'slot themeName : Text = "Ocean"');
        await tab.click("#replace button");
        await tab.waitForFunction(
          () =>
            (globalThis as unknown as PageDoc).document
              .querySelector("#text")
              ?.textContent?.includes("Ocean"),
          undefined,
          { timeout: 10_000 },
        );
        await tab.waitForFunction(() =>
          (globalThis as unknown as PageDoc).document
            .querySelector("#write-result")
            ?.textContent?.startsWith("written as agents"),
        );
        await tab.screenshot({ path: path.join(shots, "write.png") });
        // Written as the token's name, and synced to a workspace like any write.
        const synced = kumiki(a, "agent:a", "sync", "--timeout", "30");
        expect(synced.code, synced.err).toBeLessThanOrEqual(1);
        expect(kumiki(a, "agent:a", "view", "slot.themeName").out).toContain('"Ocean"');
        const history = JSON.parse(kumiki(a, "agent:a", "view", "slot.themeName", "--history", "--json").out);
        expect(JSON.stringify(history)).toContain('"author":"agents"');
      } finally {
        await context.close();
      }
      // A token that grants reading sees no editor and may not write; another origin may not either.
      const asViewer = { authorization: `Bearer ${VIEWER}`, "content-type": "application/json" };
      expect(await (await fetch(`${base}api/me`, { headers: asViewer })).json()).toEqual({ write: false });
      // A header is what a request presents: a cookie beside it does not stand in for it.
      const both = await fetch(`${base}api/me`, {
        headers: { ...asViewer, cookie: `kumiki_view_token=${TOKEN}` },
      });
      expect(await both.json()).toEqual({ write: false });
      const body = JSON.stringify({
        verb: "replace",
        qname: def,
        source: 'slot themeName : Text = "Viewer"',
      });
      expect((await fetch(`${base}api/write`, { method: "POST", headers: asViewer, body })).status).toBe(403);
      const foreign = await fetch(`${base}api/write`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKEN}`,
          "content-type": "application/json",
          origin: "http://evil.example",
        },
        body,
      });
      expect(foreign.status).toBe(403);
      const bad = await fetch(`${base}api/write`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ verb: "drop-table" }),
      });
      expect(bad.status).toBe(400);
      expect(kumiki(a, "agent:a", "view", "slot.themeName").out).toContain('"Ocean"');
      expect(errors).toEqual([]);
    }, 120_000);

    it("answers as the CLI's verbs do: check, conflicts, locks, list and a definition's history", async () => {
      expect(kumiki(a, "agent:a", "lock", "agent:a", "tile.Board*").code).toBe(0);
      // Findings: a forced remove leaves its referrers' references dangling.
      expect(kumiki(a, "agent:a", "remove", "slot.tagDraft", "--force").code).toBe(0);
      const cli = (...argv: string[]) => JSON.parse(kumiki(a, "agent:x", ...argv, "--json").out);
      const get = async (p: string) => (await fetch(`${ui.url}${p}`)).json();
      const overview = (await get("api/overview")) as {
        diagnostics: unknown[];
        conflicts: unknown[];
        locks: unknown[];
        definitions: { def: string; layer: string; name: string; visible: boolean }[];
      };
      expect(overview.diagnostics.length).toBeGreaterThan(0);
      expect(overview.diagnostics).toEqual(cli("check").diagnostics);
      expect(overview.conflicts).toEqual(cli("conflicts").conflicts);
      expect(overview.locks).toEqual(cli("locks").locks);
      expect(overview.locks).toHaveLength(1);
      const listed = (cli("list").definitions as { def: string }[]).map((d) => d.def).sort();
      expect(
        overview.definitions
          .filter((d) => d.visible)
          .map((d) => d.def)
          .sort(),
      ).toEqual(listed);
      const theme = overview.definitions.find((d) => d.name === "themeName")!;
      const page = (await get(`api/definitions/${theme.def}`)) as { history: Record<string, unknown>[] };
      const history = cli("view", "slot.themeName", "--history").histories[0].entries;
      expect(page.history.map(({ before: _b, after: _a, ...entry }) => entry)).toEqual(history);
      expect(kumiki(a, "agent:a", "unlock", "agent:a", "tile.Board*").code).toBe(0);
    }, 60_000);

    it("renders a definition's page: its text, links, and its history with each op's change", async () => {
      await page.goto(ui.url);
      await rendered("map");
      const def = await page.evaluate(async () => {
        const o = (await (await fetch("api/overview")).json()) as {
          definitions: { def: string; name: string }[];
        };
        return o.definitions.find((d) => d.name === "themeName")!.def;
      });
      await page.goto(`${ui.url}#/def/${def}`);
      await rendered("def");
      expect(await page.textContent("h2")).toContain("slot.themeName");
      expect(await page.textContent("#text")).toMatch(/slot themeName/);
      const history = await page.textContent("#history");
      expect(history).toContain("agent:a");
      expect(history).toContain("agent:b");
      expect(history).toContain("dark-theme");
      // The replaces' changes: the line before (removed) and after (added).
      expect(await page.locator("#history del").count()).toBeGreaterThan(0);
      expect(await page.locator("#history ins").count()).toBeGreaterThan(0);
      await page.screenshot({ path: path.join(shots, "definition.png"), fullPage: true });
      // A definition the graph never held: said plainly. The page's marker already says "def" (the
      // page above, same version): cleared, so the wait is for this page's render.
      await page.evaluate(() => {
        delete (globalThis as unknown as PageDoc).document.body.dataset.rendered;
      });
      await page.goto(`${ui.url}#/def/def_00000000000000000000000000`);
      await rendered("def");
      expect(await page.textContent("main")).toContain("no definition");
      expect(errors).toEqual([]);
    }, 60_000);
  },
);
