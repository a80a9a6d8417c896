/**
 * `@kumiki-graph/core/testing`: the contract every {@link OpLog} keeps, as one vitest suite, so a
 * third-party log (a database, a remote service) proves itself the way the memory and Automerge
 * logs do — as automerge-repo ships its storage and network adapter suites. Call
 * {@link runOpLogSuite} in a vitest test file with a harness for your log. This entry imports
 * vitest and fast-check, which are optional peer dependencies of the package: install them to use it.
 */
export type { OpLog, StoredOp } from "./store/op-log.js";
export { type OpLogHarness, op as testOp, runOpLogSuite, type TestOp } from "./testing/op-log-suite.js";
