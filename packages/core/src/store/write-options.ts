/**
 * How one write is made: as which author, cancellable by which signal, idempotent under which
 * key. Given with the call (`store.add(input, { author, signal, idempotency })`), never taken from
 * the surroundings: a server that shares one store among several clients (MCP sessions over HTTP,
 * each with its own token) passes each client's author and each request's signal and key with
 * each write. Explicit options replaced the `AsyncLocalStorage` contexts of earlier versions
 * (`withAuthor`, `withCancellation`, `withIdempotency`): what a write honours is in its
 * signature, and core needs no Node built-in to carry it (issue 39; a browser has none).
 */
import { type AuthorId, isAuthorId } from "../ops/ids.js";
import { quoted, reject, type StoreResult } from "./result.js";

/** An idempotency key and what was asked under it (see store/idempotency.ts). */
export interface IdempotencyKey {
  readonly key: string;
  /** The caller's digest of its request: the same key with another request is refused. */
  readonly request: string;
}

/** What a write call may say about how it is made (every field optional). */
export interface WriteOptions {
  /**
   * The write's author when not the store's: its ops are authored, and locks judged, as this
   * author. Refused (`invalid-author`) when not an author id.
   */
  readonly author?: string;
  /**
   * The signal of the request the write serves: a write whose signal is aborted before its ops are
   * appended is refused (`cancelled`) and stores nothing. The store looks at it under the
   * workspace lock, just before the append, so that nothing a cancelled request drafted reaches
   * the log after the cancellation was seen. Once appended, a write stands (a client that
   * cancelled it gets its receipt by retrying with the same idempotency key).
   */
  readonly signal?: AbortSignal;
  /**
   * Makes the write idempotent (the store needs a ledger: `StoreOptions.idempotency`): its op-ids
   * are recorded under the key, durably, before they are appended; a later write under the same
   * key and request is answered with the first one's receipt instead of writing again.
   */
  readonly idempotency?: IdempotencyKey;
}

/** {@link WriteOptions} checked, with the author settled. */
export interface WriteContext {
  readonly author: AuthorId;
  readonly signal?: AbortSignal;
  readonly idempotency?: IdempotencyKey;
}

/** Checks `options` and settles the author (`fallback`, the store's, when none is given). */
export function writeContext(options: WriteOptions, fallback: AuthorId): StoreResult<WriteContext> {
  const { author, signal, idempotency } = options;
  if (author !== undefined && !isAuthorId(author)) return invalidAuthor(author);
  if (idempotency !== undefined && (typeof idempotency.key !== "string" || idempotency.key === ""))
    return reject("invalid-input", "an idempotency key must be a non-empty string");
  return {
    ok: true,
    value: {
      author: (author as AuthorId | undefined) ?? fallback,
      ...(signal === undefined ? {} : { signal }),
      ...(idempotency === undefined ? {} : { idempotency }),
    },
  };
}

/** The refusal of an author that is not an author id (a store's, or a write's). */
export function invalidAuthor<T>(author: unknown): StoreResult<T> {
  return reject(
    "invalid-author",
    `invalid author ${quoted(author)}: letters, digits and . _ : @ / + - without spaces, at most 128 characters (e.g. agent:claude-1)`,
  );
}
