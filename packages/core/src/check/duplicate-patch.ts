/**
 * E0007's auto-patch: the way back from a name defined twice to one definition that says what the
 * program's text says. The text reads the name as the definition that shows under it (as the
 * compiler reads a file: the later definition wins), so that text is kept — in the place, and
 * with the comment lines, of the definition it hid, which is where the program had the name
 * first — and every reference is bound to it:
 *
 * 1. the hidden definition takes the shown one's text (left out when the two say the same);
 * 2. every reference bound to the shown definition is bound to the hidden one instead (`link`);
 * 3. the shown definition, now referenced by nothing, is removed.
 *
 * Applied as one bundle (all or nothing), it leaves the graph a clean import of that program would
 * give: for a copy of a definition pasted beside it, the program as it was before the paste.
 */
import { decomposeSource } from "../ops/source.js";
import type { AutoPatch, AutoPatchOp } from "./diagnostic.js";
import type { Graph } from "./graph.js";

/**
 * The patch folding `shownId` into `hiddenId` (two definitions of one name), or undefined when it
 * cannot be written: not store definitions (a loose program's ids), or a text that does not split.
 * `readersOf` gives the definitions whose check read an id (a superset of its referrers).
 */
export function duplicatePatch(
  graph: Graph,
  shownId: string,
  hiddenId: string,
  readersOf: (id: string) => Iterable<string>,
): AutoPatch | undefined {
  const shown = graph.nodes.get(shownId);
  const hidden = graph.nodes.get(hiddenId);
  if (shown === undefined || hidden === undefined) return undefined;
  if (!shownId.startsWith("def_") || !hiddenId.startsWith("def_")) return undefined;
  const shownBody = shown.source === undefined ? undefined : decomposeSource(shown.source)?.body;
  const hiddenBody = hidden.source === undefined ? undefined : decomposeSource(hidden.source)?.body;
  if (shownBody === undefined || hiddenBody === undefined) return undefined;
  const ops: AutoPatchOp[] = [];
  if (shownBody !== hiddenBody) ops.push({ op: "replace", qname: hiddenId, body: shownBody });
  const ref = `${shown.def.layer}:${shown.def.name.name}`;
  const referrers = [...readersOf(shownId)]
    .filter((id) => id !== shownId && graph.nodes.get(id)?.targets.includes(shownId) === true)
    .sort();
  for (const id of referrers) {
    const r = graph.nodes.get(id)!;
    // A referrer that is itself hidden has no name to go by: its id names it.
    const qname = r.hidden === true ? id : `${r.def.layer}.${r.def.name.name}`;
    ops.push({ op: "link", qname, ref, to: hiddenId });
  }
  ops.push({ op: "remove", qname: shownId });
  return { op: "bundle", ops };
}
