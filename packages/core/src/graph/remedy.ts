/**
 * How to retry after a conflict, as data: the steps a conflict record's `retry` sentence
 * describes, so that each edge names them in its own terms (the CLI as `kumiki …` commands, the
 * MCP server as its tools and arguments) and core names neither.
 */
import type { OpId } from "../ops/ids.js";

/** One step of a retry. `def` is a label as the graph shows it (`slot.todos`, or `def_…`). */
export type RemedyStep =
  /** Revert an op (a new op that undoes it). */
  | { readonly do: "revert"; readonly op: OpId }
  /** Lift a lock: `agent` is the holder (undefined: whichever holder gives way). */
  | { readonly do: "unlock"; readonly agent?: string; readonly pattern: string }
  /** See who references a definition. */
  | { readonly do: "refs"; readonly def: string }
  /** Read a definition as it is now. */
  | { readonly do: "view"; readonly def: string }
  /** Rename a definition (to a free name). */
  | { readonly do: "rename"; readonly def: string }
  /** Remove a definition. */
  | { readonly do: "remove"; readonly def: string }
  /** Edit or replace a definition's text. */
  | { readonly do: "edit"; readonly def: string }
  /** Bind one of a definition's references to another definition. */
  | { readonly do: "link"; readonly def: string }
  /** See which definitions exist. */
  | { readonly do: "list" };

/** The retry steps a rejection's details carry: its own (`steps`), or its first lost op's (`lost[0].remedy`). */
export function remedyStepsOf(
  details: Readonly<Record<string, unknown>> | undefined,
): readonly RemedyStep[] | undefined {
  if (details === undefined) return undefined;
  if (Array.isArray(details.steps)) return details.steps as RemedyStep[];
  const lost = details.lost;
  if (Array.isArray(lost)) {
    const first = lost[0] as { remedy?: unknown } | undefined;
    if (Array.isArray(first?.remedy)) return first.remedy as RemedyStep[];
  }
  return undefined;
}
