/**
 * Expressions (language.md §1.4): literals, names, member access, calls, operators with their
 * precedence, records, lists, maps and lambdas.
 */
import type { BinaryOp, Expr, Field, Ident, MapEntry, MatchArm, Pattern, UnaryOp } from "../ast.js";
import type { Token } from "../lexer.js";
import type { Pos } from "./state.js";
import { tokenSpan } from "./state.js";
import { TypeParser } from "./types.js";

const COMPARISON: ReadonlySet<string> = new Set(["==", "!=", "<", ">", "<=", ">="]);
const ADDITIVE: ReadonlySet<string> = new Set(["+", "-"]);
const MULTIPLICATIVE: ReadonlySet<string> = new Set(["*", "/", "%"]);
/** Keywords that are whole expressions, so cannot name a record field (`{true: "on"}` is a map). */
const VALUE_KEYWORDS: ReadonlySet<string> = new Set(["true", "false", "null", "now", "self"]);

function isCapitalized(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 65 && c <= 90;
}

export function placeholderExpr(at: Pos): Expr {
  return { kind: "Unit", span: { offset: at.offset, end: at.offset, line: at.line, column: at.column } };
}

/** Value expressions (language.md §1.9) and match patterns. */
export class ExpressionParser extends TypeParser {
  /** Any value expression, including `emit effect(args)` (whose value is an EffectId). */
  protected expr(): Expr {
    const start = this.peek();
    if (!this.enter()) {
      this.leave();
      return placeholderExpr(start);
    }
    let e: Expr;
    if (this.isKeyword("emit")) {
      this.next();
      const effect = this.ident("an effect name after `emit`");
      const args = this.positionalArgs(`the arguments of \`emit ${effect.name}\``);
      e = { kind: "Emit", effect, args, span: this.spanFrom(start) };
    } else {
      e = this.orExpr();
    }
    this.leave();
    return e;
  }

  private binary(op: BinaryOp, left: Expr, right: Expr): Expr {
    return { kind: "Binary", op, left, right, span: this.spanFrom(this.startOf(left)) };
  }

  private orExpr(): Expr {
    let left = this.andExpr();
    let built = 0;
    while (this.isPunct("||") || (this.isPunct("|") && !this.looksLikeMatchArm())) {
      if (!this.widen(++built)) break;
      this.next();
      left = this.binary("||", left, this.andExpr());
    }
    return left;
  }

  /**
   * After a `|`: does a match arm start here (`| _ ->`, `| Done ->`, `| Loaded(p) ->`,
   * `| (a, b) ->`, `| x ->`) rather than a bool-or operand (language.md §1.2.1)?
   */
  protected looksLikeMatchArm(): boolean {
    const t1 = this.peek(1);
    if (t1.kind === "ident") {
      const t2 = this.peek(2);
      if (t2.kind === "punct" && t2.text === "->") return true;
      if (t2.kind === "punct" && t2.text === "(") return this.arrowAfterParens(this.pos + 2);
      return false;
    }
    if (t1.kind === "punct" && t1.text === "(") return this.arrowAfterParens(this.pos + 1);
    return false;
  }

  private arrowAfterParens(openIndex: number): boolean {
    const open = this.tokens[openIndex];
    if (open === undefined || open.pair < 0) return false;
    const after = this.tokens[open.pair + 1];
    return after !== undefined && after.kind === "punct" && after.text === "->";
  }

  private andExpr(): Expr {
    let left = this.comparison();
    let built = 0;
    while (this.isPunct("&&") || this.isPunct("&")) {
      if (!this.widen(++built)) break;
      this.next();
      left = this.binary("&&", left, this.comparison());
    }
    return left;
  }

  private comparison(): Expr {
    let left = this.additive();
    let built = 0;
    while (this.peek().kind === "punct" && COMPARISON.has(this.peek().text)) {
      if (!this.widen(++built)) break;
      const op = this.next().text as BinaryOp;
      left = this.binary(op, left, this.additive());
    }
    return left;
  }

  private additive(): Expr {
    let left = this.multiplicative();
    let built = 0;
    while (this.peek().kind === "punct" && ADDITIVE.has(this.peek().text)) {
      if (!this.widen(++built)) break;
      const op = this.next().text as BinaryOp;
      left = this.binary(op, left, this.multiplicative());
    }
    return left;
  }

  private multiplicative(): Expr {
    let left = this.unary();
    let built = 0;
    while (this.peek().kind === "punct" && MULTIPLICATIVE.has(this.peek().text)) {
      if (!this.widen(++built)) break;
      const op = this.next().text as BinaryOp;
      left = this.binary(op, left, this.unary());
    }
    return left;
  }

  private unary(): Expr {
    const first = this.peek();
    const prefixed =
      (first.kind === "punct" && (first.text === "-" || first.text === "!")) ||
      (first.kind === "ident" && first.text === "not");
    if (!prefixed) return this.postfix();
    const prefixes: { op: UnaryOp; at: Token }[] = [];
    while (true) {
      const t = this.peek();
      if (t.kind === "punct" && (t.text === "-" || t.text === "!"))
        prefixes.push({ op: t.text, at: this.next() });
      else if (t.kind === "ident" && t.text === "not" && this.startsOperand(1))
        prefixes.push({ op: "!", at: this.next() });
      else break;
      if (!this.widen(prefixes.length)) break;
    }
    let e = this.postfix();
    for (let k = prefixes.length - 1; k >= 0; k--) {
      const p = prefixes[k]!;
      e = { kind: "Unary", op: p.op, operand: e, span: this.spanFrom(p.at) };
    }
    return e;
  }

  /** Whether the token `k` ahead can begin an operand (so `not` before it is the operator). */
  private startsOperand(k: number): boolean {
    const t = this.peek(k);
    switch (t.kind) {
      case "ident":
      case "number":
      case "string":
      case "duration":
      case "dollar":
        return true;
      case "keyword":
        return VALUE_KEYWORDS.has(t.text) || t.text === "if" || t.text === "match" || t.text === "let";
      case "punct":
        return (
          t.text === "(" ||
          t.text === "[" ||
          t.text === "{" ||
          t.text === "-" ||
          t.text === "!" ||
          t.text === "@"
        );
      default:
        return false;
    }
  }

  private postfix(): Expr {
    let e = this.primary();
    let built = 0;
    while (true) {
      if (this.isPunct(".")) {
        if (!this.widen(++built)) break;
        this.next();
        const property = this.ident("a field or method name after `.`", true);
        const member: Expr = { kind: "Member", object: e, property, span: this.spanFrom(this.startOf(e)) };
        e = this.isPunct("(") ? this.call(member) : member;
      } else if (this.isPunct("[")) {
        if (!this.widen(++built)) break;
        this.next();
        const index = this.expr();
        this.expectPunct("]", "to close the index");
        e = { kind: "Index", object: e, index, span: this.spanFrom(this.startOf(e)) };
      } else {
        break;
      }
    }
    return e;
  }

  /** `callee(args)`, the `(` being next: positional args in `args`, named ones in `fields`. */
  protected call(callee: Expr): Expr {
    this.next();
    const args: Expr[] = [];
    const fields: Field[] = [];
    while (!this.isPunct(")") && !this.atEof()) {
      if (this.isName() && this.isPunct("=", 1)) {
        const key = this.ident("an argument name", true);
        this.next();
        fields.push({ kind: "Field", key, value: this.expr(), span: this.spanFrom(key.span) });
      } else {
        args.push(this.expr());
      }
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct(")", "to close the argument list");
    const span = this.spanFrom(this.startOf(callee));
    return fields.length > 0
      ? { kind: "Call", callee, args, fields, span }
      : { kind: "Call", callee, args, span };
  }

  /** `(e, …)` with positional expressions only (emit arguments). */
  protected positionalArgs(what: string): Expr[] {
    this.expectPunct("(", `to open ${what}`);
    const args: Expr[] = [];
    while (!this.isPunct(")") && !this.atEof()) {
      args.push(this.expr());
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct(")", `to close ${what}`);
    return args;
  }

  private primary(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case "number":
        this.next();
        return { kind: "Number", raw: t.text, value: t.value, span: tokenSpan(t) };
      case "string":
        this.next();
        return { kind: "String", value: t.text, span: tokenSpan(t) };
      case "duration":
        this.next();
        return {
          kind: "Duration",
          raw: t.text,
          amount: t.value,
          unit: t.unit as "ms" | "s" | "m",
          span: tokenSpan(t),
        };
      case "dollar":
        this.next();
        return { kind: "DollarRef", name: t.text, span: tokenSpan(t) };
      case "ident": {
        const name = this.ident("a name");
        return this.isPunct("(") ? this.call(name) : name;
      }
      case "keyword":
        return this.keywordExpr(t);
      case "punct":
        return this.punctExpr(t);
      default:
        this.expected("an expression");
        return placeholderExpr(t);
    }
  }

  private keywordExpr(t: Token): Expr {
    switch (t.text) {
      case "true":
      case "false":
        this.next();
        return { kind: "Bool", value: t.text === "true", span: tokenSpan(t) };
      case "null":
        this.next();
        return { kind: "Null", span: tokenSpan(t) };
      case "now":
        this.next();
        return { kind: "Now", span: tokenSpan(t) };
      case "self":
        this.next();
        return { kind: "Self", span: tokenSpan(t) };
      case "if":
        return this.ifExpr();
      case "let":
        return this.letExpr();
      case "match":
        return this.matchExpr(() => this.expr());
      default:
        this.expected("an expression");
        return placeholderExpr(t);
    }
  }

  private punctExpr(t: Token): Expr {
    switch (t.text) {
      case "(": {
        this.next();
        if (this.isPunct(")")) {
          this.next();
          return { kind: "Unit", span: this.spanFrom(t) };
        }
        const first = this.expr();
        if (this.isPunct(",")) {
          const items: Expr[] = [first];
          while (this.isPunct(",")) {
            this.next();
            if (this.isPunct(")")) break;
            items.push(this.expr());
          }
          this.expectPunct(")", "to close the tuple");
          return { kind: "Tuple", items, span: this.spanFrom(t) };
        }
        this.expectPunct(")", "to close the parenthesized expression");
        this.markParenthesized(first, t);
        return first;
      }
      case "{":
        return this.braces();
      case "[": {
        this.next();
        const items: Expr[] = [];
        while (!this.isPunct("]") && !this.atEof()) {
          items.push(this.expr());
          if (!this.isPunct(",")) break;
          this.next();
        }
        this.expectPunct("]", "to close the list");
        return { kind: "List", items, span: this.spanFrom(t) };
      }
      case "@": {
        this.next();
        const path: Ident[] = [this.ident("a theme group after `@` (as in `@colors.surface`)")];
        while (this.isPunct(".")) {
          this.next();
          path.push(this.ident("a token name in the `@` reference", true));
        }
        if (path.length < 2) {
          this.fail(
            `a token reference needs a group and a name, such as \`@colors.surface\`${this.context}`,
            t,
          );
        }
        return { kind: "TokenRef", path, span: this.spanFrom(t) };
      }
      case "<": {
        // A leading `<` can only open a test wildcard: `<any-id>` or `<slots.NAME>`.
        this.next();
        const head = this.peek();
        if (head.kind === "ident" && head.text === "any-id") {
          this.next();
          this.expectPunct(">", "to close `<any-id>`");
          return { kind: "AnyId", span: this.spanFrom(t) };
        }
        if (head.kind === "ident" && head.text === "slots") {
          this.next();
          this.expectPunct(".", "in `<slots.NAME>`");
          const slot = this.ident("a slot name in `<slots.NAME>`");
          this.expectPunct(">", "to close `<slots.NAME>`");
          return { kind: "SlotWildcard", slot, span: this.spanFrom(t) };
        }
        this.expected("a test wildcard `<any-id>` or `<slots.NAME>` after `<`", head);
        return placeholderExpr(t);
      }
      default:
        this.expected("an expression", t);
        return placeholderExpr(t);
    }
  }

  /** `{}` (an empty map), a record `{id, text=draft}` / `{key: v}`, or a map `{"k": v}`. */
  private braces(): Expr {
    const open = this.next();
    if (this.isPunct("}")) {
      this.next();
      return { kind: "Map", entries: [], span: this.spanFrom(open) };
    }
    const k0 = this.peek();
    const k1 = this.peek(1);
    const fieldName = k0.kind === "ident" || (k0.kind === "keyword" && !VALUE_KEYWORDS.has(k0.text));
    const isRecord =
      fieldName &&
      k1.kind === "punct" &&
      (k1.text === "=" || k1.text === "," || k1.text === "}" || k1.text === ":");
    if (isRecord) {
      const fields: Field[] = [];
      while (!this.isPunct("}") && !this.atEof()) {
        const key = this.peek();
        if (!(key.kind === "ident" || (key.kind === "keyword" && !VALUE_KEYWORDS.has(key.text)))) {
          this.expected("a record field name");
          break;
        }
        const id = this.ident("a record field name", true);
        if (this.isPunct("=") || this.isPunct(":")) {
          this.next();
          fields.push({ kind: "Field", key: id, value: this.expr(), span: this.spanFrom(id.span) });
        } else {
          fields.push({ kind: "Field", key: id, span: id.span });
        }
        if (!this.isPunct(",")) break;
        this.next();
      }
      this.expectPunct("}", "to close the record");
      return { kind: "Record", fields, span: this.spanFrom(open) };
    }
    const entries: MapEntry[] = [];
    while (!this.isPunct("}") && !this.atEof()) {
      const key = this.expr();
      this.expectPunct(":", "between a map key and its value");
      const value = this.expr();
      entries.push({ kind: "MapEntry", key, value, span: this.spanFrom(this.startOf(key)) });
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("}", "to close the map");
    return { kind: "Map", entries, span: this.spanFrom(open) };
  }

  private ifExpr(): Expr {
    const start = this.next();
    const cond = this.expr();
    this.expectKeyword("then", "after the condition of `if`");
    const then = this.expr();
    this.expectKeyword("else", "(an `if` expression needs both branches)");
    const otherwise = this.expr();
    return { kind: "If", cond, then, else: otherwise, span: this.spanFrom(start) };
  }

  private letExpr(): Expr {
    const start = this.next();
    const name = this.ident("a name after `let`");
    this.expectPunct("=", `after \`let ${name.name}\``);
    const value = this.expr();
    this.expectKeyword("in", `after the value of \`let ${name.name}\` in an expression`);
    const body = this.expr();
    return { kind: "Let", name, value, body, span: this.spanFrom(start) };
  }

  /** `match subject with | p -> body …`, with `body` parsed by `arm` (a value or a tile). */
  protected matchExpr(arm: () => Expr): Expr {
    const start = this.next();
    const subject = this.expr();
    this.expectKeyword("with", "after the subject of `match`");
    const arms: MatchArm[] = [];
    while (this.isPunct("|")) {
      const bar = this.next();
      const pattern = this.pattern();
      this.expectPunct("->", "after the match pattern");
      const body = arm();
      arms.push({ kind: "MatchArm", pattern, body, span: this.spanFrom(bar) });
    }
    if (arms.length === 0) this.expected("a match arm `| Pattern -> …`");
    return { kind: "Match", subject, arms, span: this.spanFrom(start) };
  }

  /** `_`, `x`, `Done`, `Loaded(p)`, `(a, b)` (language.md §1.9: no literal patterns). */
  protected pattern(): Pattern {
    const t = this.peek();
    if (!this.enter()) {
      this.leave();
      return { kind: "WildcardPattern", span: tokenSpan(t) };
    }
    let p: Pattern;
    if (t.kind === "ident" && t.text === "_") {
      this.next();
      p = { kind: "WildcardPattern", span: tokenSpan(t) };
    } else if (t.kind === "ident") {
      const name = this.ident("a pattern");
      if (this.isPunct("(")) {
        this.next();
        const args: Pattern[] = [];
        while (!this.isPunct(")") && !this.atEof()) {
          args.push(this.pattern());
          if (!this.isPunct(",")) break;
          this.next();
        }
        this.expectPunct(")", `to close the payload of \`${name.name}\``);
        p = { kind: "VariantPattern", variant: name, args, span: this.spanFrom(t) };
      } else if (isCapitalized(name.name)) {
        p = { kind: "VariantPattern", variant: name, span: name.span };
      } else {
        p = { kind: "BindPattern", name, span: name.span };
      }
    } else if (t.kind === "punct" && t.text === "(") {
      this.next();
      const items: Pattern[] = [this.pattern()];
      while (this.isPunct(",")) {
        this.next();
        items.push(this.pattern());
      }
      this.expectPunct(")", "to close the tuple pattern");
      if (items.length < 2 && this.error === null) {
        this.fail(`a tuple pattern needs at least two items${this.context}`, t);
      }
      p = { kind: "TuplePattern", items, span: this.spanFrom(t) };
    } else if (
      t.kind === "string" ||
      t.kind === "number" ||
      (t.kind === "keyword" && (t.text === "true" || t.text === "false"))
    ) {
      this.fail(
        `literal patterns are not supported${this.context}: match on a union variant, or use \`if … then … else\``,
        t,
      );
      p = { kind: "WildcardPattern", span: tokenSpan(t) };
    } else {
      this.expected("a pattern (`_`, a variant such as `Some(x)`, a name or a tuple)");
      p = { kind: "WildcardPattern", span: tokenSpan(t) };
    }
    this.leave();
    return p;
  }
}
