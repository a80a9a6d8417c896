/**
 * What a model needs to repair one error that no auto-patch fixes (ai-edit.md §9.6.2: only the
 * rest goes to a model): the definition's text as shown, and the names it can use — the
 * definitions it references, and those of the layers the broken name was looked for in — not the
 * whole program.
 */
import type { Diagnostic } from "../check/diagnostic.js";
import { isDefId } from "../ops/ids.js";
import type { Store } from "../store/store.js";

/** The compact context of one diagnostic (see the module comment). */
export interface RepairContext {
  /** `layer.name` of the definition the diagnostic is in. */
  readonly definition: string;
  /** Its text, as `view` shows it (what an edit's anchors match). */
  readonly text: string;
  /** The definitions it references now, `layer.name`. */
  readonly references: readonly string[];
  /**
   * Definitions it could mean: of the layers it references and of the did-you-mean's name
   * (`layer.name`, that name first; at most 20).
   */
  readonly candidates: readonly string[];
}

/** The context of `d`, or undefined for a diagnostic about the whole program. */
export function repairContext(store: Store, d: Diagnostic): RepairContext | undefined {
  if (d.definition === undefined || !isDefId(d.definition)) return undefined;
  const viewed = store.view(d.definition);
  if (!viewed.ok) return undefined;
  const [def] = viewed.value.definitions;
  if (def === undefined) return undefined;
  const reader = store.read();
  const state = reader.graph.definition(d.definition);
  const references =
    state === undefined
      ? []
      : [...reader.materializer.dependencies(state)].flatMap((id) => {
          const s = reader.graph.definition(id);
          return s === undefined ? [] : [`${s.layer}.${s.name}`];
        });
  // The layers it could mean: those it references already, and that of the near name, if any.
  const listed = store.list();
  const near = d.suggestion?.name;
  const layers = new Set(references.map((q) => q.slice(0, q.indexOf("."))));
  const entries = listed.ok ? listed.value.filter((e) => e.def !== d.definition) : [];
  for (const e of entries) if (e.name === near) layers.add(e.layer);
  const candidates = entries
    .filter((e) => layers.has(e.layer))
    .sort((a, b) => Number(b.name === near) - Number(a.name === near))
    .slice(0, 20)
    .map((e) => e.qname);
  return { definition: def.qname, text: def.text, references: [...new Set(references)].sort(), candidates };
}
