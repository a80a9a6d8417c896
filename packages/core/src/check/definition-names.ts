/**
 * One definition's walk (the state every check of it shares: the definition, the type resolver,
 * the sites answered) and the checks of names: references and what an unresolved one is reported
 * as (by the table in unresolved-names.ts), type expressions. The checks are functions of the walk,
 * one family per file: names here, then values, expressions, statements, and definition.ts, which
 * walks one definition by its kind.
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

/** What every check of one definition reads and writes. */
export interface Walk {
  readonly ctx: CheckContext;
  /** The definition checked. */
  readonly node: CheckInput;
  readonly types: TypeResolver;
  /** Offsets of the sites this walk has answered for; the rest are answered by their role. */
  readonly seen: Set<number>;
}

/** A new walk of `ctx`'s definition. */
export function newWalk(ctx: CheckContext): Walk {
  return { ctx, node: ctx.node, types: new TypeResolver(ctx), seen: new Set() };
}

// ───────────── references ─────────────

/**
 * The definition the name at `id` resolves to. A name reference extraction does not report is
 * not a reference (a local, a built-in) and resolves to nothing without a diagnostic; a reported
 * name that resolves to nothing is reported by {@link unresolved}.
 */
export function ref(
  walk: Walk,
  id: Ident | { readonly name: string; readonly span: Span },
  env?: Env,
): CheckInput | undefined {
  const site = walk.ctx.siteAt(walk.node, id.span.offset);
  if (site === undefined) return undefined;
  walk.seen.add(id.span.offset);
  const res = walk.ctx.resolve(walk.node, id);
  if (res.target !== undefined) return res.target;
  unresolved(walk, site, env);
  return undefined;
}

/** Reports a site that resolves to nothing, by what its position says it names. */
export function unresolved(walk: Walk, site: ReferenceSite, env?: Env): void {
  const routePath = site.role === "route" ? routePathOf(walk, site.span) : undefined;
  const q: NameQuestion = {
    site,
    def: walk.node.def,
    where: `${walk.node.def.layer}.${walk.node.def.name.name}`,
    locals: localNames(env?.scope ?? null),
    ...(routePath === undefined ? {} : { routePath }),
  };
  const rule = unresolvedRule(q);
  if (rule === undefined) return;
  const s = walk.ctx.suggest(site.name, rule.layers(q), rule.extra?.(q) ?? []);
  nameError(walk, rule.code, rule.kind, site.span, site.name, s, rule.message(q), rule.hint(q));
}

export function nameError(
  walk: Walk,
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
    suggestion === undefined ? undefined : renamePatch(walk.node, span, written, suggestion.name);
  walk.ctx.report(code, span, `${what}${todo}`, {
    kind,
    ...(suggestion !== undefined ? { suggestion } : {}),
    ...(autoPatch !== undefined ? { autoPatch } : {}),
  });
}

function routePathOf(walk: Walk, span: Span): string | undefined {
  const def = walk.node.def;
  const routes = def.kind === "AppDef" ? def.routes : def.kind === "TileDef" ? def.subRoutes : undefined;
  for (const r of routes ?? [])
    if (r.kind === "Route" && r.target.span.offset === span.offset) return r.path.value;
  return undefined;
}

/** Sites the walk did not reach (test bodies, unusual positions): answered by role alone. */
export function remainingSites(walk: Walk): void {
  const { sites, targets } = walk.node;
  for (let i = 0; i < sites.length; i++) {
    const site = sites[i]!;
    if (walk.seen.has(site.span.offset)) continue;
    const t = targets[i];
    if (t !== null && t !== undefined && walk.ctx.get(t) !== undefined) continue;
    unresolved(walk, site);
  }
}

// ───────────── types ─────────────
export function typeExpr(walk: Walk, t: TypeExpr, params: ReadonlySet<string> = new Set()): void {
  switch (t.kind) {
    case "TypeRef": {
      const name = t.name.name;
      const args = t.args ?? [];
      if (!params.has(name)) {
        const target = ref(walk, t.name);
        const arity = GENERIC_TYPES.get(name);
        if (target !== undefined && target.def.kind === "TypeDef") {
          const want = target.def.params.length;
          if (want !== args.length) typeArity(walk, t, name, want, args.length);
        } else if (
          target === undefined &&
          arity !== undefined &&
          arity !== "variadic" &&
          arity !== args.length
        ) {
          typeArity(walk, t, name, arity, args.length);
        } else if (target === undefined && arity === "variadic" && args.length === 0) {
          typeArity(walk, t, name, 1, 0);
        } else if (target === undefined && PRIMITIVE_TYPES.has(name) && args.length > 0) {
          typeArity(walk, t, name, 0, args.length);
        }
      }
      for (const a of args) typeExpr(walk, a, params);
      return;
    }
    case "RecordType":
      for (const f of t.fields) if (f.value !== undefined) typeExpr(walk, f.value, params);
      return;
    case "UnionType":
      for (const v of t.variants) for (const p of v.payload ?? []) typeExpr(walk, p, params);
      return;
    case "NominalType":
      typeExpr(walk, t.inner, params);
      return;
    case "RefinedType":
      typeExpr(walk, t.base, params);
      return;
  }
}

function typeArity(walk: Walk, t: TypeExpr, name: string, want: number, got: number): void {
  walk.ctx.report(
    "E0210",
    t.span,
    `Type "${name}" expects ${want} type argument(s) but got ${got}: write ${name}(…) with ${want}`,
  );
}

export function resolveType(walk: Walk, t: TypeExpr, within: CheckInput = walk.node): Ty {
  return lazyTy(() => walk.types.resolve(within, t));
}

export function typeError(walk: Walk, span: Span, message: string): void {
  walk.ctx.report("E0201", span, message, { kind: "type-mismatch" });
}
