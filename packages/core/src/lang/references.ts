/**
 * `referenceSites`: every reference a definition makes, with its candidate layers in preference
 * order, its role and the span of the name.
 */
import type { Definition, Expr, RecordLit, RouteEntry, TestBody } from "./ast.js";
import type { Layer } from "./layers.js";
import { HTTP_REDUCER_FIELDS } from "./parser/builtins.js";
import {
  EFFECT,
  EMPTY,
  ExpressionWalker,
  MOCK_HEADS,
  REDUCER,
  type Scope,
  SLOT,
  THEME,
  TILE,
  withNames,
} from "./reference-walker.js";
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

/** The walk of one definition: each kind's own positions (the app's routes, a test's records), over {@link ExpressionWalker}. */
class Walker extends ExpressionWalker {
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

  // ───────────── app ─────────────

  protected routes(routes: readonly RouteEntry[]): void {
    for (const r of routes) if (r.kind === "Route") this.add(r.target, TILE, "route");
  }

  protected app(def: Extract<Definition, { kind: "AppDef" }>): void {
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

  protected test(t: TestBody): void {
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
  protected testRecord(e: Expr, scope: Scope, section?: "mocks"): void {
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

  protected testEvent(rec: RecordLit, scope: Scope): void {
    for (const f of rec.fields) {
      const v = f.value;
      if (v === undefined) continue;
      if (f.key.name === "target" && v.kind === "Ident") this.add(v, TILE, "selector");
      else if (f.key.name === "type") continue;
      else this.expr(v, scope);
    }
  }

  protected mocks(rec: RecordLit, scope: Scope): void {
    for (const f of rec.fields) {
      this.add(f.key, EFFECT, "test-mock");
      if (f.value !== undefined) this.mockOutcome(f.value, scope);
    }
  }

  /** `ok(v)`, `err(e)`, `delay(ms, ok(v))`, `from-log`, `ignore`: only the payloads are values. */
  protected mockOutcome(e: Expr, scope: Scope): void {
    if (e.kind === "Call" && e.callee.kind === "Ident" && MOCK_HEADS.has(e.callee.name)) {
      for (const a of e.args) this.mockOutcome(a, scope);
      return;
    }
    this.expr(e, scope);
  }
}
