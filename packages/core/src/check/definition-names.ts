/**
 * The base of one definition's checker: its state (the definition, the type resolver, the sites answered), references and what an unresolved one is reported as (the table of errors.md's E01xx by position), type expressions, and the abstract steps the layers above define.
 */
import type { Ident, TypeExpr } from "../lang/ast.js";
import { BUILTIN_TILES } from "../lang/parser/builtins.js";
import type { ReferenceSite } from "../lang/references.js";
import type { NameSuggestion } from "../lang/similarity.js";
import type { Span } from "../lang/span.js";
import {
  BUILTIN_CALLS,
  BUILTIN_EFFECTS,
  DOMAIN_TYPES,
  GENERIC_TYPES,
  PRIMITIVE_TYPES,
  RUN_REDUCER,
  UNIMPLEMENTED_CALLS,
} from "../lang/stdlib.js";
import type { CheckContext } from "./context.js";
import { describe, type Env, isCapitalized, localNames } from "./definition-support.js";
import type { CheckInput } from "./graph.js";
import { renamePatch } from "./patch.js";
import { lazyTy, type Ty, TypeResolver } from "./types.js";

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
    const name = site.name;
    const span = site.span;
    const where = `${this.node.def.layer}.${this.node.def.name.name}`;
    switch (site.role) {
      case "variant":
      case "theme":
        return;
      case "expr":
      case "shorthand": {
        // errors.md E0103: the candidates are the slots and the bindings in scope (a fn written
        // bare is not a value, so it is no repair).
        const s = this.ctx.suggest(
          name,
          site.layers.includes("slot") ? ["slot"] : [],
          localNames(env?.scope ?? null),
        );
        this.nameError(
          "E0103",
          "undef-ref",
          span,
          name,
          s,
          `Reference to undefined name "${name}" in ${where}`,
          "declare a slot of that name or bind it",
        );
        return;
      }
      case "assign":
      case "test-slot": {
        if (name === "route") return;
        const s = this.ctx.suggest(name, ["slot"]);
        this.nameError(
          "E0103",
          "undef-slot",
          span,
          name,
          s,
          site.role === "assign"
            ? `Assignment to undefined slot "${name}" in ${where}`
            : `Test ${where} names undefined slot "${name}"`,
          "declare the slot",
        );
        return;
      }
      case "bind": {
        const s = this.ctx.suggest(name, ["slot"]);
        this.nameError(
          "E0103",
          "undef-ref",
          span,
          name,
          s,
          `Reference to undefined slot "${name}" in the bind= of ${where}`,
          "declare the slot",
        );
        return;
      }
      case "call": {
        if (BUILTIN_CALLS.has(name) || UNIMPLEMENTED_CALLS.has(name) || name === RUN_REDUCER) return;
        const s = this.ctx.suggest(name, ["fn"], BUILTIN_CALLS.keys());
        this.nameError(
          "E0116",
          "undef-call",
          span,
          name,
          s,
          `Call to undefined function "${name}" in ${where}`,
          "declare the fn",
        );
        return;
      }
      case "emit":
      case "effect-event":
      case "test-mock": {
        if (BUILTIN_EFFECTS.has(name)) return;
        const s = this.ctx.suggest(name, ["effect"], BUILTIN_EFFECTS.keys());
        const what =
          site.role === "test-mock"
            ? `Mock targets undefined effect "${name}"`
            : `Reference to undefined effect "${name}"`;
        this.nameError("E0104", "undef-effect", span, name, s, `${what} in ${where}`, "declare the effect");
        return;
      }
      case "selector": {
        if (name === "_") return;
        const s = this.ctx.suggest(name, ["tile"]);
        if (this.node.def.kind === "ReducerDef") {
          const on = this.node.def.on;
          const event =
            on.kind === "UiEvent" ? `ui.${on.event}` : on.kind === "TileEvent" ? `tile.${on.event}` : "";
          this.nameError(
            "E0211",
            "undef-tile-in-selector",
            span,
            name,
            s,
            `Reducer "${this.node.def.name.name}" subscribes to ${event}(${name}) but tile "${name}" is not declared`,
            "declare the tile",
          );
        } else {
          this.nameError(
            "E0105",
            "undef-tile",
            span,
            name,
            s,
            `Reference to undefined tile "${name}" in ${where}`,
            "declare the tile",
          );
        }
        return;
      }
      case "handler":
      case "test-target":
        if (site.layers.includes("reducer")) {
          const s = this.ctx.suggest(name, ["reducer"]);
          this.nameError(
            "E0102",
            "undef-reducer",
            span,
            name,
            s,
            `Reference to undefined reducer "${name}" in ${where}`,
            "declare the reducer",
          );
        } else {
          const s = this.ctx.suggest(name, ["tile"]);
          this.nameError(
            "E0105",
            "undef-tile",
            span,
            name,
            s,
            `Reference to undefined tile "${name}" in ${where}`,
            "declare the tile",
          );
        }
        return;
      case "route": {
        const s = this.ctx.suggest(name, ["tile"]);
        const path = this.routePathOf(span);
        const what =
          path === undefined
            ? `Route targets undefined tile "${name}"`
            : `Route "${path}" targets undefined tile "${name}"`;
        this.nameError("E0105", "undef-tile", span, name, s, `${what} in ${where}`, "declare the tile");
        return;
      }
      case "tile": {
        if (BUILTIN_TILES.has(name)) return;
        const s = this.ctx.suggest(name, site.layers);
        // A lower-case name where a tile or a value may stand reads as a value (a slot or fn),
        // as the public compiler reads it: an undefined name, not an undefined tile.
        const value = !isCapitalized(name) && site.layers.some((l) => l === "slot" || l === "fn");
        this.nameError(
          value ? "E0103" : "E0105",
          value ? "undef-ref" : "undef-tile",
          span,
          name,
          s,
          `Reference to undefined ${value ? "name" : "tile"} "${name}" in ${where}`,
          `declare a ${describe(site.layers)} of that name`,
        );
        return;
      }
      case "type": {
        if (DOMAIN_TYPES.has(name)) return;
        const s = this.ctx.suggest(
          name,
          ["type"],
          [...PRIMITIVE_TYPES, ...DOMAIN_TYPES, ...GENERIC_TYPES.keys()],
        );
        this.nameError(
          "E0117",
          "undef-type",
          span,
          name,
          s,
          `Reference to undefined type "${name}" in ${where}`,
          "define the type",
        );
        return;
      }
      case "motion": {
        const s = this.ctx.suggest(name, ["motion"]);
        this.nameError(
          "E0107",
          "undef-motion",
          span,
          name,
          s,
          `Reference to undefined motion "${name}" in ${where}`,
          "declare the motion",
        );
        return;
      }
    }
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
