/**
 * `mkdir -p`, one level at a time. Node 20's `fs.mkdirSync(dir, {recursive: true})` never returns
 * when a parent exists but refuses children with ENOENT, as /proc does: measured, `kumiki init
 * /proc/x` spun at 100 % CPU until killed. Walking down from the deepest existing ancestor, each
 * level is made once, and any refusal is thrown as it is.
 */
import fs from "node:fs";
import path from "node:path";

/**
 * Makes `dir` and its missing parents; returns the first directory it made (as
 * `fs.mkdirSync(dir, {recursive: true})` does), or undefined when `dir` existed.
 */
export function makeDirs(dir: string, mode?: number): string | undefined {
  const target = path.resolve(dir);
  const missing: string[] = [];
  for (let d = target; ; d = path.dirname(d)) {
    if (fs.existsSync(d)) break;
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  let first: string | undefined;
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d, mode === undefined ? undefined : { mode });
      first ??= d;
    } catch (e) {
      // Made meanwhile by another process: fine, as long as it is a directory.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || !fs.statSync(d).isDirectory()) throw e;
    }
  }
  return first;
}
