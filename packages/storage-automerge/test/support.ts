/** Helpers of this package's tests: a store result's value, or a throw that says what refused it. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { StoreResult, WriteReceipt } from "@kumiki-graph/core";
import { expect } from "vitest";
import { type WorkspacePaths, workspacePaths } from "../src/read.js";
import { openWorkspace } from "../src/workspace.js";
import { opLogIds } from "./fixtures/children.js";

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

/**
 * What a fault test asserts after each kill: the workspace at `dir` opens, holds every op-id of
 * `written` exactly once, and its close leaves op-log.jsonl (`opLog`) with every op it holds.
 */
export async function expectEveryWriteHeld(
  dir: string,
  written: ReadonlySet<string>,
  opLog: string,
  context: string,
): Promise<void> {
  const opened = await openWorkspace(dir);
  expect(opened.ok, `${context}: ${opened.ok ? "" : opened.error.message}`).toBe(true);
  if (!opened.ok) return;
  const held = opened.value.log.all().map((o) => o["op-id"]);
  expect(new Set(held).size, `${context}: duplicates`).toBe(held.length);
  const heldSet = new Set(held);
  expect(
    [...written].filter((id) => !heldSet.has(id)),
    `${context}: acknowledged but missing`,
  ).toEqual([]);
  await opened.value.log.close();
  // Closing brings the readable log up to date with the store, unacknowledged leftovers included.
  expect(opLogIds(opLog)).toEqual([...held].sort());
}
