import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { atSize } from "./generate.js";
import { type BenchRow, summarize, type Timing } from "./harness.js";
import { corpusFile, repoRoot } from "./paths.js";
import { seedWorkspace } from "./stores.js";

const BIN = path.join(repoRoot, "packages/cli/bin/kumiki.js");
const UI = path.join(repoRoot, "packages/sync-server/ui");
const RUNS = 5;

/** What the page's functions read (the bench compiles without the DOM's types). */
interface PageGlobal {
  readonly document: { readonly body: { readonly dataset: Record<string, string | undefined> } };
}

/** Debian's Chromium (or KUMIKI_CHROMIUM), as the browser tests find it; undefined when absent. */
function chromiumBinary(): string | undefined {
  return [process.env.KUMIKI_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
    (c): c is string => c !== undefined && c !== "" && fs.existsSync(c),
  );
}

/** `kumiki ui --port 0` on `dir`; resolves with its URL once it listens. */
function startUi(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, "ui", "--port", "0"], {
    cwd: dir,
    env: { ...process.env, KUMIKI_DAEMON: "off" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`kumiki ui did not listen within 60 s: ${out}`)), 60_000);
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /live view on (\S+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.once("exit", (code) => reject(new Error(`kumiki ui exited ${code}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

/**
 * Issue 41: the live view in Debian's Chromium (playwright-core). Per size (the 180-definition
 * example; it scaled to 5,000 by bench/generate.ts): first paint — a page opened until its map is
 * drawn — on a view just started (its first overview includes opening the workspace and a full
 * check) and on a running one; the latency from a `kumiki add` returning to the open page showing
 * it; and the page's size. Target: first paint at 5,000 definitions under 2 s.
 */
export async function benchUi(): Promise<BenchRow[]> {
  const file = corpusFile("apps/05-project-management/app.kumiki");
  const binary = chromiumBinary();
  if (file === undefined) return [];
  if (binary === undefined) {
    process.stderr.write("bench: live view skipped: no Chromium (apt-get install -y chromium)\n");
    return [];
  }
  const { chromium } = await import("playwright-core");
  const base = fs.readFileSync(file, "utf8");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kumiki-bench-ui-"));
  const browser = await chromium.launch({ executablePath: binary, args: ["--no-sandbox", "--disable-gpu"] });
  const rows: BenchRow[] = [pageSize()];
  try {
    for (const n of [180, 5_000]) {
      const dir = path.join(root, `defs-${n}`);
      process.stderr.write(`bench: live view, ${n.toLocaleString("en")} definitions…\n`);
      await seedWorkspace(dir, n === 180 ? base : atSize(base, n), 0);
      const page = await browser.newPage({ viewport: { width: 1400, height: 820 } });
      const paint = async (url: string): Promise<number> => {
        const t = performance.now();
        await page.goto(url);
        await page.waitForFunction(
          () => (globalThis as unknown as PageGlobal).document.body.dataset.rendered?.startsWith("map"),
          undefined,
          {
            timeout: 60_000,
          },
        );
        return performance.now() - t;
      };
      const cold: number[] = [];
      const warm: number[] = [];
      const follow: number[] = [];
      let defs = 0;
      for (let i = 0; i < RUNS; i++) {
        const ui = await startUi(dir);
        try {
          cold.push(await paint(ui.url));
          warm.push(await paint(ui.url));
          defs = Number(
            await page.evaluate(
              () => (globalThis as unknown as PageGlobal).document.body.dataset.definitions,
            ),
          );
          const r = spawnSync(process.execPath, [BIN, "add", "slot", `benchUi${i}`, "Int = 0"], {
            cwd: dir,
            env: { ...process.env, KUMIKI_DAEMON: "off", KUMIKI_AUTHOR: "agent:bench" },
          });
          if (r.status !== 0) throw new Error(`kumiki add exited ${r.status}: ${r.stderr}`);
          const t = performance.now();
          await page.waitForFunction(
            (d) => Number((globalThis as unknown as PageGlobal).document.body.dataset.definitions) === d,
            defs + 1,
            {
              timeout: 30_000,
            },
          );
          follow.push(performance.now() - t);
        } finally {
          await stop(ui.child);
        }
      }
      await page.close();
      const size = `${defs.toLocaleString("en")} defs`;
      rows.push(
        row(
          `live view: first paint, a view just started, ${size}`,
          summarize(cold),
          "< 2 s at 5,000",
          "kumiki ui started, then the page opened until its map is drawn: the first overview opens the workspace and checks it in full",
        ),
        row(
          `live view: first paint, a running view, ${size}`,
          summarize(warm),
          "< 2 s at 5,000",
          "the page opened again on the same view (its overview computed once per version)",
        ),
        row(
          `live view: a kumiki add shows in the open page, ${size}`,
          summarize(follow),
          "within 1 s",
          "from the command's exit to the page's map drawn with it",
        ),
      );
    }
    return rows;
  } finally {
    await browser.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function row(name: string, ours: Timing, target: string, note: string): BenchRow {
  return { name, ours, target, note };
}

/** The page's files as served (no build step): bytes raw and gzipped. */
function pageSize(): BenchRow {
  const files = fs.readdirSync(UI).sort();
  const raw = files.map((f) => fs.readFileSync(path.join(UI, f)));
  const bytes = raw.reduce((a, b) => a + b.length, 0);
  const gz = raw.reduce((a, b) => a + gzipSync(b).length, 0);
  return {
    name: "live view: the page's files",
    ours: { median: 0, min: 0, max: 0, runs: 1 },
    note: `${files.join(", ")}: ${bytes.toLocaleString("en")} bytes, ${gz.toLocaleString("en")} gzipped (no bundle, no dependency)`,
  };
}
