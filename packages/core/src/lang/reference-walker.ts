/**
 * The walk over expressions, types and statements that finds reference sites: what every
 * definition's walk (references.ts's Walker, per definition kind) builds on, with the layer lists
 * each position may name and the scope of locals that hide a definition's name.
 */
import type { Expr, Field, Ident, Pattern, Statement, StringLit, TypeExpr } from "./ast.js";
import type { Layer } from "./layers.js";
import {
  BUILTIN_QUALIFIERS,
  BUILTIN_TILES,
  BUILTIN_TYPES,
  BUILTIN_VALUES,
  BUILTIN_VARIANTS,
  HANDLER_NAMES,
  positionalIsTile,
  REDUCER_FIELD_EFFECTS,
  RUN_REDUCER,
} from "./parser/builtins.js";
import type { ReferenceRole, ReferenceSite } from "./references.js";
import type { Span } from "./span.js";

export const VALUE: readonly Layer[] = ["slot", "fn"];
export const FN: readonly Layer[] = ["fn"];
export const SLOT: readonly Layer[] = ["slot"];
export const EFFECT: readonly Layer[] = ["effect"];
export const TILE: readonly Layer[] = ["tile"];
export const REDUCER: readonly Layer[] = ["reducer"];
export const TYPE: readonly Layer[] = ["type"];
export const CHILD: readonly Layer[] = ["tile", "slot", "fn"];
export const THEME: readonly Layer[] = ["theme", "slot"];
export const MOTION: readonly Layer[] = ["motion"];

/** Bare words of test bodies that are test vocabulary, not names (`mocks: {x: from-log}`). */
export const TEST_WORDS: ReadonlySet<string> = new Set(["from-log", "ignore"]);
/** Mock outcome heads (`ok(v)`, `err(e)`, `delay(ms, ok(v))`). */
export const MOCK_HEADS: ReadonlySet<string> = new Set(["ok", "err", "delay"]);

/** The local names in scope (they hide a definition of the same name). */
export type Scope = ReadonlySet<string>;
export const EMPTY: Scope = new Set();

export function isCapitalized(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 65 && c <= 90;
}

export function withNames(scope: Scope, names: readonly string[]): Scope {
  if (names.length === 0) return scope;
  const s = new Set(scope);
  for (const n of names) s.add(n);
  return s;
}

export function patternNames(p: Pattern, out: string[] = []): string[] {
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
export function innerSpan(s: StringLit): Span {
  const end = Math.max(s.span.end - 1, s.span.offset + 1);
  return { offset: s.span.offset + 1, end, line: s.span.line, column: s.span.column + 1 };
}

/** Collects the reference sites of expressions, types and statements, with their scopes. */
export abstract class ExpressionWalker {
  readonly sites: ReferenceSite[] = [];

  /** Inside a test body, where `from-log` / `ignore` are vocabulary. */
  protected inTest = false;

  protected add(id: Ident, layers: readonly Layer[], role: ReferenceRole): void {
    if (id.name === "") return;
    this.sites.push({ name: id.name, layers, role, span: id.span });
  }

  // ───────────── types ─────────────

  protected type(t: TypeExpr, params: Scope = EMPTY): void {
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
  protected typeLike(e: Expr, scope: Scope): void {
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

  protected name(id: Ident, scope: Scope, role: "expr" | "shorthand"): void {
    const n = id.name;
    if (scope.has(n) || BUILTIN_VALUES.has(n) || (this.inTest && TEST_WORDS.has(n))) return;
    if (isCapitalized(n)) {
      if (!BUILTIN_VARIANTS.has(n)) this.add(id, VALUE, "variant");
      return;
    }
    this.add(id, VALUE, role);
  }

  protected expr(e: Expr, scope: Scope): void {
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

  protected fields(fields: readonly Field[], scope: Scope): void {
    for (const f of fields) {
      if (f.value === undefined) this.name(f.key, scope, "shorthand");
      else this.expr(f.value, scope);
    }
  }

  protected call(e: Extract<Expr, { kind: "Call" }>, scope: Scope): void {
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

  protected fieldValues(fields: readonly Field[] | undefined, scope: Scope): void {
    for (const f of fields ?? []) if (f.value !== undefined) this.expr(f.value, scope);
  }

  protected emit(effect: Ident, args: readonly Expr[], scope: Scope): void {
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

  protected tileCall(e: Extract<Expr, { kind: "TileCall" }>, scope: Scope): void {
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
  protected keyed(f: Field, scope: Scope, builtin: boolean, isArgument: boolean): void {
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

  protected stringRef(s: StringLit, layers: readonly Layer[], role: ReferenceRole): void {
    if (s.value === "") return;
    this.sites.push({ name: s.value, layers, role, span: innerSpan(s) });
  }

  /** `bind=draft` / `bind=draft.title` / `bind=form[k]`: the root names a slot. */
  protected bindTarget(v: Expr, scope: Scope): void {
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

  protected statements(list: readonly Statement[], outer: Scope): void {
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
}
