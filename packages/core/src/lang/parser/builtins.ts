/**
 * Fixed vocabularies of the language that parsing and reference extraction depend on: built-in
 * tiles, handler argument names, refinement predicates, event names, and the names that belong to
 * the standard library rather than to a program (stdlib.md, style.md, the reference compiler's
 * builtin tables).
 */

/** Every built-in tile (stdlib.md §2.3). */
export const BUILTIN_TILES: ReadonlySet<string> = new Set([
  "page",
  "region",
  "row",
  "column",
  "stack",
  "overlay",
  "grid",
  "box",
  "card",
  "panel",
  "divider",
  "scroll",
  "text",
  "heading",
  "link",
  "code",
  "markdown",
  "image",
  "icon",
  "video",
  "button",
  "input",
  "textarea",
  "check",
  "radio",
  "select",
  "slider",
  "switch",
  "editable",
  "form",
  "label",
  "fieldset",
  "error",
  "list",
  "list-item",
  "table",
  "table-head",
  "table-body",
  "table-row",
  "table-cell",
  "modal",
  "drawer",
  "tooltip",
  "popover",
  "toast",
  "details",
  "spinner",
  "progress",
  "skeleton",
  "route-outlet",
]);

/** Built-in tiles whose positional arguments are values (`text("Hi")`), not child tiles. */
export const VALUE_ARG_TILES: ReadonlySet<string> = new Set([
  "text",
  "heading",
  "markdown",
  "label",
  "link",
  "image",
  "icon",
  "code",
  "editable",
]);

/** Whether a positional argument of tile `name` is a child tile: a built-in that takes tiles. */
export function positionalIsTile(name: string): boolean {
  return BUILTIN_TILES.has(name) && !VALUE_ARG_TILES.has(name);
}

/** Argument / prop names whose value is a reducer name (`onClick=toggle`, `{onClick: remove}`). */
export const HANDLER_NAMES: ReadonlySet<string> = new Set([
  "onClick",
  "onSubmit",
  "onChange",
  "onInput",
  "onKeyDown",
  "onMouseEnter",
  "onFocus",
  "onBlur",
  "onClose",
]);

/** Registered refinement predicates (language.md §1.3.3). */
export const REFINEMENT_PREDICATES: ReadonlySet<string> = new Set([
  "nonempty",
  "len-eq",
  "len-lt",
  "len-gt",
  "between",
  "positive",
  "negative",
  "email",
  "url",
  "uuid",
  "regex",
  "one-of",
]);

export const UI_EVENTS: ReadonlySet<string> = new Set([
  "click",
  "submit",
  "change",
  "input",
  "focus",
  "blur",
  "key",
  "hover",
]);

export const APP_EVENTS: ReadonlySet<string> = new Set([
  "start",
  "stop",
  "error",
  "visible",
  "hidden",
  "online",
  "offline",
  "http-401",
  "http-403",
  "http-5xx",
]);

/** The primitives (stdlib.md §2.1.1, plus `File` of §2.1.3, which the runtime treats as a value). */
export const PRIMITIVE_TYPES: ReadonlySet<string> = new Set([
  "Text",
  "Int",
  "Float",
  "Bool",
  "Unit",
  "Bytes",
  "Time",
  "EffectId",
  "File",
]);

/** The generic constructors and how many arguments each takes (`Tuple`: one or more). */
export const GENERIC_TYPES: ReadonlyMap<string, number | "variadic"> = new Map<string, number | "variadic">([
  ["Map", 2],
  ["Set", 1],
  ["List", 1],
  ["Option", 1],
  ["Result", 2],
  ["Tuple", "variadic"],
]);

/**
 * Type names a program cannot define: the primitives and the built-in generics. A type name in
 * this set is never a reference. (The standard library's domain types — `HttpError`, `Url`, … — are
 * reported, so that a program may define its own.)
 */
export const BUILTIN_TYPES: ReadonlySet<string> = new Set([...PRIMITIVE_TYPES, ...GENERIC_TYPES.keys()]);

/** Qualifiers of built-in calls and members (`Decoder.Json(T)`, `Duration.h(1)`, `EffectId.none`). */
export const BUILTIN_QUALIFIERS: ReadonlySet<string> = new Set([
  "Decoder",
  "EffectId",
  "Duration",
  "Bytes",
  ...BUILTIN_TYPES,
]);

/** The variants of the built-in `Option` and `Result`. */
export const BUILTIN_VARIANTS: ReadonlySet<string> = new Set(["None", "Some", "Ok", "Err"]);

/**
 * Lower-case names the runtime provides in every expression: the `route` slot, the `math`
 * namespace, and the `ui` event namespace (`{type: ui.click}` in tests).
 */
export const BUILTIN_VALUES: ReadonlySet<string> = new Set(["route", "math", "ui"]);

/** Effect names whose record argument names reducers (`emit confirm({onYes: a, onNo: b})`). */
export const REDUCER_FIELD_EFFECTS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["confirm", new Set(["onYes", "onNo"])],
]);

/** The built-in call whose argument is a reducer name (`run-reducer(inc)`, testing.md §8.3). */
export const RUN_REDUCER = "run-reducer";

/** `app.http` fields whose value is a reducer name. */
export const HTTP_REDUCER_FIELDS: ReadonlySet<string> = new Set(["on-401", "on-403", "on-5xx"]);

/** The definition keywords that start a top-level definition. */
export const DEFINITION_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "slot",
  "effect",
  "reducer",
  "tile",
  "fn",
  "app",
  "test",
]);
