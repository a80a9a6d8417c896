/** @kumiki-graph/cli: the `kumiki` command line, callable in-process. */
export { CLI_VERSION, type CliIo, main } from "./main.js";
