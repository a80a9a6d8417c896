/** Checks of a request's fields that several writes share: a task id, a lock or unlock request. */
import { isAuthorId } from "../ops/ids.js";
import { isLockPattern } from "../ops/op.js";
import { ok, quoted, type Rejection, reject, type StoreResult } from "./result.js";

/** A task id as the wire format takes it, or why not. */
export function checkTask(task: string | undefined): Rejection | undefined {
  if (task === undefined) return undefined;
  if (task.length < 1 || task.length > 128 || !/^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/.test(task)) {
    return {
      code: "invalid-input",
      message: `invalid task id ${quoted(task)}: letters, digits and . _ : @ / + - (no spaces), at most 128 characters`,
    };
  }
  return undefined;
}

/** Checks a lock or unlock request: the agent, and each pattern (comma-separated lists split). */
export function lockInput(
  input: { agent: string; patterns?: readonly string[] | undefined; task?: string | undefined },
  needPatterns: boolean,
): StoreResult<{ agent: string; patterns: string[] | undefined }> {
  if (input === null || typeof input !== "object") return reject("invalid-input", "give {agent, patterns}");
  if (!isAuthorId(input.agent)) {
    return reject(
      "invalid-input",
      `invalid agent ${quoted(input.agent)}: an author id, letters, digits and . _ : @ / + - without spaces (e.g. agent:claude-1)`,
    );
  }
  const task = checkTask(input.task);
  if (task !== undefined) return { ok: false, error: task };
  if (input.patterns === undefined) {
    if (needPatterns) return reject("invalid-input", "a lock needs at least one pattern (e.g. slot.todos*)");
    return ok({ agent: input.agent, patterns: undefined });
  }
  if (!Array.isArray(input.patterns))
    return reject("invalid-input", "patterns is a list of layer.namepattern");
  const patterns: string[] = [];
  for (const raw of input.patterns) {
    for (const part of String(raw).split(",")) {
      const p = part.trim();
      if (p === "") continue;
      if (!isLockPattern(p)) {
        return reject(
          "invalid-input",
          `invalid lock pattern ${quoted(p)}: layer.namepattern, e.g. slot.todos* or reducer.todo-* (a layer or *, a dot, then letters, digits, _, - and *; * is the only wildcard)`,
          { pattern: p },
        );
      }
      if (!patterns.includes(p)) patterns.push(p);
    }
  }
  if (patterns.length === 0) return reject("invalid-input", "no lock pattern given (e.g. slot.todos*)");
  if (patterns.length > 256) return reject("invalid-input", "at most 256 patterns in one lock");
  return ok({ agent: input.agent, patterns });
}
