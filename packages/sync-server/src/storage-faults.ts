/**
 * Storage faults of the servers in this process, handled where automerge-repo leaves them: its
 * background saves do not catch a failed save, so a full disk would end the process.
 */
import type { ServerStorage } from "./server-storage.js";

/** The storages of the servers running in this process, for {@link watchStorageFaults}. */
const faultSources = new Set<ServerStorage>();
let watching = false;

/**
 * automerge-repo saves in the background and does not catch a failed save: an ENOSPC from the
 * storage became an unhandled rejection and ended the server, and every client lost it. A fault
 * one of our storages threw is handled here instead: `/health` reports it (503) until a write as
 * large as the failed one fits again, no push is confirmed meanwhile, and the next save retries.
 * Anything else is rethrown, so a bug still ends the process as it would without this handler.
 */
function watchStorageFaults(): void {
  if (watching) return;
  watching = true;
  process.on("unhandledRejection", (reason) => {
    for (const s of faultSources) if (s.threw(reason)) return;
    // automerge-repo's own wait for a document that never became ready (60 s, withTimeout): its
    // synchronizer does not catch it (DocSynchronizer.beginSync), and after a storage fault left a
    // document loading it ended the server about a minute later. The document's peers are told
    // it is unavailable by the Repo; the server serves on.
    if (isRepoTimeout(reason)) {
      process.stderr.write(
        `kumiki sync server: ${(reason as Error).message} (a document did not become ready); serving on\n`,
      );
      return;
    }
    throw reason;
  });
}

/** automerge-repo's TimeoutError (helpers/withTimeout.js), told by its name and message. */
function isRepoTimeout(reason: unknown): boolean {
  return (
    reason instanceof Error && reason.name === "TimeoutError" && reason.message.startsWith("withTimeout:")
  );
}

/** Handles `storage`'s faults while its server runs; returns the release its close calls. */
export function followStorageFaults(storage: ServerStorage): () => void {
  faultSources.add(storage);
  watchStorageFaults();
  return () => {
    faultSources.delete(storage);
  };
}
