/**
 * The CLI's own errors. A command throws a {@link CliError} for an expected failure; `main` is the
 * one place that prints it and turns it into an exit code (§9.2.5: 1 done and the operation failed,
 * 2 wrong argument shape). Anything else thrown is a bug and is reported as such.
 */

import type { Result } from "@kumiki-graph/core";
import { withRemedy } from "@kumiki-graph/core/rejection";

/** Exit code of a failure: 1 the operation failed, 2 the arguments had the wrong shape. */
export type FailureExit = 1 | 2;

/** An expected failure with a stable code (a store rejection code, a workspace code, or `usage`). */
export class CliError extends Error {
  readonly code: string;
  readonly exit: FailureExit;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: string, message: string, exit: FailureExit, details?: Readonly<Record<string, unknown>>) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.exit = exit;
    this.details = details;
  }
}

/** Wrong argument shape, decided before the store is read: exit 2. */
export function usageError(message: string, details?: Readonly<Record<string, unknown>>): CliError {
  return new CliError("usage", message, 2, details);
}

/** The operation ran and failed: exit 1. */
export function failure(
  code: string,
  message: string,
  details?: Readonly<Record<string, unknown>>,
): CliError {
  return new CliError(code, message, 1, details);
}

/** The CLI's words for a core remedy (`details.remedy`, the message's last words), by code. */
const CLI_REMEDIES: Readonly<Record<string, string>> = {
  "no-workspace": "kumiki init makes one",
  "store-damaged": "kumiki repair repairs it",
};

type CoreFailure = {
  readonly code: string;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
};

/**
 * `error` with its remedy (`details.remedy`, the message's last words) said in `words`; as it is
 * when it has none. Core's `withRemedy`, from its dependency-free entry (this module is loaded by
 * every verb, which must not load the store).
 */
export const inCliWords: <E extends CoreFailure>(error: E, words: string) => E = withRemedy;

/** A core failure value (store rejection, workspace error) as a CLI failure, its remedy in CLI words. */
export function fromRejection(error: CoreFailure): CliError {
  const words = CLI_REMEDIES[error.code];
  const e = words === undefined ? error : inCliWords(error, words);
  return failure(e.code, e.message, e.details);
}

/** Unwraps a core result, throwing its rejection as a CLI failure. */
export function unwrap<T>(
  result: Result<
    T,
    {
      readonly code: string;
      readonly message: string;
      readonly details?: Readonly<Record<string, unknown>> | undefined;
    }
  >,
): T {
  if (!result.ok) throw fromRejection(result.error);
  return result.value;
}
