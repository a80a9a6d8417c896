/** The drafts of the control writes that own definitions: `Store.lock` and `Store.unlock`. */
import { qualified } from "../graph/materialize.js";
import { matchesLockPattern } from "../ops/glob.js";
import type { AuthorId } from "../ops/ids.js";
import type { Draft } from "./draft.js";
import type { Rejection } from "./result.js";

/**
 * Drafts a lock of `patterns` for `agent`: `no-change` when it holds them already, `locked` when
 * another agent holds the same pattern or a live definition both patterns match.
 */
export function draftLock(
  d: Draft,
  agent: string,
  patterns: readonly string[],
  task: string | undefined,
): Rejection | undefined {
  const live = d.fork.locks();
  const fresh = patterns.filter((p) => !live.some((l) => l.agent === agent && l.pattern === p));
  if (fresh.length === 0)
    return {
      code: "no-change",
      message: `${agent} already holds ${patterns.join(", ")}`,
      details: { agent },
    };
  for (const p of fresh) {
    for (const l of live) {
      if (l.agent === agent) continue;
      const clash =
        l.pattern === p
          ? undefined
          : [...d.fork.definitions()].find(
              (x) =>
                x.alive &&
                matchesLockPattern(p, x.layer, x.name) &&
                matchesLockPattern(l.pattern, x.layer, x.name),
            );
      if (l.pattern !== p && clash === undefined) continue;
      return {
        code: "locked",
        message: `${l.agent} already locks ${l.pattern}${clash === undefined ? "" : `, which covers ${qualified(clash.layer, clash.name)} too`}; ask them to unlock it first`,
        details: { agent: l.agent, pattern: l.pattern, lock: l.opId, requested: p },
      };
    }
  }
  return d.control({ op: "lock", agent: agent as AuthorId, patterns: fresh }, task);
}

/**
 * Drafts the end of `agent`'s locks on `patterns` (all of them when undefined), written by
 * `author` (a forced unlock of another agent's locks is warned about): `not-found` when it holds
 * none of them.
 */
export function draftUnlock(
  d: Draft,
  agent: string,
  patterns: readonly string[] | undefined,
  author: string,
  task: string | undefined,
): Rejection | undefined {
  if (agent !== author)
    d.warnings.push(
      `lifted ${agent}'s lock${patterns === undefined ? "s" : ` on ${patterns.join(", ")}`} as ${author} (forced)`,
    );
  const held = d.fork.locks().filter((l) => l.agent === agent);
  const lifted = patterns === undefined ? held : held.filter((l) => patterns.includes(l.pattern));
  if (lifted.length === 0) {
    return {
      code: "not-found",
      message: `${agent} holds no lock${patterns === undefined ? "" : ` on ${patterns.join(", ")}`}${held.length > 0 ? ` (it holds ${held.map((l) => l.pattern).join(", ")})` : ""}`,
      details: { agent, held: held.map((l) => l.pattern) },
    };
  }
  return d.control(
    {
      op: "unlock",
      agent: agent as AuthorId,
      ...(patterns === undefined ? {} : { patterns: lifted.map((l) => l.pattern) }),
    },
    task,
  );
}
