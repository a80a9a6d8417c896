/**
 * A write in its own process stores a pending bundle beside the document instead of loading it
 * (`KUMIKI_PENDING_WRITES=off` opens in full). The same calls through real `kumiki` processes each way
 * leave the same program and the same answers; the write is read at once, refused as the full open
 * refuses, and folded into the document by the next call that opens it in full.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, runBin, tempDir, testEnv } from "./support.js";

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

/** A call that opens the document in full. */
const FULL = { KUMIKI_PENDING_WRITES: "off" };

const pendingDir = (root: string) => path.join(root, ".kumiki", "automerge", "pending");
const pendingCount = (root: string) =>
  fs.existsSync(pendingDir(root)) ? fs.readdirSync(pendingDir(root)).length : 0;

/** Runs the same calls in a new workspace with pending writes on (the default) or off; returns every answer. */
function scenario(pending: boolean): { root: string; answers: { code: number; out: string }[] } {
  const root = tempDir(`pending-${pending ? "on" : "off"}`);
  dirs.push(root);
  const env = testEnv(root, pending ? {} : FULL);
  const opts = { cwd: root, env };
  const calls: string[][] = [
    ["init"],
    ["add", "slot", "limit", "Int = 10"],
    ["add", "slot", "count", "Int = 0"],
    ["add", "slot", "count", "Int = 1"], // taken: refused
    ["add", "slot", "bad", 'Int = "no"'], // does not type: refused
    ["view", "slot.count"],
    ["rename", "slot.count", "total"],
    ["list"],
    ["check"], // E0003: the program has no app
    ["remove", "slot.limit"],
    ["export"],
  ];
  // Op-ids and the folder differ between two workspaces; everything else must not.
  const answers = calls.map((argv) => {
    const r = runBin(argv, opts);
    return { code: r.code, out: r.out.replaceAll(root, "<root>").replace(/op_[0-9A-Z]{26}/g, "op_…") };
  });
  return { root, answers };
}

describe("writes stored beside the document", () => {
  it("answer every call as the full open does, and leave the same program", () => {
    const on = scenario(true);
    const off = scenario(false);
    expect(on.answers).toEqual(off.answers);
    expect(on.answers.map((a) => a.code)).toEqual([0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0]);
    // On: the writes wait beside the document; off: none ever does.
    expect(pendingCount(on.root)).toBe(4);
    expect(pendingCount(off.root)).toBe(0);
  });

  it("are folded in, once, by the next call that opens the document in full", () => {
    const { root } = scenario(true);
    const env = testEnv(root, FULL);
    const before = runBin(["export"], { cwd: root, env }).out;
    const status = JSON.parse(runBin(["status", "--json"], { cwd: root, env }).out) as { ops: number };
    // A write with pending writes off opens the document: everything waiting goes in first.
    expect(runBin(["add", "slot", "after", "Int = 3"], { cwd: root, env }).code).toBe(0);
    expect(pendingCount(root)).toBe(0);
    const now = JSON.parse(runBin(["status", "--json"], { cwd: root, env }).out) as { ops: number };
    expect(now.ops).toBe(status.ops + 1);
    const lines = (text: string) => text.trim().split("\n");
    expect(lines(runBin(["export"], { cwd: root, env }).out)).toEqual([
      ...lines(before),
      "slot after : Int = 3",
    ]);
    // op-log.jsonl holds them all: the read path serves again with no pending file.
    expect(lines(fs.readFileSync(path.join(root, ".kumiki", "op-log.jsonl"), "utf8"))).toHaveLength(now.ops);
  });
});
