/**
 * What a browser bundle test asks of a bundle: the Node built-ins its code still imports, and what
 * Vite warned of while building it (Vite stands an empty module in for a Node built-in, and says so).
 */
import fs from "node:fs";
import path from "node:path";
import { build } from "vite";

/** Node built-ins a browser bundle must not import (`node:fs`, `fs`, …), found in its code. */
export function nodeImports(code: string): string[] {
  const found = code.match(/["'](node:[a-z_/]+|fs|path|os|crypto|async_hooks|child_process)["']/g) ?? [];
  return [...new Set(found)];
}

/** A Vite logger that keeps what Vite warns of (it says when it stands in for a Node built-in). */
export function keptWarnings(warnings: string[]) {
  return {
    info: () => undefined,
    warn: (m: string) => void warnings.push(m),
    warnOnce: (m: string) => void warnings.push(m),
    error: (m: string) => void warnings.push(m),
    clearScreen: () => undefined,
    hasErrorLogged: () => false,
    hasWarned: false,
  };
}

/** A page built by {@link buildPage}: its assets, their JavaScript, and what Vite stood in for. */
export interface BuiltPage {
  /** Each file of `assets/` (the scripts, Automerge's WebAssembly), with its bytes. */
  readonly assets: readonly (readonly [string, Buffer])[];
  /** The scripts' code, joined. */
  readonly code: string;
  /** Vite's warnings that it stood an empty module in for a Node built-in (none for a browser-clean page). */
  readonly stoodIn: readonly string[];
}

/** Builds the page at `root` (its index.html) with Vite for the browser into `outDir`. */
export async function buildPage(root: string, outDir: string, emptyOutDir = true): Promise<BuiltPage> {
  const warnings: string[] = [];
  await build({
    root,
    logLevel: "silent",
    customLogger: keptWarnings(warnings),
    build: { outDir, emptyOutDir },
  });
  const dir = path.join(outDir, "assets");
  const assets = fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f))] as const);
  const code = assets
    .filter(([f]) => f.endsWith(".js"))
    .map(([, b]) => b.toString("utf8"))
    .join("");
  return { assets, code, stoodIn: warnings.filter((w) => /externalized for browser|node:/.test(w)) };
}
