/**
 * The lexer: one pass over char codes, tokens with spans, lexical errors as values.
 */
import type { ParseError } from "./parse-error.js";
import type { Span } from "./span.js";

/**
 * The kinds of token:
 * - `ident`: a name (`todos`, `sort-by`, `TodoRow`, `_`); `text` is the name.
 * - `keyword`: a reserved word (language.md §1.2.2); `text` is the word.
 * - `number`: `12`, `1.50`; `text` is the source text, `value` the number.
 * - `string`: `"…"`; `text` is the decoded value, the span covers the quotes.
 * - `duration`: `300ms`, `1s`, `5m`; `text` is the source text, `value` the amount, `unit` the unit.
 * - `dollar`: `$1`, `$el`; `text` includes the `$`.
 * - `punct`: an operator or delimiter; `text` is it (`:=`, `->>`, `(`, `#`, `@`, …).
 * - `eof`: the end of the input (always the last token).
 * - `error`: the lexer stopped here; `text` is the message (without position). It is followed only
 *   by `eof`.
 */
export type TokenKind =
  | "ident"
  | "keyword"
  | "number"
  | "string"
  | "duration"
  | "dollar"
  | "punct"
  | "eof"
  | "error";

/** One token. All tokens have the same shape. */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** The amount of a `number` or `duration`; 0 otherwise. */
  readonly value: number;
  /** The unit of a `duration` (`"ms"`, `"s"`, `"m"`); `""` otherwise. */
  readonly unit: string;
  /** UTF-16 offset of the first character. */
  readonly offset: number;
  /** UTF-16 offset one past the last character. */
  readonly end: number;
  /** 1-based line of `offset`. */
  readonly line: number;
  /** 1-based column of `offset` (UTF-16 code units). */
  readonly column: number;
  /** For an opening bracket, the index of its matching closing bracket (-1 when unmatched or not one). */
  pair: number;
}

/** The tokens of a source text, ending with `eof` (after an `error` token when lexing stopped). */
export interface LexResult {
  readonly tokens: Token[];
  /** The first lexical error, when there is one (also present as an `error` token). */
  readonly error?: ParseError;
}

/** Reserved words (language.md §1.2.2; `test` is reserved by testing.md). */
export const KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "slot",
  "effect",
  "reducer",
  "tile",
  "fn",
  "app",
  "test",
  "nominal",
  "where",
  "when",
  "for",
  "in",
  "let",
  "if",
  "then",
  "else",
  "match",
  "with",
  "on",
  "do",
  "emit",
  "cap",
  "out",
  "policy",
  "retry",
  "true",
  "false",
  "fresh",
  "self",
  "now",
  "null",
]);

/** The longest identifier the language allows (language.md §1.2). */
export const MAX_IDENTIFIER_LENGTH = 32;

const C_TAB = 9;
const C_LF = 10;
const C_VT = 11;
const C_FF = 12;
const C_CR = 13;
const C_SPACE = 32;
const C_BANG = 33;
const C_QUOTE = 34;
const C_HASH = 35;
const C_DOLLAR = 36;
const C_PERCENT = 37;
const C_AMP = 38;
const C_LPAREN = 40;
const C_RPAREN = 41;
const C_STAR = 42;
const C_PLUS = 43;
const C_COMMA = 44;
const C_MINUS = 45;
const C_DOT = 46;
const C_SLASH = 47;
const C_0 = 48;
const C_9 = 57;
const C_COLON = 58;
const C_SEMI = 59;
const C_LT = 60;
const C_EQ = 61;
const C_GT = 62;
const C_AT = 64;
const C_LBRACKET = 91;
const C_BACKSLASH = 92;
const C_RBRACKET = 93;
const C_UNDERSCORE = 95;
const C_LBRACE = 123;
const C_PIPE = 124;
const C_RBRACE = 125;
const C_BOM = 0xfeff;

function isDigit(c: number): boolean {
  return c >= C_0 && c <= C_9;
}

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === C_UNDERSCORE;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c) || c === C_MINUS;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** How a character is shown in a message: itself when printable, else its code point. */
export function describeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0) || (cp >= 0xd800 && cp <= 0xdfff)) {
    return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  }
  return ch === "`" ? '"`"' : `\`${ch}\``;
}

/**
 * Splits Kumiki source into tokens in one pass over its character codes. Whitespace and `#`
 * comments are skipped; a `#` directly between a name (or `)`/`]`/`}`) and a name is the selector
 * punctuation of `Tile#id`, not a comment. `-` continues an identifier when a name character
 * follows it (`sort-by`, `http-401`), so subtraction needs spaces. Never throws: a lexical error
 * ends the tokens with an `error` token and is returned as `error`.
 */
export function tokenize(source: string): LexResult {
  const tokens: Token[] = [];
  const n = source.length;
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const openers: number[] = [];

  while (i < n) {
    const c = source.charCodeAt(i);

    if (c === C_SPACE || c === C_TAB || c === C_CR) {
      i++;
      continue;
    }
    if (c === C_LF) {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === C_VT || c === C_FF || c === C_BOM) {
      i++;
      continue;
    }

    if (c === C_HASH) {
      const prev = i > 0 ? source.charCodeAt(i - 1) : -1;
      const next = i + 1 < n ? source.charCodeAt(i + 1) : -1;
      const attaches =
        (isIdentPart(prev) || prev === C_RPAREN || prev === C_RBRACKET || prev === C_RBRACE) &&
        isIdentStart(next);
      if (attaches) {
        tokens.push(makeToken("punct", "#", 0, "", i, i + 1, line, i - lineStart + 1));
        i++;
        continue;
      }
      const eol = source.indexOf("\n", i);
      i = eol === -1 ? n : eol;
      continue;
    }

    const start = i;
    const column = start - lineStart + 1;

    if (isIdentStart(c)) {
      i++;
      while (i < n) {
        const ch = source.charCodeAt(i);
        if (
          (ch >= 97 && ch <= 122) ||
          (ch >= 65 && ch <= 90) ||
          (ch >= C_0 && ch <= C_9) ||
          ch === C_UNDERSCORE
        ) {
          i++;
        } else if (ch === C_MINUS && i + 1 < n && isIdentPart(source.charCodeAt(i + 1))) {
          i++;
        } else {
          break;
        }
      }
      const text = source.slice(start, i);
      if (i - start > MAX_IDENTIFIER_LENGTH) {
        return lexFailure(
          tokens,
          n,
          `identifier \`${text.slice(0, 40)}${text.length > 40 ? "…" : ""}\` is ${text.length} characters long (at most ${MAX_IDENTIFIER_LENGTH} are allowed)`,
          start,
          line,
          lineStart,
        );
      }
      const kw = c >= 97 && i - start <= 7 && KEYWORDS.has(text);
      tokens.push(makeToken(kw ? "keyword" : "ident", text, 0, "", start, i, line, column));
      continue;
    }

    if (c === C_QUOTE) {
      const startLine = line;
      i++;
      let value = "";
      let chunk = i;
      let closed = false;
      while (i < n) {
        const ch = source.charCodeAt(i);
        if (ch === C_QUOTE) {
          value += source.slice(chunk, i);
          i++;
          closed = true;
          break;
        }
        if (ch === C_LF) {
          i++;
          line++;
          lineStart = i;
          continue;
        }
        if (ch !== C_BACKSLASH) {
          i++;
          continue;
        }
        value += source.slice(chunk, i);
        const escAt = i;
        const e = i + 1 < n ? source.charCodeAt(i + 1) : -1;
        if (e === 110) value += "\n";
        else if (e === 116) value += "\t";
        else if (e === 114) value += "\r";
        else if (e === C_QUOTE) value += '"';
        else if (e === C_BACKSLASH) value += "\\";
        else if (e === 117) {
          // \u{hex}
          if (source.charCodeAt(i + 2) !== C_LBRACE) {
            return lexFailure(tokens, n, "`\\u` must be written `\\u{hex}`", escAt, line, lineStart);
          }
          let j = i + 3;
          while (j < n && isHexDigit(source.charCodeAt(j))) j++;
          if (j === i + 3 || source.charCodeAt(j) !== C_RBRACE || j - (i + 3) > 6) {
            return lexFailure(
              tokens,
              n,
              "malformed `\\u{…}` escape (1 to 6 hex digits in braces)",
              escAt,
              line,
              lineStart,
            );
          }
          const cp = Number.parseInt(source.slice(i + 3, j), 16);
          if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            return lexFailure(
              tokens,
              n,
              `\`\\u{${source.slice(i + 3, j)}}\` is not a Unicode scalar value`,
              escAt,
              line,
              lineStart,
            );
          }
          value += String.fromCodePoint(cp);
          i = j + 1;
          chunk = i;
          continue;
        } else if (e === -1) {
          break;
        } else {
          return lexFailure(
            tokens,
            n,
            `unknown escape \`\\${source[i + 1] ?? ""}\` in a string (use \\n, \\t, \\r, \\", \\\\ or \\u{hex})`,
            escAt,
            line,
            lineStart,
          );
        }
        i += 2;
        chunk = i;
      }
      if (!closed) return lexFailure(tokens, n, "unterminated string", start, startLine, start - column + 1);
      tokens.push(makeToken("string", value, 0, "", start, i, startLine, column));
      continue;
    }

    if (isDigit(c)) {
      i++;
      while (i < n && isDigit(source.charCodeAt(i))) i++;
      let isFloat = false;
      if (i + 1 < n && source.charCodeAt(i) === C_DOT && isDigit(source.charCodeAt(i + 1))) {
        isFloat = true;
        i += 2;
        while (i < n && isDigit(source.charCodeAt(i))) i++;
      }
      if (!isFloat) {
        // A unit glued to an integer is a duration: 300ms, 1s, 5m.
        const u0 = i < n ? source.charCodeAt(i) : -1;
        let unitLen = 0;
        if (u0 === 109 /* m */) unitLen = i + 1 < n && source.charCodeAt(i + 1) === 115 /* s */ ? 2 : 1;
        else if (u0 === 115 /* s */) unitLen = 1;
        if (unitLen > 0) {
          const after = i + unitLen < n ? source.charCodeAt(i + unitLen) : -1;
          // `5m-x` would continue an identifier; only a clean boundary makes a unit.
          const glued =
            isIdentStart(after) ||
            isDigit(after) ||
            (after === C_MINUS && isIdentPart(i + unitLen + 1 < n ? source.charCodeAt(i + unitLen + 1) : -1));
          if (!glued) {
            const amount = Number(source.slice(start, i));
            const unit = unitLen === 2 ? "ms" : u0 === 115 ? "s" : "m";
            i += unitLen;
            tokens.push(makeToken("duration", source.slice(start, i), amount, unit, start, i, line, column));
            continue;
          }
        }
      }
      const raw = source.slice(start, i);
      tokens.push(makeToken("number", raw, Number(raw), "", start, i, line, column));
      continue;
    }

    if (c === C_DOLLAR) {
      i++;
      while (i < n) {
        const ch = source.charCodeAt(i);
        if (ch === C_MINUS) {
          if (i > start + 1 && i + 1 < n && isIdentPart(source.charCodeAt(i + 1))) {
            i++;
            continue;
          }
          break;
        }
        if (!isIdentPart(ch)) break;
        i++;
      }
      if (i === start + 1) {
        return lexFailure(
          tokens,
          n,
          "`$` must be followed by a position or a name (`$1`, `$el`, `$event`)",
          start,
          line,
          lineStart,
        );
      }
      tokens.push(makeToken("dollar", source.slice(start, i), 0, "", start, i, line, column));
      continue;
    }

    const op = punctAt(source, i, c);
    if (op !== undefined) {
      i += op.length;
      tokens.push(makeToken("punct", op, 0, "", start, i, line, column));
      if (c === C_LPAREN || c === C_LBRACKET || c === C_LBRACE) {
        openers.push(tokens.length - 1);
      } else if (c === C_RPAREN || c === C_RBRACKET || c === C_RBRACE) {
        const top = openers[openers.length - 1];
        if (top !== undefined) {
          const opener = tokens[top]!;
          const matches =
            (c === C_RPAREN && opener.text === "(") ||
            (c === C_RBRACKET && opener.text === "[") ||
            (c === C_RBRACE && opener.text === "{");
          if (matches) {
            openers.pop();
            opener.pair = tokens.length - 1;
          }
        }
      }
      continue;
    }

    const cp = source.codePointAt(i) ?? c;
    return lexFailure(
      tokens,
      n,
      `unexpected character ${describeChar(String.fromCodePoint(cp))}`,
      start,
      line,
      lineStart,
    );
  }

  tokens.push(makeToken("eof", "", 0, "", n, n, line, n - lineStart + 1));
  return { tokens };
}

function makeToken(
  kind: TokenKind,
  text: string,
  value: number,
  unit: string,
  offset: number,
  end: number,
  line: number,
  column: number,
): Token {
  return { kind, text, value, unit, offset, end, line, column, pair: -1 };
}

/** The operator at `i` (longest first), or undefined. */
function punctAt(source: string, i: number, c: number): string | undefined {
  const c1 = i + 1 < source.length ? source.charCodeAt(i + 1) : -1;
  switch (c) {
    case C_LPAREN:
      return "(";
    case C_RPAREN:
      return ")";
    case C_LBRACE:
      return "{";
    case C_RBRACE:
      return "}";
    case C_LBRACKET:
      return "[";
    case C_RBRACKET:
      return "]";
    case C_COMMA:
      return ",";
    case C_DOT:
      return ".";
    case C_SEMI:
      return ";";
    case C_AT:
      return "@";
    case C_PLUS:
      return "+";
    case C_STAR:
      return "*";
    case C_SLASH:
      return "/";
    case C_PERCENT:
      return "%";
    case C_MINUS:
      if (c1 === C_GT) return i + 2 < source.length && source.charCodeAt(i + 2) === C_GT ? "->>" : "->";
      return "-";
    case C_COLON:
      return c1 === C_EQ ? ":=" : ":";
    case C_EQ:
      return c1 === C_EQ ? "==" : "=";
    case C_BANG:
      return c1 === C_EQ ? "!=" : "!";
    case C_LT:
      return c1 === C_EQ ? "<=" : "<";
    case C_GT:
      return c1 === C_EQ ? ">=" : ">";
    case C_PIPE:
      return c1 === C_PIPE ? "||" : "|";
    case C_AMP:
      return c1 === C_AMP ? "&&" : "&";
    default:
      return undefined;
  }
}

/** Ends the tokens with an `error` token (then `eof`) and reports it. */
function lexFailure(
  tokens: Token[],
  n: number,
  message: string,
  start: number,
  line: number,
  lineStart: number,
): LexResult {
  const column = start - lineStart + 1;
  const span: Span = { offset: start, end: Math.min(n, start + 1), line, column };
  tokens.push(makeToken("error", message, 0, "", span.offset, span.end, line, column));
  tokens.push(makeToken("eof", "", 0, "", n, n, line, column));
  return { tokens, error: { message: `${message} at ${line}:${column}`, span } };
}
