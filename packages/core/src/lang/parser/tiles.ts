import type { Expr, Field, Props, TileCall } from "../ast.js";
import type { Token } from "../lexer.js";
import { BUILTIN_TILES, HANDLER_NAMES, positionalIsTile } from "./builtins.js";
import { EventParser } from "./events.js";
import { placeholderExpr } from "./expressions.js";
import { type Mutable, tokenSpan } from "./state.js";

function isCapitalized(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 65 && c <= 90;
}

/**
 * Tile expressions (language.md §1.7.1). A tile position reads `Name` / `Name(…)` / `Name {…}` as
 * a tile, and `for`, `when`, `if`, `match` as choices of tiles; inside a tile call, positional
 * arguments of a built-in that takes children are tile positions, everything else is a value.
 */
export class TileParser extends EventParser {
  protected tileExpr(): Expr {
    const t = this.peek();
    if (!this.enter()) {
      this.leave();
      return placeholderExpr(t);
    }
    let e: Expr;
    if (t.kind === "keyword" && t.text === "for") {
      this.next();
      const binder = this.ident("a loop variable after `for`");
      this.expectKeyword("in", `after \`for ${binder.name}\``);
      const iterable = this.expr();
      const body = this.tileExpr();
      e = { kind: "For", binder, iterable, body, span: this.spanFrom(t) };
    } else if (t.kind === "keyword" && t.text === "when") {
      this.next();
      this.expectPunct("(", "after `when`");
      const cond = this.expr();
      this.expectPunct(",", "between the condition and the tile of `when(…)`");
      const body = this.tileExpr();
      this.expectPunct(")", "to close `when(…)`");
      e = { kind: "When", cond, body, span: this.spanFrom(t) };
    } else if (t.kind === "keyword" && t.text === "if") {
      this.next();
      const cond = this.expr();
      this.expectKeyword("then", "after the condition of `if`");
      const then = this.tileExpr();
      this.expectKeyword("else", "(a tile `if` needs both branches)");
      const otherwise = this.tileExpr();
      e = { kind: "If", cond, then, else: otherwise, span: this.spanFrom(t) };
    } else if (t.kind === "keyword" && t.text === "match") {
      e = this.matchExpr(() => this.tileExpr());
    } else if (t.kind === "ident") {
      e = this.tileCall();
    } else {
      this.expected("a tile (a call such as `column(…)`, or `when`, `for`, `if`, `match`)");
      e = placeholderExpr(t);
    }
    this.leave();
    return e;
  }

  /** `Name`, `Name(args)`, `Name {props}`, `Name(args) {props}`. */
  protected tileCall(): TileCall {
    const start = this.peek();
    if (!this.enter()) {
      this.leave();
      return {
        kind: "TileCall",
        callee: { kind: "Ident", name: "", span: tokenSpan(start) },
        span: tokenSpan(start),
      };
    }
    const call = this.tileCallNested(start);
    this.leave();
    return call;
  }

  private tileCallNested(start: Token): TileCall {
    const callee = this.ident("a tile name");
    let args: Expr[] | undefined;
    let fields: Field[] | undefined;
    if (this.isPunct("(")) {
      this.next();
      args = [];
      const childIsTile = positionalIsTile(callee.name);
      while (!this.isPunct(")") && !this.atEof()) {
        if (this.isName() && this.isPunct("=", 1)) {
          const key = this.ident("an argument name", true);
          this.next();
          // `onClick=Bump {…}` on a built-in that takes children is an inline tile.
          const head = this.peek();
          const value =
            HANDLER_NAMES.has(key.name) && childIsTile && head.kind === "ident" && isCapitalized(head.text)
              ? this.tileCall()
              : this.argValue(false);
          fields ??= [];
          fields.push({ kind: "Field", key, value, span: this.spanFrom(key.span) });
        } else {
          args.push(this.argValue(childIsTile));
        }
        if (!this.isPunct(",")) break;
        this.next();
      }
      this.expectPunct(")", `to close the arguments of \`${callee.name}\``);
    }
    const props = this.isPunct("{") ? this.props() : undefined;
    const node = { kind: "TileCall", callee } as Mutable<TileCall>;
    if (args !== undefined) node.args = args;
    if (fields !== undefined) node.fields = fields;
    if (props !== undefined) node.props = props;
    node.span = this.spanFrom(start);
    return node;
  }

  /** An argument: a tile where children go, else a value (`for` / `when` are tiles anywhere). */
  private argValue(isTile: boolean): Expr {
    if (this.isKeyword("for") || this.isKeyword("when")) return this.tileExpr();
    if (!isTile) return this.expr();
    if (this.isKeyword("if") || this.isKeyword("match")) return this.tileExpr();
    const head = this.peek();
    if (head.kind === "ident") {
      const next = this.peek(1);
      const opens = next.kind === "punct" && (next.text === "(" || next.text === "{");
      if ((BUILTIN_TILES.has(head.text) && opens) || isCapitalized(head.text)) return this.tileCall();
    }
    return this.expr();
  }

  /** `{key: value, …}` after a tile call: keys are names, values are expressions. */
  private props(): Props {
    const open = this.next();
    const fields: Field[] = [];
    while (!this.isPunct("}") && !this.atEof()) {
      const key = this.ident("a prop name", true);
      this.expectPunct(":", `after the prop name \`${key.name}\` (props are \`name: value\`)`);
      fields.push({ kind: "Field", key, value: this.expr(), span: this.spanFrom(key.span) });
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("}", "to close the props block");
    return { kind: "Props", fields, span: this.spanFrom(open) };
  }
}
