/**
 * One definition as the live view's page shows it (`kumiki ui`): its text and hash, what it
 * references and what references it, its history with each op's text before and after, the
 * conflicts that touched it and its findings.
 */
import type { CheckOptions } from "../check/check.js";
import type { Diagnostic } from "../check/diagnostic.js";
import type { DefinitionView } from "../graph/reader.js";
import type { Conflict } from "../graph/records.js";
import { checkStore } from "../integrity/store-check.js";
import type { ContentHash } from "../lang/hash.js";
import { type DefId, isDefId } from "../ops/ids.js";
import { historyOf } from "../store/history.js";
import type { StoreResult } from "../store/result.js";
import type { Store } from "../store/store.js";
import type { HistoryEntry } from "../store/store-types.js";

/** A definition a page links to. */
export interface DefinitionLink {
  readonly def: DefId;
  readonly qname: string;
}

/** One op of a definition's history, with the text it found and the text it left. */
export interface PageHistoryEntry extends HistoryEntry {
  /** The definition's stored text as the op's author saw it before writing (absent for its add). */
  readonly before?: string;
  /** The text the op left, as its author wrote it (absent when it left none: a remove). */
  readonly after?: string;
}

/** {@link definitionPage}'s answer. */
export interface DefinitionPage {
  readonly view: DefinitionView;
  /** Its content hash (absent when it is not live). */
  readonly hash?: ContentHash;
  /** The definitions its text references, and those whose text references it. */
  readonly uses: readonly DefinitionLink[];
  readonly usedBy: readonly DefinitionLink[];
  /** Every op written to it, in causal order. */
  readonly history: readonly PageHistoryEntry[];
  /** The conflict records that involve it, with how to retry. */
  readonly conflicts: readonly Conflict[];
  /** Its findings (`kumiki check`'s, with `check`'s options). */
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * The page of definition `def` (an identity, `def_…`: a page is reached from the map or a link,
 * and a name can change under it). Refused with `not-found` for an identity the graph never held.
 */
export function definitionPage(
  store: Store,
  def: string,
  options: { readonly check?: CheckOptions } = {},
): StoreResult<DefinitionPage> {
  const reader = store.read();
  const g = reader.graph;
  const view = isDefId(def) ? reader.get(def) : undefined;
  if (view === undefined || !isDefId(def))
    return {
      ok: false,
      error: {
        code: "not-found",
        message: `no definition ${JSON.stringify(def.slice(0, 64))} in this graph: give a def_… identity the map lists`,
      },
    };
  const link = (id: DefId): DefinitionLink => ({ def: id, qname: g.label(id) });
  const uses = new Set<DefId>();
  for (const target of Object.values(view.refs))
    if (typeof target === "string" && target !== def && g.definition(target as DefId) !== undefined)
      uses.add(target as DefId);
  const history = (historyOf(g, def)[0]?.entries ?? []).map((e): PageHistoryEntry => {
    const before = g.stateSeenBy(def, e.opId, false);
    const after = g.stateSeenBy(def, e.opId, true);
    return {
      ...e,
      ...(before?.alive === true ? { before: before.body.text } : {}),
      ...(after?.alive === true ? { after: after.body.text } : {}),
    };
  });
  const hash = reader.hash(def);
  return {
    ok: true,
    value: {
      view,
      ...(hash === undefined ? {} : { hash }),
      uses: [...uses].map(link),
      usedBy: reader.referrers(def).map((r) => link(r.view.def)),
      history,
      conflicts: g.conflicts(new Set([def])),
      diagnostics: checkStore(store, options.check ?? {}).diagnostics.filter((d) => d.definition === def),
    },
  };
}
