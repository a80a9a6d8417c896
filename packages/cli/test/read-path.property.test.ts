/**
 * The read fast path is a cache (a workspace's op-log.jsonl, served when the storage shows it
 * current), and a cache must never change an answer: for random sequences of real `kumiki` calls
 * by two agents (separate processes on one workspace), every read answers the same with the fast
 * path as with it turned off (`KUMIKI_READ_SNAPSHOT=off`: the full Automerge open), whatever was
 * written just before, and a file edited behind the store's back is never served.
 */
import { rmSync } from "node:fs";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  AGENT,
  authorOf,
  NAME,
  READS,
  type TamperCall,
  tamperOpLog,
  VALUE,
  type WriteCall,
  writeArgv,
} from "./agent-calls.js";
import { runBin, tempDir } from "./support.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Call = WriteCall | TamperCall;

const call: fc.Arbitrary<Call> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), agent: AGENT, name: NAME, value: VALUE }),
  fc.record({ kind: fc.constant("replace" as const), agent: AGENT, name: NAME, value: VALUE }),
  fc.record({ kind: fc.constant("remove" as const), agent: AGENT, name: NAME }),
  { arbitrary: fc.constant({ kind: "tamper" as const }), weight: 2 },
);
/** A sequence starts with a stored write (before it, nothing is served from op-log.jsonl). */
const sequence = fc
  .array(call, { minLength: 1, maxLength: 5 })
  .map((rest): Call[] => [{ kind: "add", agent: 0, name: "alpha", value: 1 }, ...rest]);

describe("reads with the fast path equal reads without it", () => {
  it("for random sequences of writes by two processes, and a hand-edited op-log.jsonl", () => {
    fc.assert(
      fc.property(sequence, (calls) => {
        const dir = tempDir("read-path");
        dirs.push(dir);
        const env = (a: 0 | 1, extra: Record<string, string> = {}) => ({
          KUMIKI_AUTHOR: authorOf(a),
          ...extra,
        });
        expect(runBin(["init"], { cwd: dir, env: env(0) }).code).toBe(0);
        for (const c of calls) {
          if (c.kind === "tamper") tamperOpLog(dir);
          else {
            runBin(writeArgv(c), { cwd: dir, env: env(c.agent) }); // refusals (a name taken, absent) are part of the sequence
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
