/**
 * The errors the MCP server puts on the wire. They are their own type, separate from core's
 * `Rejection`: a wire error says what kind of failure a caller is looking at (branch on `kind`),
 * and carries the core code it came from when there is one (`code`). Messages are written for the
 * model: they never name host paths or environment variables (those go to the server's stderr).
 */

import { type Rejection, remedyStepsOf } from "@kumiki-graph/core";
import { withToolCalls } from "./remedy.js";

/** Every kind of wire error, as a stable identifier. */
export const WIRE_ERROR_KINDS = [
  /** The tool name is not one this server has. */
  "unknown-tool",
  /** An argument the tool's input schema does not declare; `argument` names it. */
  "unknown-argument",
  /** An argument of the wrong type or shape, or a required one missing; `argument` names it. */
  "invalid-argument",
  /** The request is well-formed but names nothing valid (a bad selector, layer, name, op-id). */
  "invalid-request",
  /** What it names does not exist. */
  "not-found",
  /** The store refused the write; nothing changed (`code` says why, `details` where). */
  "rejected",
  /**
   * The write was stored, but a concurrent write by another agent won the merge: `details.lost`
   * says which op, to what, and how to retry; `details.conflicts` the records (not a success).
   */
  "lost",
  /** The session's token does not allow the tool (a write with a read token); nothing was done. */
  "forbidden",
  /** A declared limit was hit; `limit` names the entry of kumiki://limits. */
  "limit-exceeded",
  /** The store could not be read or written right now; nothing changed; retrying may help. */
  "unavailable",
  /** A bug in the server: the operator's stderr has the details. */
  "internal",
] as const;

/** One of {@link WIRE_ERROR_KINDS}. */
export type WireErrorKind = (typeof WIRE_ERROR_KINDS)[number];

/** A failure that produced no answer: what a tool returns as `{"error": WireError}` with `isError: true`. */
export interface WireError {
  readonly kind: WireErrorKind;
  /** What failed, where, and what to do about it. */
  readonly message: string;
  /** The core rejection code it came from (`duplicate-name`, `anchor-not-found`, …). */
  readonly code?: string;
  /** The argument at fault (`unknown-argument`, `invalid-argument`). */
  readonly argument?: string;
  /** The limit hit (`limit-exceeded`): a name in kumiki://limits. */
  readonly limit?: string;
  /** True when the same call may succeed later unchanged. */
  readonly retryable?: boolean;
  /** Structured details from core (the referrers, the anchor, the parse position, …). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Core codes that mean the request named nothing valid, rather than that the store refused it. */
const REQUEST_CODES: ReadonlySet<string> = new Set([
  "invalid-input",
  "invalid-layer",
  "invalid-name",
  "invalid-selector",
  "invalid-ref",
  "invalid-author",
  "invalid-op-id",
  "invalid-policy",
  "bundle-empty",
]);
const NOT_FOUND_CODES: ReadonlySet<string> = new Set(["not-found", "unknown-op"]);
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  "storage-failed",
  "store-closed",
  "store-damaged",
  "workspace-replaced",
]);

/**
 * The wire kind of a core rejection code. Codes core adds later fall under `rejected`: a refusal
 * that changed nothing, which is what every other core code means.
 */
export function wireKindOf(code: string): WireErrorKind {
  if (REQUEST_CODES.has(code)) return "invalid-request";
  if (NOT_FOUND_CODES.has(code)) return "not-found";
  if (UNAVAILABLE_CODES.has(code)) return "unavailable";
  if (code === "write-lost") return "lost";
  return "rejected";
}

/**
 * A core rejection as a wire error. A storage failure's message can name host paths, so the caller
 * gets a fixed message and `log` gets the original.
 */
export function fromRejection(r: Rejection, log: (line: string) => void): WireError {
  const kind = wireKindOf(r.code);
  if (kind === "unavailable") {
    log(`store ${r.code}: ${r.message}`);
    return {
      kind,
      code: r.code,
      message:
        r.code === "store-closed"
          ? "the store is closed (the server is shutting down); nothing changed"
          : r.code === "store-damaged"
            ? "the workspace's stored document is damaged: reads work, writes are refused until it is repaired (`kumiki repair` in the workspace); nothing changed"
            : r.code === "workspace-replaced"
              ? "the workspace was removed, or another graph made there, since this server opened it; nothing changed; restart the server to work on what is there now"
              : "the store could not be read or written; nothing changed; retry the call",
      retryable: r.code === "storage-failed",
    };
  }
  return {
    kind,
    code: r.code,
    message: withToolCalls(messageOf(r), remedyStepsOf(r.details)),
    ...(r.details === undefined ? {} : { details: r.details }),
  };
}

/**
 * The message of a rejection on the wire: core's, except where core's repeats its details for a
 * reader who has no details to look at (the CLI's): a `validation-failed` names each added error
 * in its message, and the same diagnostics are in `details.diagnostics`, so here it only counts them.
 */
function messageOf(r: Rejection): string {
  const diagnostics = r.details?.diagnostics;
  if (r.code !== "validation-failed" || !Array.isArray(diagnostics)) return r.message;
  const n = diagnostics.length;
  return `the write would add ${n === 1 ? "an error" : `${n} errors`} the graph does not have (details.diagnostics lists ${n === 1 ? "it" : "them"}, with ${n === 1 ? "its" : "their"} auto-patches); nothing was written`;
}

/** A `limit-exceeded` error naming the limit, its value, and what exceeded it. */
export function limitExceeded(
  limit: string,
  value: number,
  actual: number,
  what: string,
  hint: string,
): WireError {
  return {
    kind: "limit-exceeded",
    limit,
    message: `${what} is ${actual}, over the ${limit} limit of ${value} (kumiki://limits); ${hint}`,
    details: { limit, value, actual },
  };
}
