/**
 * Expected failures of sync, as values: a stable code, a message saying what, where and what to do,
 * and details for programs. Exceptions are only for bugs.
 */
import type { Result } from "@kumiki-graph/core";

/** Stable codes of sync failures. */
export type SyncErrorCode =
  // Configuration.
  | "token-file-invalid"
  /** reloadTokens of a service started without a token file. */
  | "no-token-file"
  /** Options that contradict each other (a folder and a database, or neither). */
  | "invalid-options"
  | "invalid-url"
  | "invalid-remote"
  | "remote-exists"
  | "remote-not-found"
  | "remotes-corrupt"
  | "listen-failed"
  // The connection.
  | "unauthorized"
  | "forbidden"
  | "unreachable"
  | "timeout"
  | "refused"
  | "graph-unavailable"
  | "read-only"
  // The workspace (codes of @kumiki-graph/core's workspace and store).
  | "workspace"
  | "storage-failed";

/** A sync failure. */
export interface SyncError {
  readonly code: SyncErrorCode | (string & {});
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** A value, or a {@link SyncError}. */
export type SyncResult<T> = Result<T, SyncError>;

/** A successful value. */
export function ok<T>(value: T): SyncResult<T> {
  return { ok: true, value };
}

/** A failure. */
export function fail<T = never>(
  code: SyncError["code"],
  message: string,
  details?: Record<string, unknown>,
): SyncResult<T> {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}
