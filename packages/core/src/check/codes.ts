/**
 * The one normative registry of diagnostic codes. Every code the checker can report is here, with
 * its kinds, severity, band and whether `fix` can repair it; docs/errors.md is generated from this
 * table ({@link renderErrorsDoc}) and a test holds it against the spec's errors.md.
 *
 * A code is a permanent contract: once assigned its meaning never changes, and no code means two
 * things (the test asserts it).
 */

import { UNRESOLVED, type UnresolvedRule } from "./unresolved-names.js";

/** `error` fails `check` and the write gate; `warning` is reported and changes no exit status. */
export type Severity = "error" | "warning";

/** The code families of errors.md ("The Code System"). */
export type Band =
  | "structure"
  | "names"
  | "types"
  | "capabilities"
  | "motion"
  | "writes"
  | "opt-in"
  | "runtime"
  | "warnings";

/** A narrowing flag of `kumiki check` (ai-edit.md §9.2.3). */
export type Narrowing = "types" | "refs" | "effects";

/** The opt-in flag that has to be on for a code to be reported at all. */
export type OptIn = "a11y" | "strict-icons" | "strict-selector-id";

/** One registered code. */
export interface CodeInfo {
  /** `E0103`, `W0212`. */
  readonly code: string;
  /** The machine-readable kinds under this code; the first is the primary one. */
  readonly kinds: readonly string[];
  readonly severity: Severity;
  readonly band: Band;
  /** One line: what the mistake is. */
  readonly meaning: string;
  /** True when `fix` can propose an op that repairs it (errors.md, "Auto-patch Coverage"). */
  readonly autoPatch: boolean;
  /**
   * True when the auto-patch is this project's, beyond errors.md's coverage table (which lists
   * none for the code): the compiler offers a did-you-mean in words only.
   */
  readonly autoPatchBeyondSpec?: true;
  /** How the repair is made, when {@link autoPatch}. */
  readonly strategy?: string;
  /** Reported only when this opt-in is on. */
  readonly optIn?: OptIn;
  /** `spec`: defined by errors.md. `kumiki-graph`: a code this project adds (errors.md has none). */
  readonly origin: "spec" | "kumiki-graph";
  /** True when this checker reports the code today. */
  readonly checked: boolean;
}

/** The band of each two-digit family, and which narrowing flag selects it (null: none does). */
export const BANDS: Readonly<
  Record<Band, { readonly prefix: string; readonly domain: string; readonly selectedBy: Narrowing | null }>
> = {
  structure: {
    prefix: "E00",
    domain: "App structure (such as mandatory routing requirements)",
    selectedBy: null,
  },
  names: {
    prefix: "E01",
    domain: "Name resolution (undefined references, reserved names)",
    selectedBy: "refs",
  },
  types: { prefix: "E02", domain: "Type mismatch", selectedBy: "types" },
  capabilities: { prefix: "E03", domain: "Capabilities and purity", selectedBy: "effects" },
  motion: { prefix: "E04", domain: "Motion", selectedBy: "types" },
  writes: { prefix: "E06", domain: "reducer write rules", selectedBy: "types" },
  "opt-in": {
    prefix: "E07",
    domain: "Opt-in checks: accessibility (a11y), strict-icons, testing-DSL invariants",
    selectedBy: null,
  },
  runtime: {
    prefix: "E08",
    domain: "Runtime hazards (code that compiles but breaks at runtime)",
    selectedBy: null,
  },
  warnings: { prefix: "W02", domain: "Non-fatal warnings (build still succeeds)", selectedBy: "types" },
};

type Entry = Omit<CodeInfo, "band" | "origin" | "checked" | "autoPatch"> & {
  readonly origin?: CodeInfo["origin"];
  readonly checked?: boolean;
  readonly autoPatch?: boolean;
};

const NAME_SUGGEST = "Close-name suggestion (did-you-mean) against";

const ENTRIES: readonly Entry[] = [
  // ----- E00xx structure -----
  {
    code: "E0001",
    kinds: ["missing-404"],
    severity: "error",
    meaning: 'An app that declares app.routes has no route for the "/404" pattern.',
    autoPatch: true,
    strategy: 'Add a NotFound tile (when none exists) and a "/404" -> NotFound entry to app.routes.',
    checked: true,
  },
  {
    code: "E0002",
    kinds: ["duplicate-timer-name"],
    severity: "error",
    meaning: "Two timer(d, name=N) triggers declare the same timer name.",
    checked: true,
  },
  {
    code: "E0003",
    kinds: ["missing-app"],
    severity: "error",
    meaning: "The program declares no app definition, so it has no entry point.",
    checked: true,
  },
  {
    code: "E0004",
    kinds: ["duplicate-app"],
    severity: "error",
    meaning: "The program declares more than one app definition.",
    checked: true,
  },
  {
    code: "E0007",
    kinds: ["duplicate-definition"],
    severity: "error",
    meaning: "One layer holds two definitions of the same name; only one of them can be referenced.",
    origin: "kumiki-graph",
    autoPatch: true,
    autoPatchBeyondSpec: true,
    strategy:
      "Keep the text that shows under the name (the later definition, as the compiler reads a file) in the place and with the comments of the definition it hides, bind every reference to that one, and remove the other: one bundle of replace, link and remove.",
    checked: true,
  },
  {
    code: "E0008",
    kinds: ["parse-error"],
    severity: "error",
    meaning:
      "A stored definition's text does not parse (a faithful import keeps it as written, a merge can leave one); nothing else in it is checked. Replace or edit it until it parses.",
    origin: "kumiki-graph",
    checked: true,
  },
  // ----- E01xx names -----
  {
    code: "E0102",
    kinds: ["undef-reducer"],
    severity: "error",
    meaning: "An event handler or other reducer position names a reducer that does not exist.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the reducer names.`,
    checked: true,
  },
  {
    code: "E0103",
    kinds: ["undef-ref", "undef-slot"],
    severity: "error",
    meaning: "An expression reads, or a reducer assigns, a name that no slot, binding or fn declares.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the slot and binding names.`,
    checked: true,
  },
  {
    code: "E0104",
    kinds: ["undef-effect", "init-not-effect-call"],
    severity: "error",
    meaning: "An emit, effect trigger or app.init entry names no effect (or an init entry is not a call).",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the effect names.`,
    checked: true,
  },
  {
    code: "E0105",
    kinds: ["undef-tile"],
    severity: "error",
    meaning: "A tile reference or a route target names a tile that does not exist.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the tile names.`,
    checked: true,
  },
  {
    code: "E0106",
    kinds: ["undef-timer"],
    severity: "error",
    meaning: "A stop-timer(N) names a timer that no timer(d, name=N) trigger declares.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the timer names declared by timer triggers.`,
    checked: true,
  },
  {
    code: "E0107",
    kinds: ["undef-motion"],
    severity: "error",
    meaning: 'A motion: "<name>" prop names a motion that is not declared.',
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the motion names.`,
    checked: true,
  },
  {
    code: "E0108",
    kinds: ["undef-member"],
    severity: "error",
    meaning: "A member access names neither a field nor a stdlib member of the receiver's known type.",
    autoPatch: true,
    autoPatchBeyondSpec: true,
    strategy: `${NAME_SUGGEST} the record type's field names.`,
    checked: true,
  },
  {
    code: "E0109",
    kinds: ["test-wildcard-misuse"],
    severity: "error",
    meaning: "A test wildcard appears outside a reducer-test expect.",
    checked: true,
  },
  {
    code: "E0110",
    kinds: ["unknown-token-group"],
    severity: "error",
    meaning: "A @group.name token reference names a group outside the closed theme namespaces.",
    checked: true,
  },
  {
    code: "E0111",
    kinds: ["orphan-sub-routes"],
    severity: "error",
    meaning: "A tile declares sub-routes but no app route targets it.",
    checked: true,
  },
  {
    code: "E0112",
    kinds: ["duplicate-sub-route"],
    severity: "error",
    meaning: "One tile declares the same sub-route path twice.",
    checked: true,
  },
  {
    code: "E0113",
    kinds: ["sub-routes-without-outlet"],
    severity: "error",
    meaning: "A tile declares sub-routes but its body never calls route-outlet.",
    checked: true,
  },
  {
    code: "E0114",
    kinds: ["sub-routes-without-wildcard-parent"],
    severity: "error",
    meaning: 'A tile declares sub-routes but its parent route is not a wildcard ("/*") pattern.',
    checked: true,
  },
  {
    code: "E0115",
    kinds: ["reserved-slot-name"],
    severity: "error",
    meaning: 'A slot is named "route", which the router-maintained route slot shadows.',
    checked: true,
  },
  {
    code: "E0116",
    kinds: ["undef-call"],
    severity: "error",
    meaning: "A call f(...) names neither a declared fn nor a built-in call.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the declared fn names plus the built-in calls (slots and tiles are not candidates).`,
    checked: true,
  },
  {
    code: "E0117",
    kinds: ["undef-type"],
    severity: "error",
    meaning: "A type name resolves to no type definition, standard-library type or type parameter.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the program's types, then the primitives, the standard library's domain types and the generic constructors.`,
    checked: true,
  },
  // ----- E02xx types -----
  {
    code: "E0201",
    kinds: ["type-mismatch"],
    severity: "error",
    meaning: "A value does not have the type its position requires.",
    checked: true,
  },
  {
    code: "E0202",
    kinds: ["emit-arg-type-mismatch"],
    severity: "error",
    meaning: "An emit argument does not match the effect's declared in= type.",
    checked: true,
  },
  {
    code: "E0204",
    kinds: ["effect-id-misuse"],
    severity: "error",
    meaning: "An EffectId is used with an operation other than == / != or storage.",
    checked: true,
  },
  {
    code: "E0205",
    kinds: ["bind-on-file-input"],
    severity: "error",
    meaning: 'input(type="file") is given a bind=.',
    checked: true,
  },
  {
    code: "E0206",
    kinds: ["file-only-prop"],
    severity: "error",
    meaning: 'accept / multiple is given to an input whose type is known not to be "file".',
    checked: true,
  },
  {
    code: "E0207",
    kinds: ["pat-arity-mismatch"],
    severity: "error",
    meaning: "A match pattern's element or bind count disagrees with the scrutinee's type.",
    checked: true,
  },
  {
    code: "E0208",
    kinds: ["pat-type-mismatch"],
    severity: "error",
    meaning: "A match pattern's shape cannot match the scrutinee's type.",
    checked: true,
  },
  {
    code: "E0209",
    kinds: ["pat-unknown-variant"],
    severity: "error",
    meaning: "A match arm names a variant tag the scrutinee's union does not declare.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the variant tags of the scrutinee's union (Option / Result or a user type, through aliases).`,
    checked: true,
  },
  {
    code: "E0210",
    kinds: ["type-arity-mismatch"],
    severity: "error",
    meaning: "A generic type is applied to the wrong number of type arguments.",
    checked: true,
  },
  {
    code: "E0211",
    kinds: ["undef-tile-in-selector"],
    severity: "error",
    meaning: "A reducer's ui.* selector (or tile.mount target) names a tile that is not declared.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the tile names.`,
    checked: true,
  },
  {
    code: "E0212",
    kinds: ["selector-id-mismatch"],
    severity: "error",
    meaning: "A Tile#id selector names an id the tile's literal {id} can never produce.",
    optIn: "strict-selector-id",
  },
  {
    code: "W0212",
    kinds: ["ui-event-tile-mismatch"],
    severity: "warning",
    meaning: "A ui.<ev>(Tile) subscription targets a tile with no descendant that fires <ev>.",
  },
  {
    code: "W0230",
    kinds: ["duplicate-capability"],
    severity: "warning",
    meaning:
      "app.caps declares the same capability more than once (harmless to the compiler, but a sign that repairs were applied twice). Remove the repeated entry.",
    origin: "kumiki-graph",
    checked: true,
  },
  {
    code: "E0213",
    kinds: ["call-arity-mismatch"],
    severity: "error",
    meaning: "A fn, effect, tile or variant is applied to a different number of arguments than it declares.",
    checked: true,
  },
  {
    code: "E0214",
    kinds: ["missing-record-field"],
    severity: "error",
    meaning: "A record literal omits a field its declared type requires.",
    checked: true,
  },
  {
    code: "E0215",
    kinds: ["unknown-record-field"],
    severity: "error",
    meaning: "A record literal or .copy names a field its declared type does not have.",
    checked: true,
  },
  {
    code: "E0216",
    kinds: ["unknown-variant"],
    severity: "error",
    meaning: "A variant constructor names a tag its declared union does not have.",
    autoPatch: true,
    strategy: `${NAME_SUGGEST} the variant tags of the declared union.`,
    checked: true,
  },
  {
    code: "E0217",
    kinds: ["int-literal-precision"],
    severity: "error",
    meaning: "An Int position is given a literal outside the exactly representable range.",
    checked: true,
  },
  // ----- E03xx capabilities -----
  {
    code: "E0301",
    kinds: ["missing-capability"],
    severity: "error",
    meaning: "An emitted effect requires a capability that app.caps does not declare.",
    autoPatch: true,
    strategy:
      "Append every capability the app lacks to its caps = [...], in one patch carried by the app's first E0301 (the others name it in shares-patch-of).",
    checked: true,
  },
  {
    code: "E0302",
    kinds: ["unknown-capability"],
    severity: "error",
    meaning: "An app.caps entry is neither a standard capability nor registered in kumiki.caps.json.",
    checked: true,
  },
  {
    code: "E0303",
    kinds: ["invalid-cancel-target"],
    severity: "error",
    meaning:
      "A cap=http.cancel effect is not in=EffectId out=Unit, or declares policy / retry / map-request.",
    checked: true,
  },
  {
    code: "E0305",
    kinds: ["fn-impurity"],
    severity: "error",
    meaning: "A fn reads a slot (or an emit is used as an expression outside a reducer).",
    checked: true,
  },
  // ----- E04xx motion -----
  {
    code: "E0401",
    kinds: ["motion-unknown-property"],
    severity: "error",
    meaning: "A keyframe uses a property outside the animatable set, or a non-number value.",
    checked: true,
  },
  {
    code: "E0402",
    kinds: ["motion-invalid-timing"],
    severity: "error",
    meaning: "A motion timing field or its value is outside its closed set.",
    checked: true,
  },
  {
    code: "E0403",
    kinds: ["motion-malformed"],
    severity: "error",
    meaning: "A motion lacks its keyframes record or its from / to stops.",
    checked: true,
  },
  // ----- E06xx writes -----
  {
    code: "E0601",
    kinds: ["duplicate-write"],
    severity: "error",
    meaning: "One reducer writes the same slot path shape more than once (outside exclusive branches).",
    checked: true,
  },
  // ----- E07xx opt-in -----
  {
    code: "E0701",
    kinds: ["a11y-button"],
    severity: "error",
    meaning: "A button has neither a text= argument nor an aria-label prop.",
    optIn: "a11y",
    checked: true,
  },
  {
    code: "E0702",
    kinds: ["a11y-image"],
    severity: "error",
    meaning: "An image has no alt.",
    optIn: "a11y",
    checked: true,
  },
  {
    code: "E0703",
    kinds: ["a11y-link"],
    severity: "error",
    meaning: "A link has neither inner text nor an aria-label.",
    optIn: "a11y",
    checked: true,
  },
  {
    code: "E0704",
    kinds: ["unknown-icon"],
    severity: "error",
    meaning: "A literal icon name is in neither the icon set nor a theme.icons block.",
    optIn: "strict-icons",
  },
  {
    code: "E0712",
    kinds: ["episode-mock-invalid"],
    severity: "error",
    meaning: "An episode-test mock is not from-log, ignore, ok(...) or err(...).",
    checked: true,
  },
  // ----- E08xx runtime -----
  {
    code: "E0801",
    kinds: ["unimplemented-method"],
    severity: "error",
    meaning: "A method call names a method the runtime does not implement.",
  },
  {
    code: "E0802",
    kinds: ["unimplemented-function"],
    severity: "error",
    meaning: "A call names a documented function the toolchain does not implement (trace).",
    checked: true,
  },
];

function bandOf(code: string): Band {
  const prefix = code.slice(0, 3);
  for (const [band, info] of Object.entries(BANDS) as [Band, (typeof BANDS)[Band]][]) {
    if (info.prefix === prefix) return band;
  }
  throw new Error(`code ${code} belongs to no band`);
}

/** Every registered code, in code order (E before W within a number). */
export const CODES: readonly CodeInfo[] = ENTRIES.map(
  (e): CodeInfo => ({
    ...e,
    band: bandOf(e.code),
    origin: e.origin ?? "spec",
    checked: e.checked ?? false,
    autoPatch: e.autoPatch ?? false,
  }),
).sort((a, b) => {
  const na = a.code.slice(1);
  const nb = b.code.slice(1);
  if (na !== nb) return na < nb ? -1 : 1;
  return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
});

const byCode: ReadonlyMap<string, CodeInfo> = new Map(CODES.map((c) => [c.code, c]));

/** The registry entry of `code`, or undefined for a code that is not registered. */
export function codeInfo(code: string): CodeInfo | undefined {
  return byCode.get(code);
}

/** The registry entry of `code`; throws for an unregistered code (a checker bug). */
export function requireCode(code: string): CodeInfo {
  const info = byCode.get(code);
  if (info === undefined) throw new Error(`unregistered diagnostic code ${code}`);
  return info;
}

/** Which narrowing flag selects `code`, or null when none does (reported under every narrowing). */
export function narrowingOf(code: string): Narrowing | null {
  return BANDS[requireCode(code).band].selectedBy;
}

function cell(s: string): string {
  return s.replaceAll("|", "\\|");
}

/** A Markdown table with its columns padded to one width, as the repository's formatter lays it out. */
function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

/** A deliberate difference from the public Kumiki compiler's `check`, with the cases it shows in. */
export interface CompilerDifference {
  /** The code we report where upstream reports none (or another). */
  readonly code: string;
  /** Every conformance case of this mutation kind, or… */
  readonly mutation?: string;
  /** …these cases (conformance file names). */
  readonly cases?: readonly string[];
  readonly why: string;
}

/**
 * Where `check` differs from the public compiler on purpose: rendered in docs/errors.md, and the
 * only disagreements the conformance test allows.
 */
export const COMPILER_DIFFERENCES: readonly CompilerDifference[] = [
  {
    code: "E0007",
    mutation: "duplicate-def",
    why: "A second definition of a name: upstream's check reports nothing and the later definition silently replaces the earlier (BRIEF.md's first complaint about the public toolchain). In a graph two definitions of one name are a conflict an agent must see, so we report E0007 (on top of whatever else upstream reports).",
  },
  {
    code: "E0216",
    cases: ["apps-05-project-management--unknown-variant.kumiki"],
    why: "A misspelled variant (`DueUpcomingg`) returned by a fn through `match … -> let … in if … else`: upstream does not judge a value in that position and reports nothing; we judge every arm of a match and the body of a let against the fn's declared return type, as errors.md's E0216 (a variant not a member of the declared union) says.",
  },
  {
    code: "E0301",
    cases: ["features-38-confirm-leave-guard--undeclared-cap.kumiki"],
    why: "lifecycle.md declares `effect confirm cap=notification.show`; upstream does not enforce that capability, we do (an app that emits confirm must declare notification.show).",
  },
];

/** docs/errors.md: The bands of codes and the flags that narrow a check to them. */
function bandsSection(): string[] {
  const lines: string[] = [];
  lines.push("## Bands and narrowing");
  lines.push("");
  lines.push(
    "`check --types`, `--refs` and `--effects` compose as a union of the bands they select; a band no flag",
  );
  lines.push(
    "selects is reported under every narrowing (ai-edit.md §9.2.3). Warnings never change an exit status.",
  );
  lines.push("");
  lines.push(
    ...table(
      ["Band", "Codes", "Domain", "Selected by"],
      (Object.entries(BANDS) as [Band, (typeof BANDS)[Band]][]).map(([band, info]) => [
        band,
        `\`${info.prefix}xx\``,
        cell(info.domain),
        info.selectedBy === null ? "always reported" : `\`--${info.selectedBy}\``,
      ]),
    ),
  );
  lines.push("");
  return lines;
}

/** docs/errors.md: Where a position points: one convention for locations, refusals and edits. */
function positionsSection(): string[] {
  const lines: string[] = [];
  lines.push("## Positions");
  lines.push("");
  for (const l of [
    "One convention everywhere a position is given: a diagnostic's `location` (`reducer.boot.body:5`) and its",
    "`span.line`, a write refusal's line (`does not parse at body:5, column 15`, `details.line`, each",
    "`details.missing[].line`), `refs`, and the `body:N` keys of `edit` and auto-patches. Line 1 is the line",
    "of the definition's layer keyword; the comment and blank lines kept above a definition are not counted.",
    "Columns are 1-based on that line. So a position taken from a refusal or a diagnostic is the key of the",
    "edit that changes that line (`{\"body:5\": \"replace 'A' -> 'B'\"}`). `span.offset` and `span.end` are",
    "offsets into the definition's stored text (`view --json`'s `text`, the comment lines included). A",
    "program file's own errors (`import`, `sync --files`) give the file's line and column instead.",
    "",
    "Against the public compiler (`conformance.test.ts` compares every error's line on the shared corpus):",
    "the same code on the same line in 234 of 261 error cases; in the other 27 the error is inside an app's",
    "`routes` or `caps` or inside a `test`, where the compiler gives the definition's first line (column 1)",
    "and `check` gives the line of the entry itself, the line an edit has to change. That is on purpose.",
    "Columns agree on 208 of 306 of those errors; where they differ, the compiler points at the start of the",
    "enclosing expression (`emit`, a member's receiver, `ui.click(`, a definition's keyword) and `check` at",
    "the name to change (the effect, the member, the tile, the definition's name), also on purpose.",
  ])
    lines.push(l);
  lines.push("");
  return lines;
}

/** docs/errors.md: What an undefined name is reported as, by the place it stands in. */
function unresolvedSection(): string[] {
  const lines: string[] = [];
  lines.push("## Undefined names by position");
  lines.push("");
  lines.push(
    "A name that resolves to nothing is reported by the place it stands in (`check/unresolved-names.ts`, the",
  );
  lines.push(
    "table the checker reads; rows of one role are tried in order). A near name found among the candidates",
  );
  lines.push("is offered as a did-you-mean and as an auto-patch renaming it.");
  lines.push("");
  lines.push(
    ...table(
      ["Role", "Place", "Code", "Kind", "Did-you-mean among"],
      (Object.entries(UNRESOLVED) as [string, readonly UnresolvedRule[]][]).flatMap(([role, rules]) =>
        rules.length === 0
          ? [[`\`${role}\``, "not reported by name", "", "", ""]]
          : rules.map((r) => [`\`${role}\``, cell(r.place), `\`${r.code}\``, `\`${r.kind}\``, cell(r.among)]),
      ),
    ),
  );
  lines.push("");
  return lines;
}

/** docs/errors.md: Every registered code, with the note on the codes this project adds. */
function codesSection(): string[] {
  const lines: string[] = [];
  lines.push("## Codes");
  lines.push("");
  lines.push(
    ...table(
      ["Code", "Kinds", "Severity", "Meaning", "Opt-in", "Auto-patch", "Checked"],
      CODES.map((c) => [
        c.origin === "spec" ? `\`${c.code}\`` : `\`${c.code}\` (+)`,
        c.kinds.map((k) => `\`${k}\``).join(" / "),
        c.severity,
        cell(c.meaning),
        c.optIn === undefined ? "" : `\`--${c.optIn}\``,
        c.autoPatch ? (c.autoPatchBeyondSpec === true ? "yes (+)" : "yes") : "no",
        c.checked ? "yes" : "no",
      ]),
    ),
  );
  lines.push("");
  lines.push(
    "(+) not in errors.md: a code this project adds. `E0007 duplicate-definition` is the code the public Kumiki",
  );
  lines.push(
    "compiler's registry gives the mistake, though its `check` does not report it (see the next section). An",
  );
  lines.push(
    "auto-patch marked (+) is this project's where errors.md's coverage table has none (the did-you-mean as an edit).",
  );
  lines.push("");
  return lines;
}

/** docs/errors.md: Where `check` differs from the public compiler on purpose. */
function differencesSection(): string[] {
  const lines: string[] = [];
  lines.push("## Where `check` differs from the public compiler on purpose");
  lines.push("");
  lines.push(
    "`packages/core/test/check/conformance.test.ts` checks every case of `../shared/kumiki/conformance` (mutated",
  );
  lines.push(
    "example programs with the codes kumikijs/Kumiki@69e43e9's `kumiki check` reports) and requires the same",
  );
  lines.push("error codes on every case but these:");
  lines.push("");
  lines.push(
    ...table(
      ["Code", "Cases", "Why"],
      COMPILER_DIFFERENCES.map((d) => [
        `\`${d.code}\``,
        d.mutation !== undefined
          ? `every \`${d.mutation}\` case`
          : d.cases!.map((c) => `\`${c}\``).join(", "),
        cell(d.why),
      ]),
    ),
  );
  lines.push("");
  return lines;
}

/** docs/errors.md: The auto-patch strategy of each code that has one. */
function strategiesSection(): string[] {
  const lines: string[] = [];
  lines.push("## Auto-patch strategies");
  lines.push("");
  lines.push(
    ...table(
      ["Code", "Strategy"],
      CODES.filter((c) => c.autoPatch && c.strategy !== undefined).map((c) => [
        `\`${c.code}\``,
        cell(c.strategy!),
      ]),
    ),
  );
  lines.push("");
  return lines;
}

/**
 * docs/errors.md, generated from {@link CODES}: the bands, every code with its kinds, severity,
 * opt-in, auto-patch coverage and whether this checker reports it. A test asserts the committed
 * file equals this output, so the document cannot drift from the registry.
 */
export function renderErrorsDoc(): string {
  const lines: string[] = [];
  lines.push("# Diagnostic codes");
  lines.push("");
  lines.push(
    "Generated from `packages/core/src/check/codes.ts` by `renderErrorsDoc()`; do not edit by hand (a test",
  );
  lines.push(
    "compares this file with the registry). The normative descriptions are `../shared/kumiki/spec/errors.md`;",
  );
  lines.push("this page lists what `@kumiki-graph/core` registers and reports.");
  lines.push("");
  for (const section of [
    bandsSection,
    positionsSection,
    unresolvedSection,
    codesSection,
    differencesSection,
    strategiesSection,
  ])
    lines.push(...section());
  return lines.join("\n");
}
