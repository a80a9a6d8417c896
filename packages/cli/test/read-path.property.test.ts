/**
 * The read fast path is a cache (a workspace's op-log.jsonl, served when the storage shows it
 * current), and a cache must never change an answer: for random sequences of real `kumiki` calls
 * by two agents (separate processes on one workspace), every read answers the same with the fast
 * path as with it turned off (`KUMIKI_READ_SNAPSHOT=off`: the full Automerge open), whatever was
 * written just before, and a file edited behind the store's back is never served.
 */
import { appendFileSync, rmSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { runBin, tempDir } from "./support.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Call =
  | { readonly kind: "add"; readonly agent: 0 | 1; readonly name: string; readonly value: number }
  | { readonly kind: "replace"; readonly agent: 0 | 1; readonly name: string; readonly value: number }
  | { readonly kind: "remove"; readonly agent: 0 | 1; readonly name: string }
  | { readonly kind: "tamper" };

const NAMES = ["alpha", "beta", "gamma"] as const;
const agent = fc.constantFrom<0 | 1>(0, 1);
const name = fc.constantFrom(...NAMES);
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), agent, name, value: fc.nat({ max: 9 }) }),
  fc.record({ kind: fc.constant("replace" as const), agent, name, value: fc.nat({ max: 9 }) }),
  fc.record({ kind: fc.constant("remove" as const), agent, name }),
  { arbitrary: fc.constant({ kind: "tamper" as const }), weight: 2 },
);
/** A sequence starts with a stored write (before it, nothing is served from op-log.jsonl). */
const sequence = fc
  .array(call, { minLength: 1, maxLength: 5 })
  .map((rest): Call[] => [{ kind: "add", agent: 0, name: "alpha", value: 1 }, ...rest]);

/** What a person or an agent reads after each call, through the real bin. */
const READS: readonly (readonly string[])[] = [
  ["list", "--json"],
  ["status", "--json"],
  ["view", "slot.*"],
  ["export"],
  ["check", "--json"],
];

describe("reads with the fast path equal reads without it", () => {
  it("for random sequences of writes by two processes, and a hand-edited op-log.jsonl", () => {
    fc.assert(
      fc.property(sequence, (calls) => {
        const dir = tempDir("read-path");
        dirs.push(dir);
        const env = (a: 0 | 1, extra: Record<string, string> = {}) => ({
          KUMIKI_AUTHOR: a === 0 ? "agent:a" : "agent:b",
          ...extra,
        });
        expect(runBin(["init"], { cwd: dir, env: env(0) }).code).toBe(0);
        for (const c of calls) {
          if (c.kind === "tamper") {
            // Behind the store's back: a line the document does not hold. Never to be served.
            const line = {
              "op-id": "op_01JC0000000000000000000000",
              op: "add",
              layer: "slot",
              name: "ghost",
            };
            appendFileSync(path.join(dir, ".kumiki", "op-log.jsonl"), `${JSON.stringify(line)}\n`);
          } else {
            const argv =
              c.kind === "add"
                ? ["add", "slot", c.name, `Int = ${c.value}`]
                : c.kind === "replace"
                  ? ["replace", `slot.${c.name}`, `slot ${c.name} : Int = ${c.value}`]
                  : ["remove", `slot.${c.name}`];
            runBin(argv, { cwd: dir, env: env(c.agent) }); // refusals (a name taken, absent) are part of the sequence
          }
          // Every read through the fast path first (it never writes), then every read with it off (a
          // full open brings op-log.jsonl up to date, which would hide what the fast path served).
          const answer = (read: readonly string[], extra: Record<string, string>) => {
            const r = runBin(read, { cwd: dir, env: env(0, extra) });
            return { read: read.join(" "), code: r.code, out: r.out };
          };
          const fast = READS.map((read) => answer(read, {}));
          const full = READS.map((read) => answer(read, { KUMIKI_READ_SNAPSHOT: "off" }));
          expect(fast, `after ${JSON.stringify(c)}`).toEqual(full);
        }
        expect(runBin(["list"], { cwd: dir, env: env(0) }).out).not.toContain("ghost");
      }),
      { numRuns: 4, endOnFailure: true },
    );
  }, 240_000);
});
