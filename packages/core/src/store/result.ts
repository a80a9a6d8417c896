/**
 * Store outcomes: every rejection code, `StoreResult`, and the helpers that quote user input in
 * messages (clip, quoted).
 */
import type { Result } from "../lang/result.js";

/**
 * Every way a store call can refuse, as a stable code. Adapters (CLI, MCP) map codes to exit codes
 * and structured errors; the message says what, where, and what to do.
 */
export const REJECTION_CODES = [
  // The request itself.
  "invalid-input",
  "invalid-layer",
  "invalid-name",
  "invalid-selector",
  "invalid-ref",
  "invalid-author",
  "bundle-empty",
  // What it names.
  "not-found",
  "unknown-op",
  // The text.
  "parse-error",
  "definition-mismatch",
  "duplicate-name",
  "undefined-reference",
  "projection-mismatch",
  "no-change",
  "ref-not-in-text",
  // Edits.
  "anchor-not-found",
  "anchor-ambiguous",
  "anchors-overlap",
  "anchor-empty",
  // Integrity.
  "referenced",
  "would-conflict",
  "validation-failed",
  // Revert.
  "not-revertable",
  "revert-diverged",
  // Policies, locks, tasks, previews.
  "invalid-policy",
  "locked",
  "undo-diverged",
  "fingerprint-mismatch",
  // A bundle item's depends-on (§9.3.2) no longer holds: what it references changed since.
  "dependency-changed",
  // Ops from elsewhere.
  "unknown-op-kind",
  "invalid-op-id",
  "invalid-op",
  "unknown-parent",
  "unknown-definition",
  // An op-id already held names an op with other content: one of them is forged or corrupted.
  "op-id-reused",
  // The store.
  "storage-failed",
  "store-closed",
  // Opened over a log that takes no writes (a read-only open).
  "read-only",
  // The stored document is damaged: reads work, writes wait for a repair.
  "store-damaged",
  // The workspace was removed, or another graph made there, under the open store: nothing written.
  "workspace-replaced",
  "store-not-empty",
  // An idempotency key given again with another request.
  "idempotency-key-reused",
  // The request was cancelled (an MCP notifications/cancelled) before its write was stored.
  "cancelled",
  // The merge: stored, but another writer's concurrent op won (details.receipt, details.lost).
  "write-lost",
  // Projections (program text, the project.kumiki/ tree).
  "program-empty",
  "tree-unreadable",
] as const;

/** One of {@link REJECTION_CODES}. */
export type RejectionCode = (typeof REJECTION_CODES)[number];

/** A refused call: nothing changed (except `write-lost`: stored, then lost in the merge). */
export interface Rejection {
  readonly code: RejectionCode;
  /** What was refused, where, and what to do about it. */
  readonly message: string;
  /** Structured details for programs (the anchor, the referrers, the parse position, …). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** The outcome of a store call: a value, or a rejection. Expected failures are values, never throws. */
export type StoreResult<T> = Result<T, Rejection>;

/** A successful value. */
export function ok<T>(value: T): StoreResult<T> {
  return { ok: true, value };
}

/** A rejection. */
export function reject<T = never>(
  code: RejectionCode,
  message: string,
  details?: Record<string, unknown>,
): StoreResult<T> {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}

/**
 * A rejection whose remedy (its message's last line, given in `details.remedy` by the store) is
 * said in `words` instead: how an edge names its own arguments (`--cascade` on the CLI, `cascade`
 * over MCP) without core knowing them. Any other rejection is returned as it is.
 */
export function withRemedy<E extends Pick<Rejection, "message" | "details">>(error: E, words: string): E {
  const remedy = error.details?.remedy;
  if (typeof remedy !== "string" || !error.message.endsWith(remedy)) return error;
  return {
    ...error,
    message: `${error.message.slice(0, -remedy.length)}${words}`,
    details: { ...error.details, remedy: words },
  };
}

/** `text` for a message: as it is up to `max` characters, else its first `max` and how long it was. */
export function clip(text: string, max = 64): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/**
 * `value` quoted (as JSON) for a message, cut like {@link clip}: a message quotes a short prefix
 * of what it was given, never a megabyte of it.
 */
export function quoted(value: unknown, max = 64): string {
  if (typeof value !== "string") return clip(JSON.stringify(value) ?? String(value), max);
  return value.length <= max
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, max))}… (${value.length} characters)`;
}
