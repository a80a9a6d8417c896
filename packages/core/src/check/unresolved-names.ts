/**
 * What a name that resolves to nothing is reported as, by the place it stands in (errors.md's
 * E01xx, and E0211 for an event selector): one row per reference role — or several, tried in
 * order, where the place says more (a handler names a reducer or a tile) — with its code, kind,
 * did-you-mean candidates, message and the hint given when no near name is found. docs/errors.md
 * shows this table (renderErrorsDoc); the checker reads it (definition-names.ts).
 */
import type { Definition } from "../lang/ast.js";
import type { Layer } from "../lang/layers.js";
import { BUILTIN_TILES } from "../lang/parser/builtins.js";
import type { ReferenceRole, ReferenceSite } from "../lang/references.js";
import {
  BUILTIN_CALLS,
  BUILTIN_EFFECTS,
  DOMAIN_TYPES,
  GENERIC_TYPES,
  PRIMITIVE_TYPES,
  RUN_REDUCER,
  UNIMPLEMENTED_CALLS,
} from "../lang/stdlib.js";
import { isCapitalized } from "./definition-support.js";

/** What a rule is asked about: the name, where it stands, and what is in scope there. */
export interface NameQuestion {
  readonly site: ReferenceSite;
  /** The definition holding the name, and its `layer.name`. */
  readonly def: Definition;
  readonly where: string;
  /** The local bindings in scope (E0103's candidates beside the slots). */
  readonly locals: readonly string[];
  /** The route's path, when the name is a route's target. */
  readonly routePath?: string;
}

/** One row of the table. */
export interface UnresolvedRule {
  readonly code: string;
  readonly kind: string;
  /** The place, as docs/errors.md says it. */
  readonly place: string;
  /** The did-you-mean candidates, as docs/errors.md says them. */
  readonly among: string;
  /** Whether the row applies (the last row of a role has no condition). */
  readonly when?: (q: NameQuestion) => boolean;
  /** Names that are no error here: built-ins, or names the place does not report. */
  readonly known?: (name: string) => boolean;
  /** The did-you-mean candidates: the names of these layers, and these other names. */
  readonly layers: (q: NameQuestion) => readonly Layer[];
  readonly extra?: (q: NameQuestion) => Iterable<string>;
  /** What is wrong, before the did-you-mean. */
  readonly message: (q: NameQuestion) => string;
  /** What to do when no near name is found. */
  readonly hint: (q: NameQuestion) => string;
}

/** A lower-case name where a tile or a value may stand reads as a value, as the compiler reads it. */
const readsAsValue = (q: NameQuestion): boolean =>
  !isCapitalized(q.site.name) && q.site.layers.some((l) => l === "slot" || l === "fn");

const undefinedTile = (place: string, what: (q: NameQuestion) => string): UnresolvedRule => ({
  code: "E0105",
  kind: "undef-tile",
  place,
  among: "the tiles",
  layers: () => ["tile"],
  message: (q) => `${what(q)} in ${q.where}`,
  hint: () => "declare the tile",
});

const E0103_NAME: UnresolvedRule = {
  code: "E0103",
  kind: "undef-ref",
  place: "a value",
  among: "the slots and the local bindings in scope",
  // A fn written bare is not a value, so it is no repair.
  layers: (q) => (q.site.layers.includes("slot") ? ["slot"] : []),
  extra: (q) => q.locals,
  message: (q) => `Reference to undefined name "${q.site.name}" in ${q.where}`,
  hint: () => "declare a slot of that name or bind it",
};

const E0103_SLOT: UnresolvedRule = {
  code: "E0103",
  kind: "undef-slot",
  place: "a slot written (`x := …`) or named by a test",
  among: "the slots",
  known: (name) => name === "route",
  layers: () => ["slot"],
  message: (q) =>
    q.site.role === "assign"
      ? `Assignment to undefined slot "${q.site.name}" in ${q.where}`
      : `Test ${q.where} names undefined slot "${q.site.name}"`,
  hint: () => "declare the slot",
};

const E0104: UnresolvedRule = {
  code: "E0104",
  kind: "undef-effect",
  place: "an effect emitted, subscribed to, or mocked by a test",
  among: "the effects and the built-in effects",
  known: (name) => BUILTIN_EFFECTS.has(name),
  layers: () => ["effect"],
  extra: () => BUILTIN_EFFECTS.keys(),
  message: (q) =>
    `${q.site.role === "test-mock" ? `Mock targets undefined effect "${q.site.name}"` : `Reference to undefined effect "${q.site.name}"`} in ${q.where}`,
  hint: () => "declare the effect",
};

const HANDLER: readonly UnresolvedRule[] = [
  {
    code: "E0102",
    kind: "undef-reducer",
    place: "a handler or test target that names a reducer",
    among: "the reducers",
    when: (q) => q.site.layers.includes("reducer"),
    layers: () => ["reducer"],
    message: (q) => `Reference to undefined reducer "${q.site.name}" in ${q.where}`,
    hint: () => "declare the reducer",
  },
  undefinedTile(
    "a handler or test target that names a tile",
    (q) => `Reference to undefined tile "${q.site.name}"`,
  ),
];

/** The table: for each reference role, its rows in order (none: not reported by name). */
export const UNRESOLVED: { readonly [R in ReferenceRole]: readonly UnresolvedRule[] } = {
  // A variant's tag is checked against its type (E0216, E0209); a theme name is not reported.
  variant: [],
  theme: [],
  expr: [E0103_NAME],
  shorthand: [{ ...E0103_NAME, place: "a record field written by its name alone (`{id}`)" }],
  assign: [E0103_SLOT],
  "test-slot": [E0103_SLOT],
  bind: [
    {
      code: "E0103",
      kind: "undef-ref",
      place: "a tile's `bind=`",
      among: "the slots",
      layers: () => ["slot"],
      message: (q) => `Reference to undefined slot "${q.site.name}" in the bind= of ${q.where}`,
      hint: () => "declare the slot",
    },
  ],
  call: [
    {
      code: "E0116",
      kind: "undef-call",
      place: "a function called",
      among: "the fns and the built-in calls",
      known: (name) => BUILTIN_CALLS.has(name) || UNIMPLEMENTED_CALLS.has(name) || name === RUN_REDUCER,
      layers: () => ["fn"],
      extra: () => BUILTIN_CALLS.keys(),
      message: (q) => `Call to undefined function "${q.site.name}" in ${q.where}`,
      hint: () => "declare the fn",
    },
  ],
  emit: [E0104],
  "effect-event": [E0104],
  "test-mock": [E0104],
  selector: [
    {
      code: "E0211",
      kind: "undef-tile-in-selector",
      place: "the tile of a reducer's `on=ui.<event>(Tile)`",
      among: "the tiles",
      when: (q) => q.def.kind === "ReducerDef",
      known: (name) => name === "_",
      layers: () => ["tile"],
      message: (q) => {
        const on = q.def.kind === "ReducerDef" ? q.def.on : undefined;
        const event =
          on?.kind === "UiEvent" ? `ui.${on.event}` : on?.kind === "TileEvent" ? `tile.${on.event}` : "";
        return `Reducer "${q.def.name.name}" subscribes to ${event}(${q.site.name}) but tile "${q.site.name}" is not declared`;
      },
      hint: () => "declare the tile",
    },
    {
      ...undefinedTile("an event selector elsewhere", (q) => `Reference to undefined tile "${q.site.name}"`),
      known: (name) => name === "_",
    },
  ],
  handler: HANDLER,
  "test-target": HANDLER,
  route: [
    undefinedTile("a route's target", (q) =>
      q.routePath === undefined
        ? `Route targets undefined tile "${q.site.name}"`
        : `Route "${q.routePath}" targets undefined tile "${q.site.name}"`,
    ),
  ],
  tile: [
    {
      ...E0103_NAME,
      place: "a lower-case name where a tile or a value may stand",
      among: "the definitions of the layers the place allows",
      when: readsAsValue,
      known: (name) => BUILTIN_TILES.has(name),
      layers: (q) => q.site.layers,
      extra: undefined,
      hint: (q) => `declare a ${q.site.layers.join(" or ")} of that name`,
    },
    {
      ...undefinedTile(
        "a tile placed in another tile",
        (q) => `Reference to undefined tile "${q.site.name}"`,
      ),
      among: "the definitions of the layers the place allows",
      known: (name) => BUILTIN_TILES.has(name),
      layers: (q) => q.site.layers,
      hint: (q) => `declare a ${q.site.layers.join(" or ")} of that name`,
    },
  ],
  type: [
    {
      code: "E0117",
      kind: "undef-type",
      place: "a type",
      among: "the types, the primitives, the standard library's domain types and the generic constructors",
      known: (name) => DOMAIN_TYPES.has(name),
      layers: () => ["type"],
      extra: () => [...PRIMITIVE_TYPES, ...DOMAIN_TYPES, ...GENERIC_TYPES.keys()],
      message: (q) => `Reference to undefined type "${q.site.name}" in ${q.where}`,
      hint: () => "define the type",
    },
  ],
  motion: [
    {
      code: "E0107",
      kind: "undef-motion",
      place: "a motion",
      among: "the motions",
      layers: () => ["motion"],
      message: (q) => `Reference to undefined motion "${q.site.name}" in ${q.where}`,
      hint: () => "declare the motion",
    },
  ],
};

/** The row a name at `q` is reported by, or undefined when it is no error there. */
export function unresolvedRule(q: NameQuestion): UnresolvedRule | undefined {
  const rule = UNRESOLVED[q.site.role].find((r) => r.when === undefined || r.when(q));
  return rule === undefined || rule.known?.(q.site.name) === true ? undefined : rule;
}
