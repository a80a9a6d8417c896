/**
 * The checker as a write gate (`createCheckGate`, `checkGate`): a write is refused when it adds an
 * error diagnostic the graph did not have.
 */
import { describeDiagnostics, errorDelta, errorKeys } from "../check/regression.js";
import type { CapabilityManifest } from "../lang/stdlib.js";
import type { ProposedWrite, ValidationProblem, WriteValidator } from "../store/validate.js";
import type { KeptChecks } from "./check-cache.js";
import { headsKey } from "./live.js";
import { sharedCheck, startCheck } from "./shared-checks.js";

/** Options of the checker's write gate. */
export interface CheckGateOptions {
  /** The workspace's kumiki.caps.json (or its capability names): custom capabilities app.caps may declare. */
  readonly capabilities?: CapabilityManifest | readonly string[];
  /**
   * Checks kept by other processes: the first write on a graph this process has not checked goes
   * on from the one kept for the graph's state, re-checking only what the write touches, instead
   * of checking every definition first.
   */
  readonly kept?: KeptChecks;
}

/**
 * The write gate of BRIEF.md principle 4, on the full checker: a write is refused when the graph it
 * would produce has an error diagnostic the graph before it did not have. Pre-existing errors never
 * block a write (so the repair loop of ai-edit.md §9.6.2 can fix a graph one error at a time), and a
 * program without an app is not an error here (errors.md E0003: a program is built one definition
 * at a time). Opt-in checks (a11y) are not part of the gate.
 *
 * The check is incremental: one checker per store graph, kept in step with it, so a write costs a
 * scan of the definitions plus a re-check of what the write can affect, not a full check.
 */
export function createCheckGate(options: CheckGateOptions = {}): WriteValidator {
  // `kumiki check`'s own configuration (E0003 is left out of the delta below, not of the check),
  // so the check a write leaves behind answers the next `checkStore` (shared-checks.ts).
  const checkOptions = options.capabilities === undefined ? {} : { capabilities: options.capabilities };
  return {
    validate({ ops, before, after, touched }: ProposedWrite): ValidationProblem[] {
      // While the write is tried, the store's graph shares its causal order with the fork, so its
      // own heads are the fork's: the heads the write was made on are its first op's parents.
      const parents = (ops[0] as { "parent-ops"?: readonly string[] } | undefined)?.["parent-ops"];
      const baseHeads = parents === undefined ? undefined : headsKey({ heads: parents });
      const live =
        sharedCheck(before.graph, checkOptions) ??
        startCheck(before.graph, checkOptions, options.kept, baseHeads);
      const text = (id: string): string | undefined => live.input(id)?.source;
      // Unknown heads: an impossible key, so the whole graph is compared.
      const was = errorKeys(live.sync(before.graph, undefined, baseHeads ?? "\u0000unknown"), text);
      const now = errorKeys(live.sync(after.graph, touched), text);
      // A program is built one definition at a time: no app yet is not the write's error (errors.md E0003).
      const { added } = errorDelta(was, now, { ignore: ["E0003"] });
      if (added.length === 0) return [];
      return [
        {
          code: "validation-failed",
          message: `the write would add ${added.length === 1 ? "an error" : `${added.length} errors`} the graph does not have: ${describeDiagnostics(added)}; nothing was written`,
          details: { diagnostics: added },
        },
      ];
    },
  };
}

/** The store's default write gate: {@link createCheckGate} without a capability manifest. */
export const checkGate: WriteValidator = createCheckGate();
