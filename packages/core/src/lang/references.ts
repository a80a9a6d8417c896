/**
 * `referenceSites`: every reference a definition makes, with its candidate layers in preference
 * order, its role and the span of the name.
 */
import type {
  Definition,
  Expr,
  Field,
  Ident,
  Pattern,
  RecordLit,
  RouteEntry,
  Statement,
  StringLit,
  TestBody,
  TypeExpr,
} from "./ast.js";
import type { Layer } from "./layers.js";
import {
  BUILTIN_QUALIFIERS,
  BUILTIN_TILES,
  BUILTIN_TYPES,
  BUILTIN_VALUES,
  BUILTIN_VARIANTS,
  HANDLER_NAMES,
  HTTP_REDUCER_FIELDS,
  positionalIsTile,
  REDUCER_FIELD_EFFECTS,
  RUN_REDUCER,
} from "./parser/builtins.js";
import type { Span } from "./span.js";

/**
 * Why a name at a site refers to another definition (the syntactic position it stands in):
 *
 * - `expr`: a bare lower-case name in a value (`todos`, `items.map(double)`) → slot, else fn.
 * - `shorthand`: the key of a shorthand record field `{todos}`, which is also its value → slot, else
 *   fn. Renaming its target must write `{todos: newName}`, not `{newName}`.
 * - `variant`: a capitalized name in a value (`All`, `Loaded(x)`, `Box.show`): a union variant,
 *   unless a definition of that name exists (`Box` → slot, else fn; `Loaded(…)` → fn). Sites that
 *   resolve to nothing are variants, by the language's own rule. `None`/`Some`/`Ok`/`Err` are never
 *   reported.
 * - `call`: the head of a call `f(x)` → fn.
 * - `assign`: the root of an assignment target `todos[id].done := …` → slot.
 * - `bind`: the root of a two-way binding `input(bind=draft)` → slot.
 * - `emit`: `emit saveTodos(…)`, an `init = [load()]` entry, an `expect.effects` entry → effect.
 * - `effect-event`: `on=loadTodos.ok($m, _)` → effect.
 * - `selector`: `ui.click(TodoRow)`, `ui.submit(NewForm#new)`, `tile.mount(Panel)`, a test
 *   event's `target: IncBtn` → tile.
 * - `handler`: `onClick=toggle`, `{onClick: remove}`, `{prefetch: load}`, `confirm({onYes: r})`,
 *   `app.http` `on-401`, `run-reducer(inc)` → reducer.
 * - `route`: `"/" -> App` in `routes` / `sub-routes` → tile.
 * - `type`: a type name (`Map(TodoId, Todo)` reports TodoId and Todo), a qualifier
 *   (`TodoId.fresh()`), a `Decoder.Json(…)` payload → type. Primitives and built-in generics are
 *   not reported.
 * - `tile`: a tile call in a tile position (`TodoRow(id)`, `FilterBar`), an `error-boundary` →
 *   tile; a bare lower-case name where a built-in takes children (`panel(settingsForm)`) → tile,
 *   else slot, else fn.
 * - `theme`: `theme = DefaultTheme` in an app → theme, else slot (a slot holding a theme name).
 * - `motion`: `{motion: "Spin"}` → motion (the span is the string's contents, without quotes).
 * - `test-target`: `reducer-test inc` → reducer; `tile-test App` → tile.
 * - `test-slot`: a key of a test's `slots: {…}`, and `<slots.NAME>` → slot.
 * - `test-mock`: a key of a test's `mocks: {…}` → effect.
 *
 * Not references: record field names, prop and argument names, member and method names, strings
 * (other than motion names and string prefetch targets), `let` / `for` / match-pattern / fn-parameter
 * / `for-all` names inside their scope, `$…` bindings, built-in tiles, built-in qualifiers
 * (`Decoder`, `Duration`, `EffectId`, `Bytes`, primitive types), `route` / `math` / `ui`, capability
 * names, policies, event names, timer names, `#id` element ids, theme token names (`{color:
 * "muted"}`, `@colors.surface`: keys inside the app's theme, not definitions).
 */
export type ReferenceRole = (typeof REFERENCE_ROLES)[number];

/** Every {@link ReferenceRole}. */
export const REFERENCE_ROLES = [
  "expr",
  "shorthand",
  "variant",
  "call",
  "assign",
  "bind",
  "emit",
  "effect-event",
  "selector",
  "handler",
  "route",
  "type",
  "tile",
  "theme",
  "motion",
  "test-target",
  "test-slot",
  "test-mock",
] as const;

/** One place where a definition names another definition. */
export interface ReferenceSite {
  /** The name as written. */
  readonly name: string;
  /** The layers the name may denote, in preference order: it resolves to the first that defines it. */
  readonly layers: readonly Layer[];
  readonly role: ReferenceRole;
  /** The identifier's span, or for a name held in a string, the string's contents. */
  readonly span: Span;
}

const VALUE: readonly Layer[] = ["slot", "fn"];
const FN: readonly Layer[] = ["fn"];
const SLOT: readonly Layer[] = ["slot"];
const EFFECT: readonly Layer[] = ["effect"];
const TILE: readonly Layer[] = ["tile"];
const REDUCER: readonly Layer[] = ["reducer"];
const TYPE: readonly Layer[] = ["type"];
const CHILD: readonly Layer[] = ["tile", "slot", "fn"];
const THEME: readonly Layer[] = ["theme", "slot"];
const MOTION: readonly Layer[] = ["motion"];

/** Bare words of test bodies that are test vocabulary, not names (`mocks: {x: from-log}`). */
const TEST_WORDS: ReadonlySet<string> = new Set(["from-log", "ignore"]);
/** Mock outcome heads (`ok(v)`, `err(e)`, `delay(ms, ok(v))`). */
const MOCK_HEADS: ReadonlySet<string> = new Set(["ok", "err", "delay"]);

type Scope = ReadonlySet<string>;
const EMPTY: Scope = new Set();

function isCapitalized(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 65 && c <= 90;
}

function withNames(scope: Scope, names: readonly string[]): Scope {
  if (names.length === 0) return scope;
  const s = new Set(scope);
  for (const n of names) s.add(n);
  return s;
}

function patternNames(p: Pattern, out: string[] = []): string[] {
  switch (p.kind) {
    case "BindPattern":
      out.push(p.name.name);
      break;
    case "VariantPattern":
      for (const a of p.args ?? []) patternNames(a, out);
      break;
    case "TuplePattern":
      for (const i of p.items) patternNames(i, out);
      break;
    default:
      break;
  }
  return out;
}

/** The contents of a string literal, without its quotes. */
function innerSpan(s: StringLit): Span {
  const end = Math.max(s.span.end - 1, s.span.offset + 1);
  return { offset: s.span.offset + 1, end, line: s.span.line, column: s.span.column + 1 };
}

/**
 * Every reference `def` makes to other definitions (and to itself), in source order, with the
 * layers each name may denote. Whether a name is in fact defined is the caller's question: a site
 * whose name no candidate layer defines is unresolved (or, for role `variant`, a union variant).
 */
export function referenceSites(def: Definition): ReferenceSite[] {
  const w = new Walker();
  w.definition(def);
  return w.sites.sort((a, b) => a.span.offset - b.span.offset);
}

class Walker {
  readonly sites: ReferenceSite[] = [];
  /** Inside a test body, where `from-log` / `ignore` are vocabulary. */
  private inTest = false;

  private add(id: Ident, layers: readonly Layer[], role: ReferenceRole): void {
    if (id.name === "") return;
    this.sites.push({ name: id.name, layers, role, span: id.span });
  }

  definition(def: Definition): void {
    switch (def.kind) {
      case "TypeDef":
        this.type(def.body, new Set(def.params.map((p) => p.name)));
        return;
      case "SlotDef":
        this.type(def.type);
        if (def.init !== undefined) this.expr(def.init, EMPTY);
        return;
      case "EffectDef":
        this.type(def.in);
        this.type(def.out);
        if (def.policy?.key !== undefined) this.expr(def.policy.key, EMPTY);
        if (def.mapRequest !== undefined) this.expr(def.mapRequest, EMPTY);
        return;
      case "ReducerDef": {
        const on = def.on;
        if (on.kind === "UiEvent" && on.selector.kind === "Selector")
          this.add(on.selector.tile, TILE, "selector");
        else if (on.kind === "EffectEvent") this.add(on.effect, EFFECT, "effect-event");
        else if (on.kind === "TileEvent") this.add(on.tile, TILE, "selector");
        this.statements(def.body, EMPTY);
        return;
      }
      case "TileDef":
        if (def.in !== undefined) this.type(def.in);
        if (def.subRoutes !== undefined) this.routes(def.subRoutes);
        if (def.errorBoundary !== undefined) this.add(def.errorBoundary, TILE, "tile");
        this.expr(def.body, EMPTY);
        return;
      case "FnDef": {
        for (const p of def.params) this.type(p.type);
        if (def.returnType !== undefined) this.type(def.returnType);
        this.expr(def.body, new Set(def.params.map((p) => p.name.name)));
        return;
      }
      case "AppDef":
        this.app(def);
        return;
      case "TestDef":
        this.inTest = true;
        this.test(def.body);
        this.inTest = false;
        return;
      case "ThemeDef":
      case "MotionDef":
        // Literal records: nothing in them names a definition.
        return;
    }
  }

  // ───────────── types ─────────────

  private type(t: TypeExpr, params: Scope = EMPTY): void {
    switch (t.kind) {
      case "TypeRef":
        if (!BUILTIN_TYPES.has(t.name.name) && !params.has(t.name.name)) this.add(t.name, TYPE, "type");
        for (const a of t.args ?? []) this.type(a, params);
        return;
      case "RecordType":
        for (const f of t.fields) if (f.value !== undefined) this.type(f.value, params);
        return;
      case "UnionType":
        for (const v of t.variants) for (const p of v.payload ?? []) this.type(p, params);
        return;
      case "NominalType":
        this.type(t.inner, params);
        return;
      case "RefinedType":
        this.type(t.base, params);
        return;
    }
  }

  /** A type written in value syntax: the payload of `Decoder.Json(Map(TodoId, Todo))`. */
  private typeLike(e: Expr, scope: Scope): void {
    switch (e.kind) {
      case "Ident":
        if (!BUILTIN_TYPES.has(e.name) && !scope.has(e.name)) this.add(e, TYPE, "type");
        return;
      case "Call":
        if (e.callee.kind === "Ident") {
          if (!BUILTIN_TYPES.has(e.callee.name)) this.add(e.callee, TYPE, "type");
          for (const a of e.args) this.typeLike(a, scope);
          return;
        }
        this.expr(e, scope);
        return;
      case "Record":
        for (const f of e.fields) if (f.value !== undefined) this.typeLike(f.value, scope);
        return;
      default:
        this.expr(e, scope);
    }
  }

  // ───────────── expressions ─────────────

  private name(id: Ident, scope: Scope, role: "expr" | "shorthand"): void {
    const n = id.name;
    if (scope.has(n) || BUILTIN_VALUES.has(n) || (this.inTest && TEST_WORDS.has(n))) return;
    if (isCapitalized(n)) {
      if (!BUILTIN_VARIANTS.has(n)) this.add(id, VALUE, "variant");
      return;
    }
    this.add(id, VALUE, role);
  }

  private expr(e: Expr, scope: Scope): void {
    switch (e.kind) {
      case "Ident":
        this.name(e, scope, "expr");
        return;
      case "SlotWildcard":
        this.add(e.slot, SLOT, "test-slot");
        return;
      case "Member":
        if (
          e.object.kind === "Ident" &&
          isCapitalized(e.object.name) &&
          BUILTIN_QUALIFIERS.has(e.object.name) &&
          !scope.has(e.object.name)
        ) {
          return;
        }
        this.expr(e.object, scope);
        return;
      case "Index":
        this.expr(e.object, scope);
        this.expr(e.index, scope);
        return;
      case "Call":
        this.call(e, scope);
        return;
      case "Unary":
        this.expr(e.operand, scope);
        return;
      case "Binary":
        this.expr(e.left, scope);
        this.expr(e.right, scope);
        return;
      case "If":
        this.expr(e.cond, scope);
        this.expr(e.then, scope);
        this.expr(e.else, scope);
        return;
      case "Match":
        this.expr(e.subject, scope);
        for (const arm of e.arms) this.expr(arm.body, withNames(scope, patternNames(arm.pattern)));
        return;
      case "Let":
        this.expr(e.value, scope);
        this.expr(e.body, withNames(scope, [e.name.name]));
        return;
      case "Emit":
        this.emit(e.effect, e.args, scope);
        return;
      case "Record":
        this.fields(e.fields, scope);
        return;
      case "Map":
        for (const entry of e.entries) {
          this.expr(entry.key, scope);
          this.expr(entry.value, scope);
        }
        return;
      case "List":
      case "Tuple":
        for (const i of e.items) this.expr(i, scope);
        return;
      case "TileCall":
        this.tileCall(e, scope);
        return;
      case "For":
        this.expr(e.iterable, scope);
        this.expr(e.body, withNames(scope, [e.binder.name]));
        return;
      case "When":
        this.expr(e.cond, scope);
        this.expr(e.body, scope);
        return;
      default:
        // Literals, `$…`, `now`, `self`, durations, `@tokens`, `<any-id>`.
        return;
    }
  }

  private fields(fields: readonly Field[], scope: Scope): void {
    for (const f of fields) {
      if (f.value === undefined) this.name(f.key, scope, "shorthand");
      else this.expr(f.value, scope);
    }
  }

  private call(e: Extract<Expr, { kind: "Call" }>, scope: Scope): void {
    const callee = e.callee;
    // `run-reducer(inc)` and the chained `….run-reducer(dec)` take a reducer name.
    const runReducer =
      (callee.kind === "Ident" && callee.name === RUN_REDUCER && !scope.has(callee.name)) ||
      (callee.kind === "Member" && callee.property.name === RUN_REDUCER);
    if (runReducer) {
      if (callee.kind === "Member") this.expr(callee.object, scope);
      const [target, ...rest] = e.args;
      if (target?.kind === "Ident") {
        if (!scope.has(target.name)) this.add(target, REDUCER, "handler");
      } else if (target !== undefined) {
        this.expr(target, scope);
      }
      for (const a of rest) this.expr(a, scope);
      this.fieldValues(e.fields, scope);
      return;
    }
    if (callee.kind === "Ident" && !scope.has(callee.name)) {
      if (isCapitalized(callee.name)) {
        if (!BUILTIN_VARIANTS.has(callee.name)) this.add(callee, FN, "variant");
      } else {
        this.add(callee, FN, "call");
      }
    } else if (
      callee.kind === "Member" &&
      callee.object.kind === "Ident" &&
      isCapitalized(callee.object.name)
    ) {
      const q = callee.object;
      if (!BUILTIN_QUALIFIERS.has(q.name) && !scope.has(q.name)) this.add(q, TYPE, "type");
      if (q.name === "Decoder" && callee.property.name === "Json") {
        for (const a of e.args) this.typeLike(a, scope);
        this.fieldValues(e.fields, scope);
        return;
      }
    } else if (callee.kind !== "Ident") {
      this.expr(callee, scope);
    }
    for (const a of e.args) this.expr(a, scope);
    this.fieldValues(e.fields, scope);
  }

  private fieldValues(fields: readonly Field[] | undefined, scope: Scope): void {
    for (const f of fields ?? []) if (f.value !== undefined) this.expr(f.value, scope);
  }

  private emit(effect: Ident, args: readonly Expr[], scope: Scope): void {
    this.add(effect, EFFECT, "emit");
    const reducerFields = REDUCER_FIELD_EFFECTS.get(effect.name);
    for (const a of args) {
      if (reducerFields !== undefined && a.kind === "Record") {
        for (const f of a.fields) {
          if (reducerFields.has(f.key.name) && f.value?.kind === "Ident" && !scope.has(f.value.name)) {
            this.add(f.value, REDUCER, "handler");
          } else if (f.value === undefined) {
            this.name(f.key, scope, "shorthand");
          } else {
            this.expr(f.value, scope);
          }
        }
        continue;
      }
      this.expr(a, scope);
    }
  }

  private tileCall(e: Extract<Expr, { kind: "TileCall" }>, scope: Scope): void {
    const callee = e.callee.name;
    const builtin = BUILTIN_TILES.has(callee);
    if (!builtin && !scope.has(callee)) this.add(e.callee, TILE, "tile");
    const childIsTile = positionalIsTile(callee);
    for (const a of e.args ?? []) {
      if (childIsTile && a.kind === "Ident" && !isCapitalized(a.name)) {
        if (!scope.has(a.name) && !BUILTIN_VALUES.has(a.name)) this.add(a, CHILD, "tile");
      } else {
        this.expr(a, scope);
      }
    }
    for (const f of e.fields ?? []) this.keyed(f, scope, builtin, true);
    for (const f of e.props?.fields ?? []) this.keyed(f, scope, builtin, false);
  }

  /** A named argument (`onClick=toggle`, `bind=draft`) or a prop (`{onClick: remove}`). */
  private keyed(f: Field, scope: Scope, builtin: boolean, isArgument: boolean): void {
    const v = f.value;
    if (v === undefined) return;
    const key = f.key.name;
    if ((HANDLER_NAMES.has(key) || key === "prefetch") && v.kind === "Ident") {
      if (!scope.has(v.name)) this.add(v, REDUCER, "handler");
    } else if (key === "prefetch" && v.kind === "String") {
      this.stringRef(v, REDUCER, "handler");
    } else if (key === "motion" && v.kind === "String") {
      this.stringRef(v, MOTION, "motion");
    } else if (key === "bind" && builtin && isArgument) {
      this.bindTarget(v, scope);
    } else {
      this.expr(v, scope);
    }
  }

  private stringRef(s: StringLit, layers: readonly Layer[], role: ReferenceRole): void {
    if (s.value === "") return;
    this.sites.push({ name: s.value, layers, role, span: innerSpan(s) });
  }

  /** `bind=draft` / `bind=draft.title` / `bind=form[k]`: the root names a slot. */
  private bindTarget(v: Expr, scope: Scope): void {
    let root = v;
    while (root.kind === "Member" || root.kind === "Index") {
      if (root.kind === "Index") this.expr(root.index, scope);
      root = root.object;
    }
    if (root.kind === "Ident") {
      if (!scope.has(root.name) && !BUILTIN_VALUES.has(root.name)) this.add(root, SLOT, "bind");
    } else {
      this.expr(root, scope);
    }
  }

  // ───────────── statements ─────────────

  private statements(list: readonly Statement[], outer: Scope): void {
    let scope = outer;
    for (const s of list) {
      switch (s.kind) {
        case "LetStmt":
          this.expr(s.value, scope);
          scope = withNames(scope, [s.name.name]);
          break;
        case "AssignStmt": {
          let root = s.target;
          const indexes: Expr[] = [];
          while (root.kind === "Member" || root.kind === "Index") {
            if (root.kind === "Index") indexes.push(root.index);
            root = root.object;
          }
          if (root.kind === "Ident" && !scope.has(root.name)) this.add(root, SLOT, "assign");
          for (let k = indexes.length - 1; k >= 0; k--) this.expr(indexes[k]!, scope);
          this.expr(s.value, scope);
          break;
        }
        case "EmitStmt":
          this.emit(s.effect, s.args, scope);
          break;
        case "IfStmt":
          this.expr(s.cond, scope);
          this.statements(s.then, scope);
          if (s.else !== undefined) this.statements(s.else, scope);
          break;
        case "MatchStmt":
          this.expr(s.subject, scope);
          for (const arm of s.arms) this.statements(arm.body, withNames(scope, patternNames(arm.pattern)));
          break;
        case "ForStmt":
          this.expr(s.iterable, scope);
          this.statements(s.body, withNames(scope, [s.binder.name]));
          break;
        case "BlockStmt":
          this.statements(s.body, scope);
          break;
        case "PanicStmt":
          this.expr(s.message, scope);
          break;
        default:
          break;
      }
    }
  }

  // ───────────── app ─────────────

  private routes(routes: readonly RouteEntry[]): void {
    for (const r of routes) if (r.kind === "Route") this.add(r.target, TILE, "route");
  }

  private app(def: Extract<Definition, { kind: "AppDef" }>): void {
    if (def.routes !== undefined) this.routes(def.routes);
    for (const e of def.init ?? []) {
      if (e.kind === "Call" && e.callee.kind === "Ident") {
        this.add(e.callee, EFFECT, "emit");
        for (const a of e.args) this.expr(a, EMPTY);
        this.fieldValues(e.fields, EMPTY);
      } else {
        this.expr(e, EMPTY);
      }
    }
    if (def.theme !== undefined) this.add(def.theme, THEME, "theme");
    if (def.http !== undefined) {
      for (const f of def.http.fields) {
        if (f.value === undefined) continue;
        if (HTTP_REDUCER_FIELDS.has(f.key.name) && f.value.kind === "Ident")
          this.add(f.value, REDUCER, "handler");
        else this.expr(f.value, EMPTY);
      }
    }
    for (const rec of [def.meta, def.indexedDb, def.analytics]) {
      if (rec !== undefined) this.fieldValues(rec.fields, EMPTY);
    }
  }

  // ───────────── tests ─────────────

  private test(t: TestBody): void {
    switch (t.kind) {
      case "ReducerTest":
        this.add(t.target, REDUCER, "test-target");
        this.testRecord(t.given, EMPTY);
        this.testRecord(t.expect, EMPTY);
        return;
      case "TileTest":
        this.add(t.target, TILE, "test-target");
        this.testRecord(t.given, EMPTY);
        this.expr(t.expect, EMPTY);
        return;
      case "PropertyTest": {
        const generated: string[] = [];
        for (const f of t.forAll.fields) {
          generated.push(f.key.name);
          if (f.value !== undefined) this.type(f.value);
        }
        const scope = withNames(EMPTY, generated);
        this.testRecord(t.given, scope);
        this.expr(t.invariant, scope);
        return;
      }
      case "EpisodeTest":
        if (t.mocks !== undefined) this.testRecord(t.mocks, EMPTY, "mocks");
        this.testRecord(t.expect, EMPTY);
        return;
    }
  }

  /**
   * A test's `given` / `expect` (or an episode's `mocks`): sections are read by name — `slots`
   * keys name slots, `mocks` keys name effects, `event.target` names a tile, `effects` lists
   * expected emits; everything else is a value.
   */
  private testRecord(e: Expr, scope: Scope, section?: "mocks"): void {
    if (e.kind !== "Record") {
      if (section === "mocks") return;
      this.expr(e, scope);
      return;
    }
    if (section === "mocks") {
      this.mocks(e, scope);
      return;
    }
    for (const f of e.fields) {
      const v = f.value;
      if (v === undefined) {
        this.name(f.key, scope, "shorthand");
        continue;
      }
      switch (f.key.name) {
        case "slots":
          if (v.kind === "Record") {
            for (const s of v.fields) {
              this.add(s.key, SLOT, "test-slot");
              if (s.value !== undefined) this.expr(s.value, scope);
            }
          } else {
            this.expr(v, scope);
          }
          break;
        case "mocks":
          if (v.kind === "Record") this.mocks(v, scope);
          else this.expr(v, scope);
          break;
        case "event":
          if (v.kind === "Record") this.testEvent(v, scope);
          else this.expr(v, scope);
          break;
        case "effects":
          if (v.kind === "List") {
            for (const item of v.items) {
              if (item.kind === "Call" && item.callee.kind === "Ident") {
                this.emit(item.callee, item.args, scope);
                this.fieldValues(item.fields, scope);
              } else {
                this.expr(item, scope);
              }
            }
          } else {
            this.expr(v, scope);
          }
          break;
        default:
          this.expr(v, scope);
      }
    }
  }

  private testEvent(rec: RecordLit, scope: Scope): void {
    for (const f of rec.fields) {
      const v = f.value;
      if (v === undefined) continue;
      if (f.key.name === "target" && v.kind === "Ident") this.add(v, TILE, "selector");
      else if (f.key.name === "type") continue;
      else this.expr(v, scope);
    }
  }

  private mocks(rec: RecordLit, scope: Scope): void {
    for (const f of rec.fields) {
      this.add(f.key, EFFECT, "test-mock");
      if (f.value !== undefined) this.mockOutcome(f.value, scope);
    }
  }

  /** `ok(v)`, `err(e)`, `delay(ms, ok(v))`, `from-log`, `ignore`: only the payloads are values. */
  private mockOutcome(e: Expr, scope: Scope): void {
    if (e.kind === "Call" && e.callee.kind === "Ident" && MOCK_HEADS.has(e.callee.name)) {
      for (const a of e.args) this.mockOutcome(a, scope);
      return;
    }
    this.expr(e, scope);
  }
}
