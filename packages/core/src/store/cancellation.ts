/**
 * Cancellable writes. A caller whose request can be cancelled (an MCP client's
 * `notifications/cancelled`) runs its store calls under {@link withCancellation}: a write whose
 * signal is aborted before its ops are appended is refused (`cancelled`) and stores nothing; the
 * store looks at the signal under the workspace lock, just before the append, so that nothing a
 * cancelled request drafted can reach the log after the cancellation was seen. Once appended, a
 * write stands: it is answered as usual (a client that cancelled it gets its receipt by retrying
 * with the same idempotency key).
 *
 * Ambient, like the idempotency key (idempotency.ts), so every write method of the store honours
 * it without each input type growing a field.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** The signal of the request whose store calls run in this async context. */
export const cancellationContext = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` so that the store writes it makes are refused once `signal` is aborted (see above). */
export function withCancellation<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  return cancellationContext.run(signal, fn);
}
