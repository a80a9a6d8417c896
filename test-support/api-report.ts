/**
 * The API report of a package's built entries: every export with its kind, each function's
 * signatures, each class's public members, each interface's fields, read off `dist/*.d.ts` with the
 * TypeScript compiler; and the types an exported signature mentions that the package declares but
 * does not export. {@link pinApi} pins it per entry in `api/<entry>.api.txt`
 * (`KUMIKI_UPDATE_API=1` rewrites the files); every package of the repository runs it.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** A printed type, cut so that a report line stays readable (zod schemas print kilobytes). */
/** Types printed whole (the checker's own cut at about 160 characters falls before the sort). */
const WHOLE = ts.TypeFormatFlags.NoTruncation;

function short(text: string): string {
  const sorted = sortLiteralRuns(text);
  return sorted.length <= 160 ? sorted : `${sorted.slice(0, 157)}…`;
}

/**
 * The checker prints a union of string literals, and the members of a literal-keyed object (a zod
 * enum's), in the order it first met those types, which moves when an unrelated declaration
 * changes (a doc comment in core reordered the MCP report's error kinds). Sorted here, so that a
 * report changes only when the API does.
 */
function sortLiteralRuns(text: string): string {
  const unions = text.replace(/"[^"]*"(?: \| "[^"]*")+/g, (run) => run.split(" | ").sort().join(" | "));
  return unions.replace(/\{ ((?:(?:"[^"]*"|[\w$]+): "[^"]*"; )+)\}/g, (_all, members: string) => {
    const entries = members
      .trim()
      .split(/; (?=(?:"[^"]*"|[\w$]+): ")/)
      .map((m) => m.replace(/;$/, ""));
    return `{ ${entries.sort().join("; ")}; }`;
  });
}

function namesOf(f: string): Set<string> {
  const other = ts.createProgram([f], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
  });
  const c = other.getTypeChecker();
  return new Set(c.getExportsOfModule(c.getSymbolAtLocation(other.getSourceFile(f)!)!).map((e) => e.name));
}

/**
 * The report of one entry `file` of the package built into `dist`; `packageNames` are what the
 * package's entries export (a type one entry mentions counts as exported when any entry exports it).
 */
export function analyse(
  dist: string,
  file: string,
  packageNames: ReadonlySet<string>,
): { report: string; unexported: string[] } {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const moduleSymbol = checker.getSymbolAtLocation(source)!;
  const resolve = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const exports = checker.getExportsOfModule(moduleSymbol);
  const exported = new Set(exports.map(resolve));
  const named = (s: ts.Symbol) => exported.has(s) || packageNames.has(s.name);
  const lines: string[] = [];
  const mentioned = new Map<string, Set<string>>();
  const noteTypes = (node: ts.Node, by: string) => {
    const visit = (n: ts.Node) => {
      if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n)) {
        const target = ts.isTypeReferenceNode(n) ? n.typeName : n.expression;
        const sym = checker.getSymbolAtLocation(target);
        if (sym !== undefined) {
          const r = resolve(sym);
          const decl = r.declarations?.[0];
          const declaredHere =
            decl !== undefined && path.resolve(decl.getSourceFile().fileName).startsWith(dist);
          const isTypeLike =
            (r.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class)) !== 0;
          if (
            declaredHere &&
            isTypeLike &&
            !named(r) &&
            !(decl !== undefined && ts.isTypeParameterDeclaration(decl))
          ) {
            const set = mentioned.get(r.name) ?? new Set<string>();
            set.add(by);
            mentioned.set(r.name, set);
          }
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
  };
  for (const e of [...exports].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const s = resolve(e);
    const decl = s.declarations?.[0];
    const name = e.name;
    if (s.flags & ts.SymbolFlags.Function) {
      const type = checker.getTypeOfSymbol(s);
      for (const sig of type.getCallSignatures())
        lines.push(`function ${name}${short(checker.signatureToString(sig, undefined, WHOLE))}`);
      for (const d of s.declarations ?? []) noteTypes(d, name);
    } else if (s.flags & ts.SymbolFlags.Class) {
      lines.push(`class ${name}`);
      const instance = checker.getDeclaredTypeOfSymbol(s);
      for (const m of checker.getPropertiesOfType(instance).sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const md = m.declarations?.[0];
        if (md === undefined) continue;
        const mods = ts.getCombinedModifierFlags(md);
        if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || m.name.startsWith("#"))
          continue;
        const t = checker.getTypeOfSymbolAtLocation(m, md);
        const sigs = t.getCallSignatures();
        if (sigs.length > 0 && (m.flags & ts.SymbolFlags.Method) !== 0)
          for (const sig of sigs)
            lines.push(`  ${m.name}${short(checker.signatureToString(sig, undefined, WHOLE))}`);
        else lines.push(`  ${m.name}: ${short(checker.typeToString(t, undefined, WHOLE))}`);
        noteTypes(md, `${name}.${m.name}`);
      }
    } else if (s.flags & ts.SymbolFlags.Interface) {
      lines.push(`interface ${name}`);
      const type = checker.getDeclaredTypeOfSymbol(s);
      for (const m of checker.getPropertiesOfType(type).sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const md = m.declarations?.[0];
        const optional = (m.flags & ts.SymbolFlags.Optional) !== 0 ? "?" : "";
        const t =
          md === undefined
            ? "?"
            : checker.typeToString(checker.getTypeOfSymbolAtLocation(m, md), undefined, WHOLE);
        lines.push(`  ${m.name}${optional}: ${short(t)}`);
      }
      for (const d of s.declarations ?? []) noteTypes(d, name);
    } else if (s.flags & ts.SymbolFlags.TypeAlias) {
      lines.push(`type ${name}`);
      for (const d of s.declarations ?? []) noteTypes(d, name);
    } else if (s.flags & ts.SymbolFlags.Variable) {
      lines.push(
        `const ${name}: ${short(checker.typeToString(checker.getTypeOfSymbol(s), undefined, WHOLE))}`,
      );
    } else {
      lines.push(`${decl === undefined ? "export" : ts.SyntaxKind[decl.kind]} ${name}`);
    }
  }
  const unexported = [...mentioned]
    .map(([t, by]) => `${t} (mentioned by ${[...by].sort().join(", ")})`)
    .sort();
  return { report: `${lines.join("\n")}\n`, unexported };
}

/**
 * Pins the public API of the package at `pkg` (its folder): for each entry (name → its `.d.ts` in
 * `dist/`; the first is the main entry), the report equals `api/<name>.api.txt`, and every type the
 * package declares that an exported signature mentions is exported.
 */
export function pinApi(title: string, pkg: string, entries: Readonly<Record<string, string>>): void {
  const dist = path.join(pkg, "dist");
  let packageNames: Set<string> | undefined;
  // A type counts as exported when any entry of the package exports it: the language's syntax tree
  // is named from core's ./lang, an op from ./ops, wherever a signature mentions them.
  const mainNames = () => {
    packageNames ??= new Set(Object.values(entries).flatMap((f) => [...namesOf(path.join(dist, f))]));
    return packageNames;
  };
  describe(title, () => {
    for (const [entry, file] of Object.entries(entries)) {
      const full = path.join(dist, file);
      const pinned = path.join(pkg, "api", `${entry}.api.txt`);

      it(`${entry}: matches the committed report (api/${entry}.api.txt)`, () => {
        const { report } = analyse(dist, full, mainNames());
        if (process.env.KUMIKI_UPDATE_API === "1") {
          fs.mkdirSync(path.dirname(pinned), { recursive: true });
          fs.writeFileSync(pinned, report);
        }
        expect(fs.existsSync(pinned), `missing ${pinned}: run with KUMIKI_UPDATE_API=1`).toBe(true);
        expect(report).toBe(fs.readFileSync(pinned, "utf8"));
      });

      it(`${entry}: exports every type its signatures mention`, () => {
        expect(analyse(dist, full, mainNames()).unexported).toEqual([]);
      });
    }
  });
}
