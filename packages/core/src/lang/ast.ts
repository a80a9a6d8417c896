// AST-STABLE
/**
 * The Kumiki AST.
 *
 * Contracts every consumer may rely on (others walk this tree generically):
 * - Every node is plain JSON data `{ kind, span, … }`: no classes, no cycles, no functions, and an
 *   absent optional property is omitted (never stored as `undefined`).
 * - Every identifier occurrence is an {@link Ident} node, never a bare string, so any of them can be
 *   a reference site (see references.ts for which ones are).
 * - Every order-insensitive keyed collection is an array property named `fields` holding
 *   {@link Field} nodes; order-sensitive lists use any other property name.
 * - Redundant parentheses leave no node: `(a + b)` is the `Binary` node itself (its span excludes
 *   the parentheses; the enclosing node's span includes them).
 * - Aliases are normalized: `&` is stored as `&&`, bool-or `|` as `||`, `not` as `!`.
 * - Comments and whitespace are not in the AST.
 */
import type { Layer } from "./layers.js";
import type { Span } from "./span.js";

// ───────────────────────────── common ─────────────────────────────

/** An identifier occurrence: a name as written, with its own span. */
export interface Ident {
  readonly kind: "Ident";
  readonly name: string;
  readonly span: Span;
}

/**
 * One entry of an order-insensitive keyed collection (`{id, text=draft}`, `{gap: "sm"}`,
 * `{id: TodoId}`, named arguments `text="x"`). A shorthand field (`{id}`) has no `value`.
 */
export interface Field<V = Expr> {
  readonly kind: "Field";
  readonly key: Ident;
  readonly value?: V;
  readonly span: Span;
}

// ───────────────────────────── literals ─────────────────────────────

/**
 * A number literal. `raw` is the source text (`1.0` and `1.00` differ in `raw`, not in `value`);
 * a leading `-` is a {@link Unary} node except inside a refinement, where it is part of `raw`.
 */
export interface NumberLit {
  readonly kind: "Number";
  readonly raw: string;
  readonly value: number;
  readonly span: Span;
}

/** A string literal: `value` is decoded (escapes applied); `span` covers the quotes. */
export interface StringLit {
  readonly kind: "String";
  readonly value: string;
  readonly span: Span;
}

export interface BoolLit {
  readonly kind: "Bool";
  readonly value: boolean;
  readonly span: Span;
}

/** `()`. */
export interface UnitLit {
  readonly kind: "Unit";
  readonly span: Span;
}

/** `null`: reserved and prohibited; parsed so that a checker can report it where it is written. */
export interface NullLit {
  readonly kind: "Null";
  readonly span: Span;
}

/** `now`: the current time. */
export interface NowExpr {
  readonly kind: "Now";
  readonly span: Span;
}

/** `self` (a selector or an expression). */
export interface SelfExpr {
  readonly kind: "Self";
  readonly span: Span;
}

/** A duration: `300ms`, `1s`, `5m`. `raw` is the source text. */
export interface DurationLit {
  readonly kind: "Duration";
  readonly raw: string;
  readonly amount: number;
  readonly unit: "ms" | "s" | "m";
  readonly span: Span;
}

// ───────────────────────────── expressions ─────────────────────────────

/** A positional or runtime binding: `$1`, `$2`, `$el`, `$event`, `$route`, `$now`, `$m`. */
export interface DollarRef {
  readonly kind: "DollarRef";
  /** With the `$`: `"$1"`, `"$el"`. */
  readonly name: string;
  readonly span: Span;
}

/** A theme token reference `@colors.surface`: `path[0]` is the group. Not a definition reference. */
export interface TokenRef {
  readonly kind: "TokenRef";
  readonly path: readonly Ident[];
  readonly span: Span;
}

/** The test wildcard `<any-id>`. */
export interface AnyIdWildcard {
  readonly kind: "AnyId";
  readonly span: Span;
}

/** The test wildcard `<slots.NAME>`: the value of slot NAME after the reducer ran. */
export interface SlotWildcard {
  readonly kind: "SlotWildcard";
  readonly slot: Ident;
  readonly span: Span;
}

/** `object.property`: a field access, a stdlib member (`xs.size`), or a qualifier (`TodoId.fresh`). */
export interface Member {
  readonly kind: "Member";
  readonly object: Expr;
  readonly property: Ident;
  readonly span: Span;
}

/** `object[index]`. */
export interface Index {
  readonly kind: "Index";
  readonly object: Expr;
  readonly index: Expr;
  readonly span: Span;
}

/**
 * A call in value context: `f(x)`, `xs.filter($2.done)`, `TodoId.fresh()`, `Loaded(x)`,
 * `t.copy(done=true)`. Positional arguments are `args` (order matters); named arguments are
 * `fields` (keyed, order-insensitive), present only when at least one is written.
 */
export interface Call {
  readonly kind: "Call";
  readonly callee: Expr;
  readonly args: readonly Expr[];
  readonly fields?: readonly Field[];
  readonly span: Span;
}

export type UnaryOp = "-" | "!";

export interface Unary {
  readonly kind: "Unary";
  readonly op: UnaryOp;
  readonly operand: Expr;
  readonly span: Span;
}

export type BinaryOp = "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||";

export interface Binary {
  readonly kind: "Binary";
  readonly op: BinaryOp;
  readonly left: Expr;
  readonly right: Expr;
  readonly span: Span;
}

/** `if c then a else b` (a value, or in a tile a choice of tiles). */
export interface If {
  readonly kind: "If";
  readonly cond: Expr;
  readonly then: Expr;
  readonly else: Expr;
  readonly span: Span;
}

/** `match subject with | p -> e …` (a value, or in a tile a choice of tiles). */
export interface Match {
  readonly kind: "Match";
  readonly subject: Expr;
  readonly arms: readonly MatchArm[];
  readonly span: Span;
}

export interface MatchArm {
  readonly kind: "MatchArm";
  readonly pattern: Pattern;
  readonly body: Expr;
  readonly span: Span;
}

/** `let name = value in body`. */
export interface Let {
  readonly kind: "Let";
  readonly name: Ident;
  readonly value: Expr;
  readonly body: Expr;
  readonly span: Span;
}

/** `emit effect(args)` used as an expression (its value is the dispatched effect's EffectId). */
export interface Emit {
  readonly kind: "Emit";
  readonly effect: Ident;
  readonly args: readonly Expr[];
  readonly span: Span;
}

/** A record literal `{id, text=draft}` / `{key: "todos"}`. */
export interface RecordLit {
  readonly kind: "Record";
  readonly fields: readonly Field[];
  readonly span: Span;
}

/** A map literal `{"u1": x}` / `{<any-id>: x}`; `{}` is an empty map. */
export interface MapLit {
  readonly kind: "Map";
  readonly entries: readonly MapEntry[];
  readonly span: Span;
}

export interface MapEntry {
  readonly kind: "MapEntry";
  readonly key: Expr;
  readonly value: Expr;
  readonly span: Span;
}

export interface ListLit {
  readonly kind: "List";
  readonly items: readonly Expr[];
  readonly span: Span;
}

/** `(a, b)`: two or more items. */
export interface TupleLit {
  readonly kind: "Tuple";
  readonly items: readonly Expr[];
  readonly span: Span;
}

// ── tile expressions (they are expressions too: a tile body is an Expr) ──

/**
 * A tile in a tile position: `row(A, B) {gap: "sm"}`, `TodoRow(id) {key: id.show}`, `FilterBar`.
 * `args` (positional, ordered) is present when parentheses are written, `fields` (named arguments,
 * keyed) when at least one named argument is written, `props` when a `{…}` block is written.
 */
export interface TileCall {
  readonly kind: "TileCall";
  readonly callee: Ident;
  readonly args?: readonly Expr[];
  readonly fields?: readonly Field[];
  readonly props?: Props;
  readonly span: Span;
}

/** A tile's props block `{gap: "sm", onClick: remove}`. */
export interface Props {
  readonly kind: "Props";
  readonly fields: readonly Field[];
  readonly span: Span;
}

/** `for x in xs body` in a tile. */
export interface For {
  readonly kind: "For";
  readonly binder: Ident;
  readonly iterable: Expr;
  readonly body: Expr;
  readonly span: Span;
}

/** `when(cond, tile)`. */
export interface When {
  readonly kind: "When";
  readonly cond: Expr;
  readonly body: Expr;
  readonly span: Span;
}

export type Expr =
  | Ident
  | DollarRef
  | NumberLit
  | StringLit
  | BoolLit
  | UnitLit
  | NullLit
  | NowExpr
  | SelfExpr
  | DurationLit
  | TokenRef
  | AnyIdWildcard
  | SlotWildcard
  | Member
  | Index
  | Call
  | Unary
  | Binary
  | If
  | Match
  | Let
  | Emit
  | RecordLit
  | MapLit
  | ListLit
  | TupleLit
  | TileCall
  | For
  | When;

// ───────────────────────────── patterns ─────────────────────────────

/** `_`. */
export interface WildcardPattern {
  readonly kind: "WildcardPattern";
  readonly span: Span;
}

/** A lower-case name in a pattern: binds the matched value. */
export interface BindPattern {
  readonly kind: "BindPattern";
  readonly name: Ident;
  readonly span: Span;
}

/** `All`, `Loaded(p)`, `Some(_)`: a union variant, with payload patterns when parenthesized. */
export interface VariantPattern {
  readonly kind: "VariantPattern";
  readonly variant: Ident;
  readonly args?: readonly Pattern[];
  readonly span: Span;
}

/** `(p, q)`. */
export interface TuplePattern {
  readonly kind: "TuplePattern";
  readonly items: readonly Pattern[];
  readonly span: Span;
}

export type Pattern = WildcardPattern | BindPattern | VariantPattern | TuplePattern;

// ───────────────────────────── types ─────────────────────────────

/** A named type, applied when parenthesized: `Todo`, `Int`, `Map(TodoId, Todo)`, `T`. */
export interface TypeRef {
  readonly kind: "TypeRef";
  readonly name: Ident;
  readonly args?: readonly TypeExpr[];
  readonly span: Span;
}

/** `{id: TodoId, text: Text}`: every field has a value. */
export interface RecordType {
  readonly kind: "RecordType";
  readonly fields: readonly Field<TypeExpr>[];
  readonly span: Span;
}

/** `All | Active | Loaded(T)`. Variant order is kept as written. */
export interface UnionType {
  readonly kind: "UnionType";
  readonly variants: readonly VariantDecl[];
  readonly span: Span;
}

export interface VariantDecl {
  readonly kind: "VariantDecl";
  readonly name: Ident;
  readonly payload?: readonly TypeExpr[];
  readonly span: Span;
}

/** `nominal T`: a new type, never structurally equal to another. */
export interface NominalType {
  readonly kind: "NominalType";
  readonly inner: TypeExpr;
  readonly span: Span;
}

/** `T where pred(args)`. */
export interface RefinedType {
  readonly kind: "RefinedType";
  readonly base: TypeExpr;
  readonly refinement: Refinement;
  readonly span: Span;
}

/** `nonempty`, `len-lt(280)`, `between(0.0, 100.0)`, `regex("…")`. Args are literals. */
export interface Refinement {
  readonly kind: "Refinement";
  readonly predicate: Ident;
  readonly args?: readonly (NumberLit | StringLit | BoolLit)[];
  readonly span: Span;
}

export type TypeExpr = TypeRef | RecordType | UnionType | NominalType | RefinedType;

// ───────────────────────────── statements ─────────────────────────────

/** `target := value`; `target` is an Ident, Member or Index chain rooted at an Ident. */
export interface AssignStmt {
  readonly kind: "AssignStmt";
  readonly target: Expr;
  readonly value: Expr;
  readonly span: Span;
}

export interface EmitStmt {
  readonly kind: "EmitStmt";
  readonly effect: Ident;
  readonly args: readonly Expr[];
  readonly span: Span;
}

/** `let name = value`: in scope for the statements after it in the same list. */
export interface LetStmt {
  readonly kind: "LetStmt";
  readonly name: Ident;
  readonly value: Expr;
  readonly span: Span;
}

export interface IfStmt {
  readonly kind: "IfStmt";
  readonly cond: Expr;
  readonly then: readonly Statement[];
  readonly else?: readonly Statement[];
  readonly span: Span;
}

export interface MatchStmt {
  readonly kind: "MatchStmt";
  readonly subject: Expr;
  readonly arms: readonly MatchStmtArm[];
  readonly span: Span;
}

export interface MatchStmtArm {
  readonly kind: "MatchStmtArm";
  readonly pattern: Pattern;
  readonly body: readonly Statement[];
  readonly span: Span;
}

export interface ForStmt {
  readonly kind: "ForStmt";
  readonly binder: Ident;
  readonly iterable: Expr;
  readonly body: readonly Statement[];
  readonly span: Span;
}

/** `{ s1; s2 }` written as a statement of its own. */
export interface BlockStmt {
  readonly kind: "BlockStmt";
  readonly body: readonly Statement[];
  readonly span: Span;
}

/** `()`: does nothing. */
export interface NoopStmt {
  readonly kind: "NoopStmt";
  readonly span: Span;
}

/** `stop-timer(name)`: `timer` names a `timer(…, name=…)` event, not a definition. */
export interface StopTimerStmt {
  readonly kind: "StopTimerStmt";
  readonly timer: Ident;
  readonly span: Span;
}

/** `panic(message)`. */
export interface PanicStmt {
  readonly kind: "PanicStmt";
  readonly message: Expr;
  readonly span: Span;
}

export type Statement =
  | AssignStmt
  | EmitStmt
  | LetStmt
  | IfStmt
  | MatchStmt
  | ForStmt
  | BlockStmt
  | NoopStmt
  | StopTimerStmt
  | PanicStmt;

// ───────────────────────────── event patterns ─────────────────────────────

export type UiEventKind = "click" | "submit" | "change" | "input" | "focus" | "blur" | "key" | "hover";

/** `ui.click(TodoRow)`, `ui.submit(NewForm#new)`, `ui.click(self)`. */
export interface UiEvent {
  readonly kind: "UiEvent";
  readonly event: UiEventKind;
  readonly selector: Selector | SelfSelector;
  readonly span: Span;
}

/** `TileName` or `TileName#id`. */
export interface Selector {
  readonly kind: "Selector";
  readonly tile: Ident;
  /** The `#id` part: an element id, not a definition. */
  readonly id?: Ident;
  readonly span: Span;
}

export interface SelfSelector {
  readonly kind: "SelfSelector";
  readonly span: Span;
}

/** `loadTodos.ok($m, _)` / `loadTodos.err($e, $key)`. */
export interface EffectEvent {
  readonly kind: "EffectEvent";
  readonly effect: Ident;
  readonly outcome: "ok" | "err";
  readonly binds: readonly Bind[];
  readonly span: Span;
}

/** A bind of an effect event: `$m`, or `_` to ignore. */
export interface Bind {
  readonly kind: "Bind";
  readonly name: string;
  readonly span: Span;
}

/** `timer(1s)` / `timer(100ms, name=countdown)`. */
export interface TimerEvent {
  readonly kind: "TimerEvent";
  readonly interval: DurationLit;
  /** The timer's name for `stop-timer`: not a definition. */
  readonly timer?: Ident;
  readonly span: Span;
}

export type AppEventKind =
  | "start"
  | "stop"
  | "error"
  | "visible"
  | "hidden"
  | "online"
  | "offline"
  | "http-401"
  | "http-403"
  | "http-5xx";

/** `app.start`, `app.http-401`, … */
export interface AppEvent {
  readonly kind: "AppEvent";
  readonly event: AppEventKind;
  readonly span: Span;
}

/** `tile.mount(Panel)` / `tile.unmount(Panel)`. */
export interface TileEvent {
  readonly kind: "TileEvent";
  readonly event: "mount" | "unmount";
  readonly tile: Ident;
  readonly span: Span;
}

/** `route.enter("/todos/:id")`, `route.leave(…)`, `route.error(…)`. */
export interface RouteEvent {
  readonly kind: "RouteEvent";
  readonly event: "enter" | "leave" | "error";
  readonly pattern: StringLit;
  readonly span: Span;
}

export type EventPattern = UiEvent | EffectEvent | TimerEvent | AppEvent | TileEvent | RouteEvent;

// ───────────────────────────── effect clauses ─────────────────────────────

/** A capability name such as `storage.read` (not a definition reference). */
export interface Capability {
  readonly kind: "Capability";
  /** Dotted, as written: `"http.get"`. */
  readonly name: string;
  readonly span: Span;
}

export type PolicyName = "latest" | "latest-per-key" | "queue" | "debounce" | "throttle" | "once";

/** `policy=latest`, `policy=latest-per-key($1)`, `policy=debounce(300ms)`. */
export interface Policy {
  readonly kind: "Policy";
  readonly policy: PolicyName;
  /** The key expression of `latest-per-key`. */
  readonly key?: Expr;
  /** The interval of `debounce` / `throttle`. */
  readonly interval?: DurationLit;
  readonly span: Span;
}

/** `retry=none`, `retry=linear(3, 200ms)`, `retry=exponential(3, 200ms, 2.0)`. */
export interface Retry {
  readonly kind: "Retry";
  readonly retry: "none" | "linear" | "exponential";
  readonly attempts?: NumberLit;
  readonly delay?: DurationLit;
  readonly factor?: NumberLit;
  readonly span: Span;
}

// ───────────────────────────── routes ─────────────────────────────

/** `"/todos/:id" -> TodoDetail`. Route maps are ordered (definition order breaks ties). */
export interface Route {
  readonly kind: "Route";
  readonly path: StringLit;
  readonly target: Ident;
  readonly span: Span;
}

/** `"/old" ->> "/new"`. */
export interface Redirect {
  readonly kind: "Redirect";
  readonly path: StringLit;
  readonly to: StringLit;
  readonly span: Span;
}

export type RouteEntry = Route | Redirect;

// ───────────────────────────── tests ─────────────────────────────

/** `reducer-test inc given = {…} expect = {…}`. */
export interface ReducerTest {
  readonly kind: "ReducerTest";
  readonly target: Ident;
  readonly given: Expr;
  readonly expect: Expr;
  readonly span: Span;
}

/** `tile-test App given = {…} expect = column(…)`: `expect` is a tile expression. */
export interface TileTest {
  readonly kind: "TileTest";
  readonly target: Ident;
  readonly given: Expr;
  readonly expect: Expr;
  readonly span: Span;
}

/** `property-test for-all = {x: T} given = {…} invariant = e (count = n)? (shrink = b)?`. */
export interface PropertyTest {
  readonly kind: "PropertyTest";
  /** The generated variables and their types; their names are locals of `given` and `invariant`. */
  readonly forAll: RecordType;
  readonly given: Expr;
  readonly invariant: Expr;
  readonly count?: NumberLit;
  readonly shrink?: BoolLit;
  readonly span: Span;
}

/** `episode-test load = "…" mocks = {…} expect = {…}`. */
export interface EpisodeTest {
  readonly kind: "EpisodeTest";
  readonly load: StringLit;
  readonly mocks?: Expr;
  readonly expect: Expr;
  readonly span: Span;
}

export type TestBody = ReducerTest | TileTest | PropertyTest | EpisodeTest;

// ───────────────────────────── definitions ─────────────────────────────

export interface DefinitionBase {
  readonly layer: Layer;
  /** The definition's own name. */
  readonly name: Ident;
  /** From the layer keyword to the definition's last token. */
  readonly span: Span;
}

/** `type Name(params) = body`. */
export interface TypeDef extends DefinitionBase {
  readonly kind: "TypeDef";
  readonly layer: "type";
  readonly params: readonly Ident[];
  readonly body: TypeExpr;
}

export type SlotModifier = "transient" | "volatile";

/** `slot name : type modifiers = init`. */
export interface SlotDef extends DefinitionBase {
  readonly kind: "SlotDef";
  readonly layer: "slot";
  readonly type: TypeExpr;
  readonly modifiers: readonly SlotModifier[];
  readonly init?: Expr;
}

/** `effect name cap=… in=… out=… policy=… retry=… map-request=…` (clauses in any order). */
export interface EffectDef extends DefinitionBase {
  readonly kind: "EffectDef";
  readonly layer: "effect";
  readonly cap: Capability;
  readonly in: TypeExpr;
  readonly out: TypeExpr;
  readonly policy?: Policy;
  readonly retry?: Retry;
  readonly mapRequest?: Expr;
}

/** `reducer name on=pattern do= statements`. */
export interface ReducerDef extends DefinitionBase {
  readonly kind: "ReducerDef";
  readonly layer: "reducer";
  readonly on: EventPattern;
  readonly body: readonly Statement[];
}

/** `tile Name in=… sub-routes=… error-boundary=… scroll-restoration=… = body`. */
export interface TileDef extends DefinitionBase {
  readonly kind: "TileDef";
  readonly layer: "tile";
  readonly in?: TypeExpr;
  readonly subRoutes?: readonly RouteEntry[];
  readonly errorBoundary?: Ident;
  readonly scrollRestoration?: BoolLit;
  readonly body: Expr;
}

export interface Param {
  readonly kind: "Param";
  readonly name: Ident;
  readonly type: TypeExpr;
  readonly span: Span;
}

/** `fn name(params) -> returnType = body`. */
export interface FnDef extends DefinitionBase {
  readonly kind: "FnDef";
  readonly layer: "fn";
  readonly params: readonly Param[];
  readonly returnType?: TypeExpr;
  readonly body: Expr;
}

/** `app Name caps=[…] routes={…} init=[…] theme=… http={…} meta={…} indexed-db={…} analytics={…}`. */
export interface AppDef extends DefinitionBase {
  readonly kind: "AppDef";
  readonly layer: "app";
  readonly caps?: readonly Capability[];
  readonly routes?: readonly RouteEntry[];
  readonly init?: readonly Expr[];
  /** A theme name, or a slot holding one. */
  readonly theme?: Ident;
  readonly http?: RecordLit;
  readonly meta?: RecordLit;
  readonly indexedDb?: RecordLit;
  readonly analytics?: RecordLit;
}

/** `test name = reducer-test … | tile-test … | property-test … | episode-test …`. */
export interface TestDef extends DefinitionBase {
  readonly kind: "TestDef";
  readonly layer: "test";
  readonly body: TestBody;
}

/**
 * `theme Name = {colors: {…}, …}`: a record whose values are strings, numbers or records. A key
 * written as a string (`{"x": …}`) is an Ident whose name is the string's value and whose span
 * covers the quotes.
 */
export interface ThemeDef extends DefinitionBase {
  readonly kind: "ThemeDef";
  readonly layer: "theme";
  readonly body: RecordLit;
}

/** `motion Name = {keyframes: {…}, duration: "slow", …}` (same value grammar as a theme). */
export interface MotionDef extends DefinitionBase {
  readonly kind: "MotionDef";
  readonly layer: "motion";
  readonly body: RecordLit;
}

/** A top-level definition of any layer (language.md §2): what a program is made of. */
export type Definition =
  | TypeDef
  | SlotDef
  | EffectDef
  | ReducerDef
  | TileDef
  | FnDef
  | AppDef
  | TestDef
  | ThemeDef
  | MotionDef;

/** A whole program: its definitions in source order. */
export interface Program {
  readonly kind: "Program";
  readonly definitions: readonly Definition[];
  readonly span: Span;
}

/** Any AST node. */
export type Node =
  | Program
  | Definition
  | Expr
  | Field<Expr | TypeExpr>
  | Props
  | MatchArm
  | MapEntry
  | Pattern
  | TypeExpr
  | VariantDecl
  | Refinement
  | Statement
  | MatchStmtArm
  | EventPattern
  | Selector
  | SelfSelector
  | Bind
  | Capability
  | Policy
  | Retry
  | RouteEntry
  | TestBody
  | Param;
