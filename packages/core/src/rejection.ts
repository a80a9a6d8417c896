/**
 * `@kumiki-graph/core/rejection`: refusals as values and what an edge does with them — the codes,
 * a remedy said in the edge's own words, a conflict's retry steps, quoting what was given — with
 * no dependency at all (two small modules), so that a command line's every error path can import
 * them without loading the store (the CLI did keep copies of `withRemedy` and `remedyStepsOf`
 * for that). The main entry exports the same values.
 */
export { type RemedyStep, remedyStepsOf } from "./graph/remedy.js";
export {
  clip,
  quoted,
  REJECTION_CODES,
  type Rejection,
  type RejectionCode,
  withRemedy,
} from "./store/result.js";
