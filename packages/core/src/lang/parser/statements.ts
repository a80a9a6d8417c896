import type { Expr, MatchStmtArm, Statement } from "../ast.js";
import { ExpressionParser } from "./expressions.js";
import { describeToken, tokenSpan } from "./state.js";

/** Statements of a reducer's `do=` block (language.md §1.6.1). */
export class StatementParser extends ExpressionParser {
  /**
   * Whether a statement starts here although no `;` was written (statements are separated by
   * newlines, which the grammar sees only as the start of something that cannot continue the
   * previous statement): `let`, `emit`, `for`, `if`, `match`, a `{` block, or a name followed by
   * `:=`, `[`, `.` or `(`.
   */
  protected statementAhead(): boolean {
    const t = this.peek();
    if (t.kind === "punct") return t.text === "{";
    if (t.kind === "keyword") {
      return (
        t.text === "let" || t.text === "emit" || t.text === "for" || t.text === "if" || t.text === "match"
      );
    }
    if (t.kind === "ident") {
      const t1 = this.peek(1);
      return (
        t1.kind === "punct" && (t1.text === ":=" || t1.text === "[" || t1.text === "." || t1.text === "(")
      );
    }
    return false;
  }

  /** Whether anything that can start a statement is next (after a `;`). */
  private statementStarts(): boolean {
    if (this.statementAhead()) return true;
    const t = this.peek();
    return t.kind === "ident" || (t.kind === "punct" && (t.text === "(" || t.text === "{"));
  }

  /**
   * A statement list: statements separated by `;` or by starting a new statement, stopping at
   * `else`, `|`, `}` or anything else that cannot start a statement. `first` is required.
   */
  protected statementList(): Statement[] {
    const out: Statement[] = [this.statement()];
    while (true) {
      if (this.isPunct(";")) {
        this.next();
        if (!this.statementStarts()) break;
      } else if (!this.statementAhead()) {
        break;
      }
      out.push(this.statement());
    }
    return out;
  }

  /** The body of `then` / `else` / `->` / `for`: a `{ … }` block or a statement list. */
  private statementBody(): Statement[] {
    if (this.isPunct("{")) return this.block();
    return this.statementList();
  }

  private block(): Statement[] {
    this.next();
    const out: Statement[] = [];
    while (!this.isPunct("}") && !this.atEof()) {
      out.push(this.statement());
      if (this.isPunct(";")) {
        this.next();
        continue;
      }
      if (!this.statementAhead()) break;
    }
    this.expectPunct("}", "to close the block");
    return out;
  }

  protected statement(): Statement {
    const t = this.peek();
    if (!this.enter()) {
      this.leave();
      return { kind: "NoopStmt", span: tokenSpan(t) };
    }
    const s = this.statementNested();
    this.leave();
    return s;
  }

  private statementNested(): Statement {
    const t = this.peek();
    if (t.kind === "keyword") {
      switch (t.text) {
        case "for": {
          this.next();
          const binder = this.ident("a loop variable after `for`");
          this.expectKeyword("in", `after \`for ${binder.name}\``);
          const iterable = this.expr();
          const body = this.statementBody();
          return { kind: "ForStmt", binder, iterable, body, span: this.spanFrom(t) };
        }
        case "if": {
          this.next();
          const cond = this.expr();
          this.expectKeyword("then", "after the condition of `if`");
          const then = this.statementBody();
          if (this.isKeyword("else")) {
            this.next();
            const otherwise = this.statementBody();
            return { kind: "IfStmt", cond, then, else: otherwise, span: this.spanFrom(t) };
          }
          return { kind: "IfStmt", cond, then, span: this.spanFrom(t) };
        }
        case "match": {
          this.next();
          const subject = this.expr();
          this.expectKeyword("with", "after the subject of `match`");
          const arms: MatchStmtArm[] = [];
          while (this.isPunct("|")) {
            const bar = this.next();
            const pattern = this.pattern();
            this.expectPunct("->", "after the match pattern");
            const body = this.statementBody();
            arms.push({ kind: "MatchStmtArm", pattern, body, span: this.spanFrom(bar) });
          }
          if (arms.length === 0) this.expected("a match arm `| Pattern -> …`");
          return { kind: "MatchStmt", subject, arms, span: this.spanFrom(t) };
        }
        case "let": {
          this.next();
          const name = this.ident("a name after `let`");
          this.expectPunct("=", `after \`let ${name.name}\``);
          const value = this.expr();
          return { kind: "LetStmt", name, value, span: this.spanFrom(t) };
        }
        case "emit": {
          this.next();
          const effect = this.ident("an effect name after `emit`");
          const args = this.positionalArgs(`the arguments of \`emit ${effect.name}\``);
          return { kind: "EmitStmt", effect, args, span: this.spanFrom(t) };
        }
        default:
          break;
      }
    }
    if (t.kind === "punct" && t.text === "(" && this.isPunct(")", 1)) {
      this.next();
      this.next();
      return { kind: "NoopStmt", span: this.spanFrom(t) };
    }
    if (t.kind === "punct" && t.text === "{") {
      const body = this.block();
      return { kind: "BlockStmt", body, span: this.spanFrom(t) };
    }
    if (t.kind === "ident" && t.text === "stop-timer" && this.isPunct("(", 1)) {
      this.next();
      this.next();
      const timer = this.ident("a timer name in `stop-timer(…)`");
      this.expectPunct(")", "to close `stop-timer(…)`");
      return { kind: "StopTimerStmt", timer, span: this.spanFrom(t) };
    }
    if (t.kind === "ident" && t.text === "panic" && this.isPunct("(", 1)) {
      this.next();
      this.next();
      const message = this.expr();
      this.expectPunct(")", "to close `panic(…)`");
      return { kind: "PanicStmt", message, span: this.spanFrom(t) };
    }
    if (t.kind !== "ident") {
      this.expected("a statement (`target := value`, `emit`, `let`, `if`, `match`, `for`)");
      return { kind: "NoopStmt", span: tokenSpan(t) };
    }
    const target = this.lvalue();
    if (!this.isPunct(":=")) {
      const found = this.peek();
      const hint = found.kind === "punct" && found.text === "=" ? " (assignment is `:=`)" : "";
      this.fail(
        `expected \`:=\` after the assignment target \`${lvalueText(target)}\`${this.context}${hint}, found ${describeToken(found)}`,
        found,
      );
      return { kind: "NoopStmt", span: tokenSpan(t) };
    }
    this.next();
    const value = this.expr();
    return { kind: "AssignStmt", target, value, span: this.spanFrom(t) };
  }

  /** `slot`, `slot.field`, `slot[key]`, chained. */
  private lvalue(): Expr {
    let e: Expr = this.ident("an assignment target");
    let built = 0;
    while (true) {
      if (this.isPunct(".")) {
        if (!this.widen(++built)) break;
        this.next();
        const property = this.ident("a field name after `.`", true);
        e = { kind: "Member", object: e, property, span: this.spanFrom(e.span) };
      } else if (this.isPunct("[")) {
        if (!this.widen(++built)) break;
        this.next();
        const index = this.expr();
        this.expectPunct("]", "to close the index");
        e = { kind: "Index", object: e, index, span: this.spanFrom(e.span) };
      } else {
        break;
      }
    }
    return e;
  }
}

function lvalueText(e: Expr): string {
  switch (e.kind) {
    case "Ident":
      return e.name;
    case "Member":
      return `${lvalueText(e.object)}.${e.property.name}`;
    case "Index":
      return `${lvalueText(e.object)}[…]`;
    default:
      return "…";
  }
}
