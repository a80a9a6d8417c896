import type {
  BoolLit,
  Field,
  NumberLit,
  RecordType,
  Refinement,
  StringLit,
  TypeExpr,
  TypeRef,
  VariantDecl,
} from "../ast.js";
import { REFINEMENT_PREDICATES } from "./builtins.js";
import { ParserState, type Pos, tokenSpan } from "./state.js";

const PREDICATE_LIST = [...REFINEMENT_PREDICATES].join(", ");

/** Type expressions (language.md §1.3.1). */
export class TypeParser extends ParserState {
  /** `T`, `{…}`, `nominal T`, `T where p`, `A | B(T)`. */
  protected typeExpr(): TypeExpr {
    const start = this.peek();
    if (!this.enter()) {
      this.leave();
      return placeholderType(start);
    }
    // A union may open with `|` when its variants are written one per line.
    const leadingBar = this.isPunct("|");
    if (leadingBar) this.next();
    const first = this.unionMember();
    let result: TypeExpr = first;
    if (leadingBar || this.isPunct("|")) {
      const variants: VariantDecl[] = [this.asVariant(first)];
      while (this.isPunct("|")) {
        this.next();
        variants.push(this.asVariant(this.unionMember()));
      }
      result = { kind: "UnionType", variants, span: this.spanFrom(start) };
    }
    this.leave();
    return result;
  }

  /** One member of a possible union: `nominal T (where p)*`, or an atom with refinements. */
  private unionMember(): TypeExpr {
    const start = this.peek();
    if (this.isKeyword("nominal")) {
      this.next();
      const inner = this.refined(this.typeAtom());
      return { kind: "NominalType", inner, span: this.spanFrom(start) };
    }
    return this.refined(this.typeAtom());
  }

  private refined(base: TypeExpr): TypeExpr {
    let t = base;
    let built = 0;
    while (this.isKeyword("where")) {
      if (!this.widen(++built)) break;
      this.next();
      const refinement = this.refinement();
      t = { kind: "RefinedType", base: t, refinement, span: this.spanFrom(base.span) };
    }
    return t;
  }

  private asVariant(t: TypeExpr): VariantDecl {
    if (t.kind === "TypeRef") {
      return t.args === undefined
        ? { kind: "VariantDecl", name: t.name, span: t.span }
        : { kind: "VariantDecl", name: t.name, payload: t.args, span: t.span };
    }
    this.fail(
      `a union variant is a name with optional payload types, such as \`Loaded(Post)\`${this.context}`,
      t.span,
    );
    return { kind: "VariantDecl", name: { kind: "Ident", name: "", span: t.span }, span: t.span };
  }

  private typeAtom(): TypeExpr {
    const start = this.peek();
    if (this.isPunct("{")) return this.recordType("a record field");
    if (start.kind !== "ident") {
      this.expected("a type");
      return placeholderType(start);
    }
    const name = this.ident("a type name");
    if (!this.isPunct("(")) return { kind: "TypeRef", name, span: name.span };
    this.next();
    const args: TypeExpr[] = [];
    while (!this.isPunct(")") && !this.atEof()) {
      args.push(this.typeExpr());
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct(")", `to close the type arguments of \`${name.name}\``);
    const ref: TypeRef = { kind: "TypeRef", name, args, span: this.spanFrom(start) };
    return ref;
  }

  /** `{name: T, …}`; also the `for-all` of a property test. */
  protected recordType(what: string): RecordType {
    const start = this.expectPunct("{", `to open ${what}`);
    const fields: Field<TypeExpr>[] = [];
    while (!this.isPunct("}") && !this.atEof()) {
      const key = this.ident(`${what} name`, true);
      this.expectPunct(":", `after the field name \`${key.name}\``);
      const value = this.typeExpr();
      fields.push({ kind: "Field", key, value, span: this.spanFrom(key.span) });
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("}", "to close the record type");
    return { kind: "RecordType", fields, span: this.spanFrom(start) };
  }

  /** `nonempty`, `len-lt(280)`, `between(-1.5, 2)`, `regex("…")`. */
  private refinement(): Refinement {
    const start = this.peek();
    if (start.kind !== "ident" || !REFINEMENT_PREDICATES.has(start.text)) {
      if (start.kind === "ident") {
        this.fail(
          `unknown refinement predicate \`${start.text}\`${this.context} (the registered ones are ${PREDICATE_LIST})`,
          start,
        );
      } else {
        this.expected(`a refinement predicate after \`where\` (${PREDICATE_LIST})`);
      }
      return {
        kind: "Refinement",
        predicate: { kind: "Ident", name: "", span: tokenSpan(start) },
        span: tokenSpan(start),
      };
    }
    const predicate = this.ident("a refinement predicate");
    if (!this.isPunct("(")) return { kind: "Refinement", predicate, span: predicate.span };
    this.next();
    const args: (NumberLit | StringLit | BoolLit)[] = [];
    while (!this.isPunct(")") && !this.atEof()) {
      args.push(this.literal(`a literal argument of \`${predicate.name}\``));
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct(")", `to close the arguments of \`${predicate.name}\``);
    return { kind: "Refinement", predicate, args, span: this.spanFrom(start) };
  }

  /** A number (with an optional leading `-`, kept in `raw`), a string or a bool. */
  protected literal(what: string): NumberLit | StringLit | BoolLit {
    const t = this.peek();
    if (t.kind === "string") {
      this.next();
      return { kind: "String", value: t.text, span: tokenSpan(t) };
    }
    if (t.kind === "keyword" && (t.text === "true" || t.text === "false")) {
      this.next();
      return { kind: "Bool", value: t.text === "true", span: tokenSpan(t) };
    }
    if (t.kind === "punct" && t.text === "-" && this.peek(1).kind === "number") {
      this.next();
      const num = this.next();
      return { kind: "Number", raw: `-${num.text}`, value: -num.value, span: this.spanFrom(t) };
    }
    if (t.kind === "number") {
      this.next();
      return { kind: "Number", raw: t.text, value: t.value, span: tokenSpan(t) };
    }
    this.expected(what);
    return { kind: "Number", raw: "0", value: 0, span: tokenSpan(t) };
  }
}

export function placeholderType(at: Pos): TypeExpr {
  const span = { offset: at.offset, end: at.offset, line: at.line, column: at.column };
  return { kind: "TypeRef", name: { kind: "Ident", name: "", span }, span };
}
