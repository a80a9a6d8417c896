/** Helpers of this package's tests: a store result's value, or a throw that says what refused it. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { StoreResult, WriteReceipt } from "@kumiki-graph/core";
import { type WorkspacePaths, workspacePaths } from "../src/read.js";

export function okValue<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

export async function must(p: Promise<StoreResult<WriteReceipt>>): Promise<WriteReceipt> {
  return okValue(await p);
}

/**
 * The paths of a workspace in a new temporary folder whose `.kumiki/` exists (nothing in it): what
 * the cache files are given. The folder is pushed to `roots`, for the test file to remove.
 */
export function tempWorkspacePaths(roots: string[], prefix: string): WorkspacePaths {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  roots.push(root);
  const p = workspacePaths(root);
  fs.mkdirSync(p.dir);
  return p;
}
