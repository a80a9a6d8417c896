/**
 * Writes made as another author. A store has one author, given at open; a server that shares one
 * store among several clients (MCP sessions over HTTP, each with its own token) writes each
 * client's ops as that client: it runs the client's store calls under {@link withAuthor}. Ambient,
 * like the cancellation signal and the idempotency key, so that every write method honours it
 * without each input type growing a field.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type AuthorId, isAuthorId } from "../ops/ids.js";

/** The author of the store writes made in this async context, when not the store's own. */
export const authorContext = new AsyncLocalStorage<AuthorId>();

/**
 * Runs `fn` so that the store writes it makes are authored by `author` (locks are judged as
 * `author`'s too). Throws for an author that is not a valid author id: check it at the edge.
 */
export function withAuthor<T>(author: string, fn: () => Promise<T>): Promise<T> {
  if (!isAuthorId(author)) throw new Error(`invalid author ${JSON.stringify(author)}`);
  return authorContext.run(author, fn);
}
