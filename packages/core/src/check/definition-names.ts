/**
 * The base of one definition's checker: its state (the definition, the type resolver, the sites answered), references and what an unresolved one is reported as (by the table in unresolved-names.ts), type expressions, and the abstract steps the layers above define.
 */
import type { Ident, TypeExpr } from "../lang/ast.js";
import type { ReferenceSite } from "../lang/references.js";
import type { NameSuggestion } from "../lang/similarity.js";
import type { Span } from "../lang/span.js";
import { GENERIC_TYPES, PRIMITIVE_TYPES } from "../lang/stdlib.js";
import type { CheckContext } from "./context.js";
import { type Env, localNames } from "./definition-support.js";
import type { CheckInput } from "./graph.js";
import { renamePatch } from "./patch.js";
import { lazyTy, type Ty, TypeResolver } from "./types.js";
import { type NameQuestion, unresolvedRule } from "./unresolved-names.js";

/**
 * One definition's checker, first link of a chain (names → values → expressions → statements →
 * DefinitionChecker in definition.ts): a class per file, each adding one family of checks, so the
 * checker is one object walking one definition, as it was when it was one file.
 */
export abstract class NameChecks {
  protected readonly node: CheckInput;

  protected readonly types: TypeResolver;

  /** Offsets of the sites this walk has answered for; the rest are answered by their role. */
  protected readonly seen = new Set<number>();

  constructor(protected readonly ctx: CheckContext) {
    this.node = ctx.node;
    this.types = new TypeResolver(ctx);
  }

  // ───────────── references ─────────────

  /**
   * The definition the name at `id` resolves to. A name reference extraction does not report is
   * not a reference (a local, a built-in) and resolves to nothing without a diagnostic; a reported
   * name that resolves to nothing is reported by {@link unresolved}.
   */
  protected ref(
    id: Ident | { readonly name: string; readonly span: Span },
    env?: Env,
  ): CheckInput | undefined {
    const site = this.ctx.siteAt(this.node, id.span.offset);
    if (site === undefined) return undefined;
    this.seen.add(id.span.offset);
    const res = this.ctx.resolve(this.node, id);
    if (res.target !== undefined) return res.target;
    this.unresolved(site, env);
    return undefined;
  }

  /** Reports a site that resolves to nothing, by what its position says it names. */
  protected unresolved(site: ReferenceSite, env?: Env): void {
    const routePath = site.role === "route" ? this.routePathOf(site.span) : undefined;
    const q: NameQuestion = {
      site,
      def: this.node.def,
      where: `${this.node.def.layer}.${this.node.def.name.name}`,
      locals: localNames(env?.scope ?? null),
      ...(routePath === undefined ? {} : { routePath }),
    };
    const rule = unresolvedRule(q);
    if (rule === undefined) return;
    const s = this.ctx.suggest(site.name, rule.layers(q), rule.extra?.(q) ?? []);
    this.nameError(rule.code, rule.kind, site.span, site.name, s, rule.message(q), rule.hint(q));
  }

  protected nameError(
    code: string,
    kind: string,
    span: Span,
    written: string,
    suggestion: NameSuggestion | undefined,
    what: string,
    otherwise: string,
  ): void {
    const todo =
      suggestion === undefined ? `: ${otherwise}` : `: did you mean "${suggestion.name}"? (or ${otherwise})`;
    const autoPatch =
      suggestion === undefined ? undefined : renamePatch(this.node, span, written, suggestion.name);
    this.ctx.report(code, span, `${what}${todo}`, {
      kind,
      ...(suggestion !== undefined ? { suggestion } : {}),
      ...(autoPatch !== undefined ? { autoPatch } : {}),
    });
  }

  protected routePathOf(span: Span): string | undefined {
    const def = this.node.def;
    const routes = def.kind === "AppDef" ? def.routes : def.kind === "TileDef" ? def.subRoutes : undefined;
    for (const r of routes ?? [])
      if (r.kind === "Route" && r.target.span.offset === span.offset) return r.path.value;
    return undefined;
  }

  /** Sites the walk did not reach (test bodies, unusual positions): answered by role alone. */
  protected remainingSites(): void {
    const { sites, targets } = this.node;
    for (let i = 0; i < sites.length; i++) {
      const site = sites[i]!;
      if (this.seen.has(site.span.offset)) continue;
      const t = targets[i];
      if (t !== null && t !== undefined && this.ctx.get(t) !== undefined) continue;
      this.unresolved(site);
    }
  }

  // ───────────── types ─────────────

  protected typeExpr(t: TypeExpr, params: ReadonlySet<string> = new Set()): void {
    switch (t.kind) {
      case "TypeRef": {
        const name = t.name.name;
        const args = t.args ?? [];
        if (!params.has(name)) {
          const target = this.ref(t.name);
          const arity = GENERIC_TYPES.get(name);
          if (target !== undefined && target.def.kind === "TypeDef") {
            const want = target.def.params.length;
            if (want !== args.length) this.typeArity(t, name, want, args.length);
          } else if (
            target === undefined &&
            arity !== undefined &&
            arity !== "variadic" &&
            arity !== args.length
          ) {
            this.typeArity(t, name, arity, args.length);
          } else if (target === undefined && arity === "variadic" && args.length === 0) {
            this.typeArity(t, name, 1, 0);
          } else if (target === undefined && PRIMITIVE_TYPES.has(name) && args.length > 0) {
            this.typeArity(t, name, 0, args.length);
          }
        }
        for (const a of args) this.typeExpr(a, params);
        return;
      }
      case "RecordType":
        for (const f of t.fields) if (f.value !== undefined) this.typeExpr(f.value, params);
        return;
      case "UnionType":
        for (const v of t.variants) for (const p of v.payload ?? []) this.typeExpr(p, params);
        return;
      case "NominalType":
        this.typeExpr(t.inner, params);
        return;
      case "RefinedType":
        this.typeExpr(t.base, params);
        return;
    }
  }

  protected typeArity(t: TypeExpr, name: string, want: number, got: number): void {
    this.ctx.report(
      "E0210",
      t.span,
      `Type "${name}" expects ${want} type argument(s) but got ${got}: write ${name}(…) with ${want}`,
    );
  }

  protected resolveType(t: TypeExpr, within: CheckInput = this.node): Ty {
    return lazyTy(() => this.types.resolve(within, t));
  }

  protected typeError(span: Span, message: string): void {
    this.ctx.report("E0201", span, message, { kind: "type-mismatch" });
  }
}
