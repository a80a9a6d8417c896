/**
 * `@kumiki-graph/storage-automerge/quick`: a workspace opened to write without loading its
 * Automerge document (quick-write.ts): the write is stored as a pending bundle that the next open
 * of the document folds in. What a call in a process of its own (the CLI without its daemon) writes
 * through; it loads core and the checker, but no Automerge. When {@link openQuickWrite} declines,
 * open the workspace through the main entry.
 */
export { openQuickWrite, PENDING_MOST, type QuickWorkspaceStore } from "./quick-write.js";
export type { StoreOverOptions } from "./store-over.js";
