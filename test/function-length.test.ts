/**
 * No function of the packages' sources runs over 100 lines (issue 39), but the three that read
 * best whole: the lexer's `tokenize` (one state machine), BLAKE3's `compress` (the rounds as the
 * specification writes them) and the OpLog test kit's suite (one `describe` of cases). Read with
 * the TypeScript compiler: every function, method, arrow and accessor body, in lines. A function
 * that grows past the limit fails here, named with its file and line, until it is split.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "..");
const LIMIT = 100;
/** `file:function` of the exempt ones (the suite's `describe` callback is an arrow inside it). */
const EXEMPT = new Set([
  "packages/core/src/lang/lexer.ts:tokenize",
  "packages/core/src/lang/blake3.ts:compress",
  "packages/core/src/testing/op-log-suite.ts:runOpLogSuite",
  "packages/core/src/testing/op-log-suite.ts:(anonymous)",
]);

function sources(): string[] {
  return readdirSync(path.join(root, "packages")).flatMap((p) =>
    readdirSync(path.join(root, "packages", p, "src"), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
      .map((e) => path.relative(root, path.join(e.parentPath, e.name))),
  );
}

function nameOf(n: ts.FunctionLikeDeclaration): string {
  if (n.name !== undefined) return n.name.getText();
  const parent = n.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  return "(anonymous)";
}

/** Every function body of `file` over {@link LIMIT} lines, as `file:name (N lines, line L)`. */
function longFunctions(file: string): { key: string; said: string }[] {
  const text = readFileSync(path.join(root, file), "utf8");
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: { key: string; said: string }[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && "body" in n && n.body !== undefined) {
      const fn = n as ts.FunctionLikeDeclaration;
      const body = fn.body!;
      const first = src.getLineAndCharacterOfPosition(body.getStart()).line;
      const last = src.getLineAndCharacterOfPosition(body.getEnd()).line;
      const lines = last - first + 1;
      if (lines > LIMIT) {
        const key = `${file}:${nameOf(fn)}`;
        out.push({ key, said: `${key} (${lines} lines, line ${first + 1})` });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return out;
}

describe("function length", () => {
  it(`no function of packages/*/src is over ${LIMIT} lines but the exempt ones`, () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(200);
    const long = files.flatMap(longFunctions);
    expect(
      long.filter((l) => !EXEMPT.has(l.key)).map((l) => l.said),
      "split these into functions of their steps",
    ).toEqual([]);
    // The exemptions are still needed (a stale one would hide a new function of the same name).
    expect(new Set(long.map((l) => l.key))).toEqual(EXEMPT);
  });
});
