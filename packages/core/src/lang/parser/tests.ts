/**
 * `test` definitions (testing.md §8.1): the clauses of each test kind.
 */
import type { BoolLit, Expr, Ident, NumberLit, RecordType, StringLit, TestBody } from "../ast.js";
import type { Token } from "../lexer.js";
import { AppParser } from "./app.js";
import { placeholderExpr } from "./expressions.js";
import { tokenSpan } from "./state.js";

const TEST_KINDS = ["reducer-test", "tile-test", "property-test", "episode-test"] as const;

/** Clause names per test kind; `required` ones must all be written, each clause at most once. */
const CLAUSES: Record<(typeof TEST_KINDS)[number], { all: readonly string[]; required: readonly string[] }> =
  {
    "reducer-test": { all: ["given", "expect"], required: ["given", "expect"] },
    "tile-test": { all: ["given", "expect"], required: ["given", "expect"] },
    "property-test": {
      all: ["for-all", "given", "invariant", "count", "shrink"],
      required: ["for-all", "given", "invariant"],
    },
    "episode-test": { all: ["load", "mocks", "expect"], required: ["load", "expect"] },
  };

/** The body of a `test` definition (testing.md §8). */
export class TestParser extends AppParser {
  protected testBody(): TestBody {
    const kindTok = this.peek();
    const kind = TEST_KINDS.find((k) => kindTok.kind === "ident" && kindTok.text === k);
    if (kind === undefined) {
      this.expected(`a test kind (${TEST_KINDS.join(", ")}) after \`=\``);
      return {
        kind: "EpisodeTest",
        load: emptyString(kindTok),
        expect: placeholderExpr(kindTok),
        span: tokenSpan(kindTok),
      };
    }
    this.next();
    let target: Ident | undefined;
    if (kind === "reducer-test" || kind === "tile-test") {
      target = this.ident(
        `the name of the ${kind === "reducer-test" ? "reducer" : "tile"} under test after \`${kind}\``,
      );
    }
    const { all, required } = CLAUSES[kind];
    const values = new Map<string, Expr | RecordType | StringLit | NumberLit | BoolLit>();
    while (this.peek().kind === "ident" && all.includes(this.peek().text) && this.isPunct("=", 1)) {
      const key = this.next();
      if (values.has(key.text)) {
        this.fail(`\`${key.text} =\` is written twice${this.context}`, key);
        break;
      }
      this.next();
      values.set(key.text, this.clauseValue(kind, key));
    }
    for (const r of required) {
      if (!values.has(r)) {
        const others = all.filter((c) => !values.has(c)).map((c) => `\`${c} =\``);
        this.expected(`${others.join(" or ")} (a ${kind} needs \`${r} =\`)`);
        break;
      }
    }
    const span = this.spanFrom(kindTok);
    const get = <T>(k: string): T => values.get(k) as T;
    switch (kind) {
      case "reducer-test":
        return { kind: "ReducerTest", target: target!, given: get("given"), expect: get("expect"), span };
      case "tile-test":
        return { kind: "TileTest", target: target!, given: get("given"), expect: get("expect"), span };
      case "property-test":
        return {
          kind: "PropertyTest",
          forAll: get("for-all"),
          given: get("given"),
          invariant: get("invariant"),
          ...(values.has("count") ? { count: get<NumberLit>("count") } : {}),
          ...(values.has("shrink") ? { shrink: get<BoolLit>("shrink") } : {}),
          span,
        };
      case "episode-test":
        return {
          kind: "EpisodeTest",
          load: get("load"),
          ...(values.has("mocks") ? { mocks: get<Expr>("mocks") } : {}),
          expect: get("expect"),
          span,
        };
    }
  }

  private clauseValue(kind: string, key: Token): Expr | RecordType | StringLit | NumberLit | BoolLit {
    const t = this.peek();
    switch (key.text) {
      case "expect":
        return kind === "tile-test" ? this.tileExpr() : this.expr();
      case "for-all":
        return this.recordType("a `for-all` variable");
      case "load":
        if (t.kind !== "string") {
          this.expected("the episode log's path as a string after `load =`");
          return emptyString(t);
        }
        this.next();
        return { kind: "String", value: t.text, span: tokenSpan(t) };
      case "count":
        if (t.kind !== "number") {
          this.expected("a number of trials after `count =`");
          return { kind: "Number", raw: "0", value: 0, span: tokenSpan(t) };
        }
        this.next();
        return { kind: "Number", raw: t.text, value: t.value, span: tokenSpan(t) };
      case "shrink":
        if (!(this.isKeyword("true") || this.isKeyword("false"))) {
          this.expected("`true` or `false` after `shrink =`");
          return { kind: "Bool", value: true, span: tokenSpan(t) };
        }
        this.next();
        return { kind: "Bool", value: t.text === "true", span: tokenSpan(t) };
      default:
        return this.expr();
    }
  }
}

function emptyString(at: Token): StringLit {
  return { kind: "String", value: "", span: tokenSpan(at) };
}
