/**
 * The parser's state: the tokens, the position, and the recursion guard shared by every grammar
 * file.
 */
import type { Ident, Node } from "../ast.js";
import type { Token } from "../lexer.js";
import type { ParseError } from "../parse-error.js";
import type { Span } from "../span.js";

/** How deep parsing may recurse before it refuses. */
export const MAX_DEPTH = 256;

/**
 * How tall a definition's tree may be (every consumer walks it recursively). Recursion depth alone
 * does not bound it: operator and member chains build in loops, and a chain of parenthesized
 * chains stacks them. The corpus' tallest definition is 15 levels.
 */
export const MAX_HEIGHT = 1000;

/** A node under construction (optional properties are added only when present). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A position: what a span starts at. */
export interface Pos {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

/** How a token is named in a message. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case "eof":
      return "end of input";
    case "keyword":
      return `keyword \`${t.text}\``;
    case "number":
      return `number \`${t.text}\``;
    case "duration":
      return `duration \`${t.text}\``;
    case "string": {
      const shown = JSON.stringify(t.text);
      return `string ${shown.length > 24 ? `${shown.slice(0, 22)}…"` : shown}`;
    }
    default:
      return `\`${t.text}\``;
  }
}

/**
 * The token cursor and the error state shared by every part of the parser.
 *
 * Errors are values: the first failure is recorded and the cursor jumps to the end-of-input
 * token, so every loop (each of which stops at end of input) unwinds promptly and every later
 * failure is ignored. What the parse functions return after a failure is a placeholder that
 * nobody sees.
 */
export class ParserState {
  protected readonly tokens: Token[];
  protected pos = 0;
  protected depth = 0;
  /** End offset of the last consumed token: where a node being finished ends. */
  protected lastEnd = 0;
  /** ` in tile \`App\`` while inside a definition, for messages. */
  protected context = "";
  error: ParseError | null = null;
  private readonly eofIndex: number;
  /** The deepest recursion and the longest chain seen in the current definition. */
  protected peakDepth = 0;
  protected peakChain = 0;
  /** Where a parenthesized expression really starts: the node itself carries no parentheses. */
  private readonly parenStart = new WeakMap<object, Pos>();

  constructor(tokens: Token[]) {
    this.tokens = tokens;
    this.eofIndex = tokens.length - 1;
  }

  protected peek(k = 0): Token {
    return this.tokens[this.pos + k] ?? this.tokens[this.eofIndex]!;
  }

  protected next(): Token {
    const t = this.tokens[this.pos] ?? this.tokens[this.eofIndex]!;
    if (this.pos < this.eofIndex) this.pos++;
    if (t.kind !== "eof") this.lastEnd = t.end;
    return t;
  }

  protected atEof(): boolean {
    return this.peek().kind === "eof";
  }

  protected isPunct(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === "punct" && t.text === text;
  }

  protected isKeyword(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === "keyword" && t.text === text;
  }

  protected isIdent(text?: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === "ident" && (text === undefined || t.text === text);
  }

  /** An identifier or a keyword: what may stand where only a name can (field keys, members). */
  protected isName(k = 0): boolean {
    const kind = this.peek(k).kind;
    return kind === "ident" || kind === "keyword";
  }

  /** Records the first error (with its position appended) and skips to the end of input. */
  protected fail(message: string, at: Token | Pos = this.peek()): void {
    if (this.error === null) {
      const tok = "kind" in at ? at : undefined;
      // A lexical error is reported as itself wherever the parser stumbles on it.
      const msg = tok?.kind === "error" ? tok.text : message;
      const end = tok !== undefined ? Math.max(tok.end, tok.offset) : at.offset;
      const span: Span = { offset: at.offset, end, line: at.line, column: at.column };
      this.error = { message: `${msg} at ${span.line}:${span.column}`, span };
    }
    this.pos = this.eofIndex;
  }

  /** Fails with "expected WHAT<context>, found TOKEN". */
  protected expected(what: string, at: Token = this.peek()): void {
    this.fail(`expected ${what}${this.context}, found ${describeToken(at)}`, at);
  }

  /** Consumes punctuation `text`, or fails with "expected `text` WHY". */
  protected expectPunct(text: string, why: string): Token {
    if (this.isPunct(text)) return this.next();
    this.expected(`\`${text}\` ${why}`);
    return this.peek();
  }

  protected expectKeyword(text: string, why: string): Token {
    if (this.isKeyword(text)) return this.next();
    this.expected(`\`${text}\` ${why}`);
    return this.peek();
  }

  /** Consumes an identifier as an Ident node (keywords allowed when `keywordOk`). */
  protected ident(what: string, keywordOk = false): Ident {
    const t = this.peek();
    if (t.kind === "ident" || (keywordOk && t.kind === "keyword")) {
      this.next();
      return { kind: "Ident", name: t.text, span: tokenSpan(t) };
    }
    this.expected(what);
    return { kind: "Ident", name: "", span: tokenSpan(t) };
  }

  /** A span from `start` to the end of the last consumed token. */
  protected spanFrom(start: Pos): Span {
    const end = Math.max(this.lastEnd, start.offset);
    return { offset: start.offset, end, line: start.line, column: start.column };
  }

  /** Where `node` starts, counting the parentheses it was written in. */
  protected startOf(node: Node): Pos {
    return this.parenStart.get(node) ?? node.span;
  }

  protected markParenthesized(node: Node, open: Pos): void {
    this.parenStart.set(node, open);
  }

  /** Enters one nesting level; false (after failing) when the tree would be too deep. */
  protected enter(extra = 0): boolean {
    this.depth++;
    if (this.depth > this.peakDepth) this.peakDepth = this.depth;
    if (this.depth + extra > MAX_DEPTH) {
      this.fail(
        `nesting is deeper than ${MAX_DEPTH} levels${this.context}; move part of it into a definition of its own`,
      );
      return false;
    }
    return true;
  }

  protected leave(): void {
    this.depth--;
  }

  /** Fails when a chain built in a loop (`a + b + …`, `a.b.c…`) would make the tree too deep. */
  protected widen(built: number): boolean {
    if (built > this.peakChain) this.peakChain = built;
    if (this.depth + built > MAX_DEPTH) {
      this.fail(
        `an operator or member chain is nested deeper than ${MAX_DEPTH} levels${this.context}; split it up`,
      );
      return false;
    }
    return true;
  }
}

export function tokenSpan(t: Token): Span {
  return { offset: t.offset, end: t.end, line: t.line, column: t.column };
}

/** The height of a tree of plain objects and arrays (arrays do not count as a level), iteratively. */
export function treeHeight(root: object): number {
  let max = 0;
  const nodes: object[] = [root];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const d = depths.pop()!;
    if (d > max) max = d;
    for (const key in node) {
      if (key === "span") continue;
      const v = (node as Record<string, unknown>)[key];
      if (v === null || typeof v !== "object") continue;
      if (Array.isArray(v)) {
        for (const item of v) {
          if (item !== null && typeof item === "object") {
            nodes.push(item);
            depths.push(d + 1);
          }
        }
      } else {
        nodes.push(v);
        depths.push(d + 1);
      }
    }
  }
  return max;
}
