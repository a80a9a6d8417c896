/** @kumiki-graph/cli: the `kumiki` command line, callable in-process. */
export type { HeldStore, StoreProvider } from "./context.js";
export { CLI_VERSION, type CliIo, main } from "./main.js";
