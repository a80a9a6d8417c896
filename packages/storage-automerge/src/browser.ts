/**
 * @kumiki-graph/storage-automerge in a browser (its `browser` condition, and `./browser`): a graph's
 * store in a page over IndexedDB, synced live with `kumiki serve` ({@link openBrowserStore}), and the
 * op log of a Repo the page holds ({@link RepoOpLog.attach}) with the document layout it writes.
 * Nothing here imports a Node built-in; the workspace on disk (`.kumiki/`) is the main entry's.
 */
export {
  type BrowserServer,
  type BrowserStore,
  type BrowserStoreError,
  type BrowserStoreOptions,
  openBrowserStore,
} from "./browser-store.js";
export * from "./log.js";
