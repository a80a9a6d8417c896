import type {
  BoolLit,
  Definition,
  EffectDef,
  Expr,
  Field,
  FnDef,
  Ident,
  Param,
  Policy,
  PolicyName,
  Program,
  RecordLit,
  Retry,
  RouteEntry,
  SlotModifier,
  TileDef,
  TypeExpr,
} from "../ast.js";
import type { Layer } from "../layers.js";
import type { Token } from "../lexer.js";
import { placeholderExpr } from "./expressions.js";
import { describeToken, MAX_HEIGHT, tokenSpan, treeHeight } from "./state.js";
import { TestParser } from "./tests.js";
import { placeholderType } from "./types.js";

const LAYER_LIST = "type, slot, effect, reducer, tile, fn, app, test, theme or motion";
const EFFECT_CLAUSES = "`cap=`, `in=`, `out=`, `policy=`, `retry=` or `map-request=`";
const POLICIES: ReadonlySet<string> = new Set([
  "latest",
  "latest-per-key",
  "queue",
  "debounce",
  "throttle",
  "once",
]);

/** Definitions (language.md §1.3–1.12, style.md §4.2 / §4.9.1, testing.md §8.1) and programs. */
export class DefinitionParser extends TestParser {
  /** Every definition up to the end of input. */
  program(): Program {
    const definitions: Definition[] = [];
    let previous: Definition | undefined;
    while (!this.atEof()) {
      if (!this.definitionAhead()) {
        this.strayToken(previous);
        break;
      }
      const def = this.definition();
      definitions.push(def);
      previous = def;
    }
    const end = this.tokens[this.tokens.length - 1]!.offset;
    return { kind: "Program", definitions, span: { offset: 0, end, line: 1, column: 1 } };
  }

  /** Exactly one definition, then the end of input. */
  single(): Definition | undefined {
    if (!this.definitionAhead()) {
      this.strayToken(undefined);
      return undefined;
    }
    const def = this.definition();
    if (!this.atEof()) {
      const t = this.peek();
      if (this.definitionAhead()) {
        this.fail(
          `expected a single definition, but another one (${describeToken(t)}) follows ${describeDef(def)}`,
          t,
        );
      } else {
        this.strayToken(def);
      }
    }
    return def;
  }

  private strayToken(previous: Definition | undefined): void {
    const t = this.peek();
    if (previous === undefined) {
      this.fail(`expected a definition (${LAYER_LIST}), found ${describeToken(t)}`, t);
    } else {
      this.fail(
        `unexpected ${describeToken(t)} after the end of ${describeDef(previous)}; expected a new definition (${LAYER_LIST})`,
        t,
      );
    }
  }

  private definition(): Definition {
    const start = this.peek();
    const firstToken = this.pos;
    this.peakDepth = 0;
    this.peakChain = 0;
    const layer = start.text as Layer;
    this.next();
    const name = this.ident(`a name after \`${layer}\``);
    this.context = ` in ${layer} \`${name.name}\``;
    let def: Definition;
    switch (layer) {
      case "type":
        def = this.typeDef(start, name);
        break;
      case "slot":
        def = this.slotDef(start, name);
        break;
      case "effect":
        def = this.effectDef(start, name);
        break;
      case "reducer": {
        this.expectKeyword("on", "after the reducer name (a reducer is `reducer name on=… do=…`)");
        this.expectPunct("=", "after `on`");
        const on = this.eventPattern();
        this.expectKeyword("do", "after the event pattern");
        this.expectPunct("=", "after `do`");
        const body = this.statementList();
        def = { kind: "ReducerDef", layer: "reducer", name, on, body, span: this.spanFrom(start) };
        break;
      }
      case "tile":
        def = this.tileDef(start, name);
        break;
      case "fn":
        def = this.fnDef(start, name);
        break;
      case "app":
        def = this.appBody(start, name);
        break;
      case "test": {
        this.expectPunct("=", "after the test name");
        const body = this.testBody();
        def = { kind: "TestDef", layer: "test", name, body, span: this.spanFrom(start) };
        break;
      }
      case "theme":
      case "motion": {
        this.expectPunct("=", `after the ${layer} name`);
        const body = this.themeRecord();
        def =
          layer === "theme"
            ? { kind: "ThemeDef", layer, name, body, span: this.spanFrom(start) }
            : { kind: "MotionDef", layer, name, body, span: this.spanFrom(start) };
        break;
      }
    }
    this.checkHeight(def, this.pos - firstToken);
    this.context = "";
    return def;
  }

  /**
   * Refuses a definition whose tree is taller than {@link MAX_HEIGHT}. The exact (iterative) count
   * runs only when neither cheap bound rules it out: a path has at most about two nodes per
   * token, and at most a few nodes plus the chains per level of recursion.
   */
  private checkHeight(def: Definition, tokenCount: number): void {
    if (this.error !== null || tokenCount * 2 + 10 <= MAX_HEIGHT) return;
    if (this.peakDepth * (6 + 7 * this.peakChain) <= MAX_HEIGHT) return;
    const height = treeHeight(def);
    if (height > MAX_HEIGHT) {
      this.fail(
        `${describeDef(def)} nests ${height} levels deep (at most ${MAX_HEIGHT}); move part of it into a definition of its own`,
        def.span,
      );
    }
  }

  private typeDef(start: Token, name: Ident): Definition {
    const params: Ident[] = [];
    if (this.isPunct("(")) {
      this.next();
      while (!this.isPunct(")") && !this.atEof()) {
        params.push(this.ident("a type parameter name"));
        if (!this.isPunct(",")) break;
        this.next();
      }
      this.expectPunct(")", "to close the type parameters");
    }
    this.expectPunct("=", "after the type name");
    const body = this.typeExpr();
    return { kind: "TypeDef", layer: "type", name, params, body, span: this.spanFrom(start) };
  }

  private slotDef(start: Token, name: Ident): Definition {
    this.expectPunct(":", "after the slot name (a slot is `slot name : Type = value`)");
    const type = this.typeExpr();
    const modifiers: SlotModifier[] = [];
    while (this.isIdent("transient") || this.isIdent("volatile")) {
      modifiers.push(this.next().text as SlotModifier);
    }
    if (!this.isPunct("=")) {
      return { kind: "SlotDef", layer: "slot", name, type, modifiers, span: this.spanFrom(start) };
    }
    this.next();
    const init = this.expr();
    return { kind: "SlotDef", layer: "slot", name, type, modifiers, init, span: this.spanFrom(start) };
  }

  private effectDef(start: Token, name: Ident): Definition {
    const seen = new Set<string>();
    let cap: EffectDef["cap"] | undefined;
    let input: TypeExpr | undefined;
    let output: TypeExpr | undefined;
    let policy: Policy | undefined;
    let retry: Retry | undefined;
    let mapRequest: Expr | undefined;
    while (true) {
      const t = this.peek();
      const key =
        (t.kind === "keyword" &&
          (t.text === "cap" ||
            t.text === "in" ||
            t.text === "out" ||
            t.text === "policy" ||
            t.text === "retry")) ||
        (t.kind === "ident" && t.text === "map-request")
          ? t.text
          : undefined;
      if (key === undefined) break;
      if (seen.has(key)) {
        this.fail(`\`${key}=\` is written twice${this.context}`, t);
        break;
      }
      seen.add(key);
      this.next();
      this.expectPunct("=", `after \`${key}\``);
      if (key === "cap") cap = this.capability();
      else if (key === "in") input = this.typeExpr();
      else if (key === "out") output = this.typeExpr();
      else if (key === "policy") policy = this.policy();
      else if (key === "retry") retry = this.retry();
      else mapRequest = this.expr();
    }
    for (const [clause, present] of [
      ["cap", cap],
      ["in", input],
      ["out", output],
    ] as const) {
      if (present === undefined) {
        this.expected(
          `\`${clause}=\` (an effect needs \`cap=\`, \`in=\` and \`out=\`; its clauses are ${EFFECT_CLAUSES})`,
        );
        break;
      }
    }
    const at = tokenSpan(start);
    return {
      kind: "EffectDef",
      layer: "effect",
      name,
      cap: cap ?? { kind: "Capability", name: "", span: at },
      in: input ?? placeholderType(at),
      out: output ?? placeholderType(at),
      ...(policy !== undefined ? { policy } : {}),
      ...(retry !== undefined ? { retry } : {}),
      ...(mapRequest !== undefined ? { mapRequest } : {}),
      span: this.spanFrom(start),
    };
  }

  private policy(): Policy {
    const t = this.peek();
    if (t.kind !== "ident" || !POLICIES.has(t.text)) {
      this.expected(`a policy (${[...POLICIES].join(", ")}) after \`policy=\``);
      return { kind: "Policy", policy: "latest", span: tokenSpan(t) };
    }
    this.next();
    const policy = t.text as PolicyName;
    if (policy === "latest-per-key") {
      this.expectPunct("(", "after `latest-per-key` (it takes the key expression)");
      const key = this.expr();
      this.expectPunct(")", "to close `latest-per-key(…)`");
      return { kind: "Policy", policy, key, span: this.spanFrom(t) };
    }
    if (policy === "debounce" || policy === "throttle") {
      this.expectPunct("(", `after \`${policy}\` (it takes an interval such as \`300ms\`)`);
      const interval = this.duration(`an interval such as \`300ms\` in \`${policy}(…)\``);
      this.expectPunct(")", `to close \`${policy}(…)\``);
      return { kind: "Policy", policy, interval, span: this.spanFrom(t) };
    }
    return { kind: "Policy", policy, span: tokenSpan(t) };
  }

  private retry(): Retry {
    const t = this.peek();
    if (t.kind !== "ident" || !(t.text === "none" || t.text === "linear" || t.text === "exponential")) {
      this.expected("a retry (`none`, `linear(n, delay)` or `exponential(n, delay, factor)`) after `retry=`");
      return { kind: "Retry", retry: "none", span: tokenSpan(t) };
    }
    this.next();
    if (t.text === "none") return { kind: "Retry", retry: "none", span: tokenSpan(t) };
    this.expectPunct("(", `after \`${t.text}\``);
    const attempts = this.number(`the number of attempts in \`${t.text}(…)\``);
    this.expectPunct(",", "after the number of attempts");
    const delay = this.duration(`a delay such as \`200ms\` in \`${t.text}(…)\``);
    if (t.text === "linear") {
      this.expectPunct(")", "to close `linear(…)`");
      return { kind: "Retry", retry: "linear", attempts, delay, span: this.spanFrom(t) };
    }
    this.expectPunct(",", "after the delay of `exponential(…)`");
    const factor = this.number("the growth factor in `exponential(…)`");
    this.expectPunct(")", "to close `exponential(…)`");
    return { kind: "Retry", retry: "exponential", attempts, delay, factor, span: this.spanFrom(t) };
  }

  private number(what: string): Extract<Expr, { kind: "Number" }> {
    const lit = this.literal(what);
    if (lit.kind === "Number") return lit;
    this.fail(
      `expected ${what}${this.context}, found a ${lit.kind === "String" ? "string" : "bool"}`,
      lit.span,
    );
    return { kind: "Number", raw: "0", value: 0, span: lit.span };
  }

  private tileDef(start: Token, name: Ident): TileDef {
    let input: TypeExpr | undefined;
    let subRoutes: RouteEntry[] | undefined;
    let errorBoundary: Ident | undefined;
    let scrollRestoration: BoolLit | undefined;
    const seen = new Set<string>();
    while (!this.isPunct("=") && !this.atEof()) {
      const t = this.peek();
      const clause =
        t.kind === "keyword" && t.text === "in"
          ? "in"
          : t.kind === "ident" &&
              (t.text === "sub-routes" || t.text === "error-boundary" || t.text === "scroll-restoration")
            ? t.text
            : undefined;
      if (clause === undefined) {
        this.expected(
          "`=` and the tile body after the tile name (or a clause `in=`, `sub-routes=`, `error-boundary=`, `scroll-restoration=`)",
        );
        break;
      }
      if (seen.has(clause)) {
        this.fail(`\`${clause}=\` is written twice${this.context}`, t);
        break;
      }
      seen.add(clause);
      this.next();
      this.expectPunct("=", `after \`${clause}\``);
      if (clause === "in") input = this.typeExpr();
      else if (clause === "sub-routes") subRoutes = this.routeMap("sub-routes");
      else if (clause === "error-boundary")
        errorBoundary = this.ident("a fallback tile name after `error-boundary=`");
      else {
        const b = this.peek();
        if (this.isKeyword("true") || this.isKeyword("false")) {
          this.next();
          scrollRestoration = { kind: "Bool", value: b.text === "true", span: tokenSpan(b) };
        } else {
          this.expected("`true` or `false` after `scroll-restoration=`");
        }
      }
    }
    this.expectPunct("=", "before the tile body");
    const body = this.tileExpr();
    return {
      kind: "TileDef",
      layer: "tile",
      name,
      ...(input !== undefined ? { in: input } : {}),
      ...(subRoutes !== undefined ? { subRoutes } : {}),
      ...(errorBoundary !== undefined ? { errorBoundary } : {}),
      ...(scrollRestoration !== undefined ? { scrollRestoration } : {}),
      body,
      span: this.spanFrom(start),
    };
  }

  private fnDef(start: Token, name: Ident): FnDef {
    this.expectPunct("(", "after the fn name (a fn is `fn name(x: T) -> R = body`)");
    const params: Param[] = [];
    while (!this.isPunct(")") && !this.atEof()) {
      const pname = this.ident("a parameter name");
      this.expectPunct(":", `after the parameter name \`${pname.name}\` (parameters are \`name: Type\`)`);
      const type = this.typeExpr();
      params.push({ kind: "Param", name: pname, type, span: this.spanFrom(pname.span) });
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct(")", "to close the parameter list");
    let returnType: TypeExpr | undefined;
    if (this.isPunct("->")) {
      this.next();
      returnType = this.typeExpr();
    }
    this.expectPunct("=", "before the fn body");
    const body = this.expr();
    return {
      kind: "FnDef",
      layer: "fn",
      name,
      params,
      ...(returnType !== undefined ? { returnType } : {}),
      body,
      span: this.spanFrom(start),
    };
  }

  /** A theme / motion record: keys are names (or strings), values strings, numbers or records. */
  private themeRecord(): RecordLit {
    const open = this.peek();
    if (!this.enter()) {
      this.leave();
      return { kind: "Record", fields: [], span: tokenSpan(open) };
    }
    this.expectPunct("{", "to open the record");
    const fields: Field[] = [];
    while (!this.isPunct("}") && !this.atEof()) {
      const k = this.peek();
      let key: Ident;
      if (k.kind === "string") {
        this.next();
        key = { kind: "Ident", name: k.text, span: tokenSpan(k) };
      } else {
        key = this.ident("a key", true);
      }
      this.expectPunct(":", `after the key \`${key.name}\``);
      const v = this.peek();
      let value: Expr;
      if (v.kind === "punct" && v.text === "{") value = this.themeRecord();
      else if (v.kind === "string" || v.kind === "number" || (v.kind === "punct" && v.text === "-")) {
        value = this.literal("a string, a number or a record");
      } else {
        this.expected(`a string, a number or a record \`{…}\` as the value of \`${key.name}\``);
        value = placeholderExpr(v);
      }
      fields.push({ kind: "Field", key, value, span: this.spanFrom(key.span) });
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("}", "to close the record");
    this.leave();
    return { kind: "Record", fields, span: this.spanFrom(open) };
  }
}

function describeDef(def: Definition): string {
  return `${def.layer} \`${def.name.name}\``;
}
