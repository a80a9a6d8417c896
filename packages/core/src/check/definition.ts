/**
 * The checks of one definition: scopes, references, types, effects, capabilities, routes and
 * motions, as diagnostics of the registry (codes.ts).
 */
import type {
  AppDef,
  EffectDef,
  Expr,
  Field,
  FnDef,
  Ident,
  MotionDef,
  Pattern,
  ReducerDef,
  RouteEntry,
  SlotDef,
  Statement,
  TestDef,
  TileCall,
  TileDef,
  TypeDef,
  TypeExpr,
} from "../lang/ast.js";
import type { Layer } from "../lang/layers.js";
import { BUILTIN_TILES, HANDLER_NAMES } from "../lang/parser/builtins.js";
import type { ReferenceSite } from "../lang/references.js";
import type { NameSuggestion } from "../lang/similarity.js";
import type { Span } from "../lang/span.js";
import {
  BUILTIN_CALLS,
  BUILTIN_EFFECTS,
  DOMAIN_TYPES,
  GENERIC_TYPES,
  PRIMITIVE_TYPES,
  QUALIFIED_CALLS,
  RUN_REDUCER,
  STANDARD_CAPABILITIES,
  TOKEN_GROUPS,
  TYPE_MEMBER_CALLS,
  UNIMPLEMENTED_CALLS,
} from "../lang/stdlib.js";
import type { CheckContext } from "./context.js";
import type { CheckInput } from "./graph.js";
import { appendCapPatch, notFoundPatch, renamePatch } from "./patch.js";
import { lazyTy, structural, type Ty, TypeResolver, typeText, tyText, UNKNOWN, variantsOf } from "./types.js";

/** A local binding in scope, with its type when known. */
interface Scope {
  readonly name: string;
  readonly ty: Ty;
  readonly next: Scope | null;
}

type Where = "type" | "slot" | "effect" | "reducer" | "tile" | "fn" | "app" | "test";

interface Env {
  readonly scope: Scope | null;
  readonly where: Where;
  /** Inside a method-call argument, where `$1` / `$2` are the method's own positionals. */
  readonly fragment?: boolean;
}

function bind(scope: Scope | null, name: string, ty: Ty = UNKNOWN): Scope {
  return { name, ty, next: scope };
}

function lookupLocal(scope: Scope | null, name: string): Scope | undefined {
  for (let s = scope; s !== null; s = s.next) if (s.name === name) return s;
  return undefined;
}

function localNames(scope: Scope | null): string[] {
  const out: string[] = [];
  for (let s = scope; s !== null; s = s.next) if (!s.name.startsWith("$")) out.push(s.name);
  return out;
}

function isCapitalized(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 65 && c <= 90;
}

/** The name of a reducer written in a handler position, in whichever shape the parser gave it. */
function handlerName(v: Expr): Ident | undefined {
  if (v.kind === "Ident") return v;
  if (v.kind === "TileCall") return v.callee;
  if (v.kind === "Call" && v.callee.kind === "Ident" && v.args.length === 0) return v.callee;
  return undefined;
}

function field(fields: readonly Field[] | undefined, name: string): Field | undefined {
  return fields?.find((f) => f.key.name === name);
}

function describe(layers: readonly Layer[]): string {
  return layers.join(" or ");
}

/**
 * Checks one definition: everything whose answer depends on the definition itself and what it
 * reads through the context (targets, the app, the timer names, the names of a layer).
 */
export function checkDefinition(ctx: CheckContext): void {
  new DefinitionChecker(ctx).run();
}

class DefinitionChecker {
  private readonly node: CheckInput;
  private readonly types: TypeResolver;
  /** Offsets of the sites this walk has answered for; the rest are answered by their role. */
  private readonly seen = new Set<number>();

  constructor(private readonly ctx: CheckContext) {
    this.node = ctx.node;
    this.types = new TypeResolver(ctx);
  }

  run(): void {
    const def = this.node.def;
    switch (def.kind) {
      case "TypeDef":
        this.typeDef(def);
        break;
      case "SlotDef":
        this.slotDef(def);
        break;
      case "EffectDef":
        this.effectDef(def);
        break;
      case "ReducerDef":
        this.reducerDef(def);
        break;
      case "TileDef":
        this.tileDef(def);
        break;
      case "FnDef":
        this.fnDef(def);
        break;
      case "AppDef":
        this.appDef(def);
        break;
      case "TestDef":
        this.testDef(def);
        break;
      case "MotionDef":
        this.motionDef(def);
        break;
      default:
        break;
    }
    this.remainingSites();
  }

  // ───────────── references ─────────────

  /**
   * The definition the name at `id` resolves to. A name reference extraction does not report is
   * not a reference (a local, a built-in) and resolves to nothing without a diagnostic; a reported
   * name that resolves to nothing is reported by {@link unresolved}.
   */
  private ref(id: Ident | { readonly name: string; readonly span: Span }, env?: Env): CheckInput | undefined {
    const site = this.ctx.siteAt(this.node, id.span.offset);
    if (site === undefined) return undefined;
    this.seen.add(id.span.offset);
    const res = this.ctx.resolve(this.node, id);
    if (res.target !== undefined) return res.target;
    this.unresolved(site, env);
    return undefined;
  }

  /** Reports a site that resolves to nothing, by what its position says it names. */
  private unresolved(site: ReferenceSite, env?: Env): void {
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

  private nameError(
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

  private routePathOf(span: Span): string | undefined {
    const def = this.node.def;
    const routes = def.kind === "AppDef" ? def.routes : def.kind === "TileDef" ? def.subRoutes : undefined;
    for (const r of routes ?? [])
      if (r.kind === "Route" && r.target.span.offset === span.offset) return r.path.value;
    return undefined;
  }

  /** Sites the walk did not reach (test bodies, unusual positions): answered by role alone. */
  private remainingSites(): void {
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

  private typeExpr(t: TypeExpr, params: ReadonlySet<string> = new Set()): void {
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

  private typeArity(t: TypeExpr, name: string, want: number, got: number): void {
    this.ctx.report(
      "E0210",
      t.span,
      `Type "${name}" expects ${want} type argument(s) but got ${got}: write ${name}(…) with ${want}`,
    );
  }

  private typeDef(def: TypeDef): void {
    this.typeExpr(def.body, new Set(def.params.map((p) => p.name)));
  }

  private resolveType(t: TypeExpr, within: CheckInput = this.node): Ty {
    return lazyTy(() => this.types.resolve(within, t));
  }

  // ───────────── definitions ─────────────

  private slotDef(def: SlotDef): void {
    if (def.name.name === "route") {
      this.ctx.report(
        "E0115",
        def.name.span,
        `Slot "route" collides with the router-maintained route slot; reads of it never see this slot: rename the slot`,
      );
    }
    this.typeExpr(def.type);
    if (def.init === undefined) return;
    const env: Env = { scope: null, where: "slot" };
    this.expr(def.init, env);
    this.value(def.init, this.resolveType(def.type), "E0201", env);
  }

  private effectDef(def: EffectDef): void {
    this.typeExpr(def.in);
    this.typeExpr(def.out);
    const input = bind(null, "$1", this.resolveType(def.in));
    if (def.policy?.key !== undefined) this.expr(def.policy.key, { scope: input, where: "effect" });
    if (def.mapRequest !== undefined) this.expr(def.mapRequest, { scope: input, where: "effect" });
    if (def.cap.name === "http.cancel") {
      const isPrim = (t: TypeExpr, name: string): boolean =>
        t.kind === "TypeRef" && t.name.name === name && (t.args ?? []).length === 0;
      const name = def.name.name;
      if (!isPrim(def.in, "EffectId") || !isPrim(def.out, "Unit")) {
        this.ctx.report(
          "E0303",
          def.name.span,
          `effect "${name}" with cap=http.cancel must declare in=EffectId out=Unit (it has in=${typeText(def.in)} out=${typeText(def.out)})`,
        );
      }
      if (def.policy !== undefined)
        this.ctx.report(
          "E0303",
          def.policy.span,
          `effect "${name}" with cap=http.cancel cannot declare a policy: remove policy=`,
        );
      if (def.retry !== undefined)
        this.ctx.report(
          "E0303",
          def.retry.span,
          `effect "${name}" with cap=http.cancel cannot declare retry: remove retry=`,
        );
      if (def.mapRequest !== undefined)
        this.ctx.report(
          "E0303",
          def.mapRequest.span,
          `effect "${name}" with cap=http.cancel cannot declare map-request: remove map-request=`,
        );
    }
  }

  private reducerDef(def: ReducerDef): void {
    const on = def.on;
    if (on.kind === "UiEvent" && on.selector.kind === "Selector") this.ref(on.selector.tile);
    else if (on.kind === "EffectEvent") this.ref(on.effect);
    else if (on.kind === "TileEvent") this.ref(on.tile);
    const env: Env = { scope: null, where: "reducer" };
    this.statements(def.body, env, new Map());
  }

  private tileDef(def: TileDef): void {
    let scope: Scope | null = null;
    if (def.in !== undefined) {
      this.typeExpr(def.in);
      scope = bind(scope, "$1", this.resolveType(def.in));
    }
    if (def.errorBoundary !== undefined) this.ref(def.errorBoundary);
    if (def.subRoutes !== undefined) this.subRoutes(def, def.subRoutes);
    this.expr(def.body, { scope, where: "tile" });
  }

  private subRoutes(def: TileDef, routes: readonly RouteEntry[]): void {
    const seen = new Set<string>();
    for (const r of routes) {
      if (r.kind === "Route") this.ref(r.target);
      const path = r.path.value;
      if (seen.has(path)) {
        this.ctx.report(
          "E0112",
          r.path.span,
          `Sub-route path "${path}" is declared more than once in tile "${def.name.name}": remove the duplicate or rename one`,
        );
      }
      seen.add(path);
    }
    if (!usesRouteOutlet(def.body)) {
      this.ctx.report(
        "E0113",
        def.name.span,
        `Tile "${def.name.name}" declares sub-routes but its body never calls "route-outlet" — the matched child would have nowhere to render: add route-outlet()`,
      );
    }
    const app = this.ctx.app();
    if (app === undefined) return;
    const parents = ((app.def as AppDef).routes ?? []).filter(
      (r): r is Extract<RouteEntry, { kind: "Route" }> =>
        r.kind === "Route" && this.routesTo(app, r.target, this.node),
    );
    if (parents.length === 0) {
      this.ctx.report(
        "E0111",
        def.name.span,
        `Tile "${def.name.name}" declares sub-routes but is not the target of any route in app.routes: add a "/…/*" route to it`,
      );
      return;
    }
    for (const p of parents) {
      if (!p.path.value.endsWith("/*")) {
        this.ctx.report(
          "E0114",
          def.name.span,
          `Tile "${def.name.name}" declares sub-routes but its parent route "${p.path.value}" is not a wildcard pattern (must end with "/*")`,
        );
      }
    }
  }

  /** Whether the route target `id` in `app` resolves to `tile`. */
  private routesTo(app: CheckInput, id: Ident, tile: CheckInput): boolean {
    return this.ctx.resolve(app, id).target?.id === tile.id;
  }

  private fnDef(def: FnDef): void {
    let scope: Scope | null = null;
    def.params.forEach((p, i) => {
      this.typeExpr(p.type);
      const ty = this.resolveType(p.type);
      scope = bind(bind(scope, p.name.name, ty), `$${i + 1}`, ty);
    });
    if (def.returnType !== undefined) this.typeExpr(def.returnType);
    const env: Env = { scope, where: "fn" };
    this.expr(def.body, env);
    if (def.returnType !== undefined) this.value(def.body, this.resolveType(def.returnType), "E0201", env);
  }

  private appDef(def: AppDef): void {
    for (const c of def.caps ?? []) {
      if (!STANDARD_CAPABILITIES.has(c.name) && !this.ctx.settings.registeredCaps.has(c.name)) {
        const s = this.nearestCap(c.name);
        this.ctx.report(
          "E0302",
          c.span,
          `Unknown capability "${c.name}" in app.caps — use a standard capability${s === undefined ? "" : ` (did you mean "${s.name}"?)`} or register it in kumiki.caps.json`,
          s === undefined ? {} : { suggestion: s },
        );
      }
    }
    if (def.routes !== undefined) {
      let has404 = false;
      for (const r of def.routes) {
        if (r.kind === "Route") {
          this.ref(r.target);
          if (r.path.value === "/404") has404 = true;
        }
      }
      if (!has404) {
        const existing = this.ctx.lookup("tile", "NotFound");
        const autoPatch = notFoundPatch(this.node, "NotFound", existing === undefined);
        this.ctx.report(
          "E0001",
          def.name.span,
          `app.routes must include a "/404" entry: add "/404" -> NotFound${existing === undefined ? " and a NotFound tile" : ""}`,
          autoPatch === undefined ? {} : { autoPatch },
        );
      }
    }
    const env: Env = { scope: null, where: "app" };
    for (const e of def.init ?? []) {
      if (e.kind === "Call" && e.callee.kind === "Ident") {
        this.emit(e.callee, e.args, env, this.node);
        continue;
      }
      this.ctx.report(
        "E0104",
        e.span,
        "app.init entries must be effect calls: write an effect call such as load()",
        {
          kind: "init-not-effect-call",
        },
      );
      this.expr(e, env);
    }
    if (def.http !== undefined) {
      for (const f of def.http.fields) {
        if (f.value === undefined) continue;
        if (f.value.kind === "Ident" && this.ctx.siteAt(this.node, f.value.span.offset)?.role === "handler")
          this.ref(f.value);
        else this.expr(f.value, env);
      }
    }
  }

  private nearestCap(name: string): NameSuggestion | undefined {
    return this.ctx.suggestFrom(name, [...STANDARD_CAPABILITIES, ...this.ctx.settings.registeredCaps]);
  }

  /** The closed grammar of a motion (style.md §4.9.1): E0401–E0403. */
  private motionDef(def: MotionDef): void {
    const name = def.name.name;
    const fields = def.body.fields;
    const keyframes = field(fields, "keyframes");
    const kf = keyframes?.value;
    if (kf?.kind !== "Record") {
      this.ctx.report(
        "E0403",
        (kf ?? def.body).span,
        `motion "${name}" must declare a "keyframes" record: add keyframes: {from: {…}, to: {…}}`,
      );
    } else {
      for (const stop of ["from", "to"]) {
        if (field(kf.fields, stop)?.value?.kind !== "Record")
          this.ctx.report("E0403", kf.span, `motion "${name}" keyframes must include a "${stop}" record`);
      }
      for (const stop of kf.fields) {
        if (stop.key.name !== "from" && stop.key.name !== "to") {
          this.ctx.report(
            "E0403",
            stop.key.span,
            `motion "${name}" keyframes support only "from" / "to" (got "${stop.key.name}")`,
          );
          continue;
        }
        if (stop.value?.kind !== "Record") continue;
        for (const prop of stop.value.fields) {
          if (!MOTION_PROPERTIES.has(prop.key.name)) {
            this.ctx.report(
              "E0401",
              prop.key.span,
              `motion "${name}": unknown keyframe property "${prop.key.name}" (allowed: ${[...MOTION_PROPERTIES].join(", ")})`,
            );
          } else if (prop.value === undefined || numberOf(prop.value) === undefined) {
            this.ctx.report(
              "E0401",
              prop.span,
              `motion "${name}": keyframe property "${prop.key.name}" must be a number`,
            );
          }
        }
      }
    }
    for (const f of fields) {
      const key = f.key.name;
      if (key === "keyframes") continue;
      const v = f.value;
      const text = v?.kind === "String" ? v.value : v?.kind === "Ident" ? v.name : undefined;
      const n = v === undefined ? undefined : numberOf(v);
      const positiveInt = n !== undefined && Number.isInteger(n) && n > 0;
      let problem: string | undefined;
      if (key === "duration") {
        if (!positiveInt && !(text !== undefined && MOTION_DURATIONS.has(text)))
          problem = "duration must be a positive Int (ms) or one of fast/normal/slow";
      } else if (key === "easing") {
        if (text === undefined || !MOTION_EASINGS.has(text))
          problem = `easing must be one of ${[...MOTION_EASINGS].join(", ")}`;
      } else if (key === "iteration") {
        if (!positiveInt && text !== "infinite") problem = 'iteration must be a positive Int or "infinite"';
      } else if (key === "direction") {
        if (text === undefined || !MOTION_DIRECTIONS.has(text))
          problem = `direction must be one of ${[...MOTION_DIRECTIONS].join(", ")}`;
      } else {
        problem = `unknown field "${key}" (allowed: keyframes, duration, easing, iteration, direction)`;
      }
      if (problem !== undefined) this.ctx.report("E0402", f.span, `motion "${name}": ${problem}`);
    }
  }

  private testDef(def: TestDef): void {
    const body = def.body;
    if (body.kind === "ReducerTest" || body.kind === "TileTest") this.ref(body.target);
    if (body.kind === "PropertyTest") this.chainedRunReducers(body.invariant);
    if (body.kind === "EpisodeTest" && body.mocks?.kind === "Record") {
      for (const m of body.mocks.fields) {
        const v = m.value;
        const ok =
          (v?.kind === "Ident" && (v.name === "from-log" || v.name === "ignore")) ||
          (v?.kind === "Call" &&
            v.callee.kind === "Ident" &&
            (v.callee.name === "ok" || v.callee.name === "err"));
        if (!ok) {
          // One mistake, one report: the bad policy word is not also an undefined name.
          if (v?.kind === "Ident") this.seen.add(v.span.offset);
          this.ctx.report(
            "E0712",
            (v ?? m).span,
            `Mock for "${m.key.name}" must be \`from-log\`, \`ignore\`, \`ok(...)\`, or \`err(...)\``,
          );
        }
      }
    }
    // The rest of a test body is a schema read by name; its sites are answered by their role.
  }

  /**
   * `run-reducer(inc).run-reducer(dec)`: the chained spelling names a reducer as a method argument,
   * which reference extraction reads as a value. It is a reducer name.
   */
  private chainedRunReducers(e: Expr): void {
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) {
        for (const x of v) visit(x);
        return;
      }
      if (v === null || typeof v !== "object") return;
      const n = v as Expr;
      if (
        n.kind === "Call" &&
        n.callee.kind === "Member" &&
        n.callee.property.name === RUN_REDUCER &&
        n.args[0]?.kind === "Ident"
      ) {
        const arg = n.args[0];
        this.seen.add(arg.span.offset);
        const res = this.ctx.resolve(this.node, arg);
        if (res.target?.def.kind !== "ReducerDef" && this.ctx.lookup("reducer", arg.name) === undefined) {
          const s = this.ctx.suggest(arg.name, ["reducer"]);
          this.nameError(
            "E0102",
            "undef-reducer",
            arg.span,
            arg.name,
            s,
            `Reference to undefined reducer "${arg.name}" in run-reducer`,
            "declare the reducer",
          );
        }
      }
      for (const [k, x] of Object.entries(n)) if (k !== "span") visit(x);
    };
    visit(e);
  }

  // ───────────── statements ─────────────

  /** Walks a statement list; `written` maps each slot path shape already written to its span. */
  private statements(list: readonly Statement[], outer: Env, written: Map<string, Span>): void {
    let env = outer;
    for (const s of list) {
      switch (s.kind) {
        case "LetStmt":
          this.expr(s.value, env);
          {
            const value = s.value;
            const at = env;
            env = {
              ...env,
              scope: bind(
                env.scope,
                s.name.name,
                lazyTy(() => this.typeOf(value, at)),
              ),
            };
          }
          break;
        case "AssignStmt":
          this.assign(s, env, written);
          break;
        case "EmitStmt":
          this.emit(s.effect, s.args, env);
          break;
        case "IfStmt": {
          this.expr(s.cond, env);
          this.condition(s.cond, "if", env);
          const a = new Map(written);
          this.statements(s.then, env, a);
          const b = new Map(written);
          if (s.else !== undefined) this.statements(s.else, env, b);
          mergeInto(written, a);
          mergeInto(written, b);
          break;
        }
        case "MatchStmt": {
          this.expr(s.subject, env);
          const subject = lazyTy(() => this.typeOf(s.subject, env));
          const arms: Map<string, Span>[] = [];
          for (const arm of s.arms) {
            const scope = this.pattern(arm.pattern, subject, env.scope);
            const w = new Map(written);
            this.statements(arm.body, { ...env, scope }, w);
            arms.push(w);
          }
          for (const w of arms) mergeInto(written, w);
          break;
        }
        case "ForStmt": {
          this.expr(s.iterable, env);
          const w = new Map(written);
          this.statements(s.body, { ...env, scope: bind(env.scope, s.binder.name) }, w);
          mergeInto(written, w);
          break;
        }
        case "BlockStmt":
          this.statements(s.body, env, written);
          break;
        case "StopTimerStmt":
          this.stopTimer(s.timer);
          break;
        case "PanicStmt":
          this.expr(s.message, env);
          break;
        case "NoopStmt":
          break;
      }
    }
  }

  private assign(s: Extract<Statement, { kind: "AssignStmt" }>, env: Env, written: Map<string, Span>): void {
    const steps: string[] = [];
    let root: Expr = s.target;
    while (root.kind === "Member" || root.kind === "Index") {
      if (root.kind === "Member") steps.unshift(`.${root.property.name}`);
      else {
        steps.unshift("[]");
        this.expr(root.index, env);
      }
      root = root.object;
    }
    let slotTy: Ty = UNKNOWN;
    if (root.kind === "Ident") {
      const target = this.ref(root, env);
      if (target !== undefined && target.def.kind === "SlotDef")
        slotTy = this.resolveType(target.def.type, target);
      const shape = root.name + steps.join("");
      const first = written.get(shape);
      if (first !== undefined) {
        const line = Math.max(1, first.line - this.node.def.span.line + 1);
        this.ctx.report(
          "E0601",
          s.target.span,
          `Slot path "${shape}" is written more than once in reducer "${this.node.def.name.name}" (first at body:${line}): combine the writes into one assignment, or put them in exclusive branches`,
        );
      } else {
        written.set(shape, s.target.span);
      }
    } else {
      this.expr(root, env);
    }
    this.expr(s.value, env);
    this.value(s.value, this.pathType(slotTy, s.target), "E0201", env);
  }

  /** The declared type at an assignment path (`todos[id].done`), or unknown. */
  private pathType(rootTy: Ty, target: Expr): Ty {
    if (target.kind === "Ident") return rootTy;
    if (target.kind !== "Member" && target.kind !== "Index") return UNKNOWN;
    const base = structural(this.pathType(rootTy, target.object));
    if (target.kind === "Member") {
      if (base.k === "record") return base.fields.get(target.property.name) ?? UNKNOWN;
      if (
        base.k === "app" &&
        (base.name === "Option" || base.name === "Result") &&
        target.property.name === "get"
      )
        return base.args[0] ?? UNKNOWN;
      return UNKNOWN;
    }
    if (base.k === "app" && base.name === "Map") return base.args[1] ?? UNKNOWN;
    if (base.k === "app" && base.name === "List") return base.args[0] ?? UNKNOWN;
    return UNKNOWN;
  }

  private stopTimer(timer: Ident): void {
    if (this.ctx.hasTimer(timer.name)) return;
    const s = this.ctx.suggestFrom(timer.name, this.ctx.timerNames());
    this.nameError(
      "E0106",
      "undef-timer",
      timer.span,
      timer.name,
      s,
      `stop-timer refers to undefined timer name "${timer.name}"`,
      "declare it with on=timer(d, name=…)",
    );
  }

  /**
   * `emit E(args)` (or an `app.init` entry): the effect must exist, be given as many arguments as
   * it takes, and its capability must be in the caps of `capsOwner` (by default the app).
   */
  private emit(effect: Ident, args: readonly Expr[], env: Env, capsOwner?: CheckInput): void {
    const target = this.ref(effect, env);
    let cap: string | null = null;
    let arity: number | undefined;
    let input: Ty = UNKNOWN;
    let name = effect.name;
    if (target !== undefined && target.def.kind === "EffectDef") {
      const def = target.def;
      name = def.name.name;
      cap = def.cap.name;
      const unit =
        def.in.kind === "TypeRef" && def.in.name.name === "Unit" && (def.in.args ?? []).length === 0;
      arity = unit ? 0 : 1;
      if (!unit && args[0] !== undefined && isLiteral(args[0])) input = this.resolveType(def.in, target);
    } else if (target === undefined && this.ctx.siteAt(this.node, effect.span.offset) !== undefined) {
      const builtin = BUILTIN_EFFECTS.get(effect.name);
      if (builtin !== undefined) {
        cap = builtin.cap;
        arity = builtin.arity;
      }
    }
    const reducerFields = effect.name === "confirm" && target === undefined;
    for (const a of args) {
      if (reducerFields && a.kind === "Record") {
        for (const f of a.fields) {
          const v = f.value;
          if ((f.key.name === "onYes" || f.key.name === "onNo") && v?.kind === "Ident") this.ref(v, env);
          else if (v !== undefined) this.expr(v, env);
          else this.expr(f.key, env);
        }
        continue;
      }
      this.expr(a, env);
    }
    if (arity !== undefined && args.length !== arity) {
      this.ctx.report(
        "E0213",
        effect.span,
        `Effect "${name}" expects ${arity} argument(s) but got ${args.length}${arity === 0 ? " (it declares in=Unit)" : ""}`,
      );
    } else if (arity === 1 && args[0] !== undefined) {
      this.value(args[0], input, "E0202");
    }
    if (cap !== null) this.requireCap(effect, name, cap, capsOwner);
  }

  /**
   * E0301 when `cap` is not declared: by `owner`'s caps (an `app.init` entry, checked against its
   * own app), else by the app's.
   */
  private requireCap(at: Ident, effect: string, cap: string, owner?: CheckInput): void {
    const app = owner ?? this.ctx.app();
    if (app === undefined || app.def.kind !== "AppDef") return;
    if ((app.def.caps ?? []).some((c) => c.name === cap)) return;
    const autoPatch = appendCapPatch(app, cap);
    this.ctx.report(
      "E0301",
      at.span,
      `Effect "${effect}" requires capability "${cap}" which is not declared in app.caps: add ${cap} to the caps of app ${app.def.name.name}`,
      autoPatch === undefined ? {} : { autoPatch },
    );
  }

  // ───────────── expressions ─────────────

  private expr(e: Expr, env: Env): void {
    switch (e.kind) {
      case "Ident":
        this.name(e, env);
        return;
      case "DollarRef":
        if (
          e.name === "$1" &&
          env.where === "tile" &&
          !env.fragment &&
          lookupLocal(env.scope, "$1") === undefined
        ) {
          this.ctx.report(
            "E0103",
            e.span,
            `"$1" is undefined in tile "${this.node.def.name.name}": a tile can use "$1" only if it declares an in= argument (tile ${this.node.def.name.name} in=SomeType = …)`,
          );
        }
        return;
      case "TokenRef": {
        const group = e.path[0];
        if (group !== undefined && !TOKEN_GROUPS.has(group.name)) {
          this.ctx.report(
            "E0110",
            group.span,
            `Unknown theme token group "@${group.name}" (allowed: ${[...TOKEN_GROUPS].join(", ")})`,
          );
        }
        return;
      }
      case "AnyId":
      case "SlotWildcard":
        if (env.where !== "test") {
          this.ctx.report(
            "E0109",
            e.span,
            `Test wildcard "${e.kind === "AnyId" ? "<any-id>" : `<slots.${e.slot.name}>`}" is only valid inside a reducer-test \`expect\`: remove it`,
          );
        }
        return;
      case "Member":
        if (!(e.object.kind === "Ident" && isCapitalized(e.object.name))) {
          this.expr(e.object, env);
          this.member(e, env);
        } else this.ref(e.object, env);
        return;
      case "Index":
        this.expr(e.object, env);
        this.expr(e.index, env);
        return;
      case "Call":
        this.call(e, env);
        return;
      case "Unary":
        this.expr(e.operand, env);
        if (e.op === "-" && this.isEffectId(e.operand, env)) this.effectIdMisuse(e.span, "-");
        else this.unaryTypes(e, env);
        return;
      case "Binary":
        this.expr(e.left, env);
        this.expr(e.right, env);
        if (e.op !== "==" && e.op !== "!=" && (this.isEffectId(e.left, env) || this.isEffectId(e.right, env)))
          this.effectIdMisuse(e.span, e.op);
        else this.operandTypes(e, env);
        return;
      case "If":
        this.expr(e.cond, env);
        this.condition(e.cond, "if", env);
        this.expr(e.then, env);
        this.expr(e.else, env);
        return;
      case "Null":
        // language.md §1: null is reserved and prohibited in programs (the public toolchain
        // refuses it while parsing; here it is the type error the spec names).
        this.typeError(
          e.span,
          "null is not a value in Kumiki: use an Option (None, or Some(x)) where a value may be absent",
        );
        return;
      case "Match": {
        this.expr(e.subject, env);
        const subject = lazyTy(() => this.typeOf(e.subject, env));
        for (const arm of e.arms)
          this.expr(arm.body, { ...env, scope: this.pattern(arm.pattern, subject, env.scope) });
        return;
      }
      case "Let":
        this.expr(e.value, env);
        this.expr(e.body, {
          ...env,
          scope: bind(
            env.scope,
            e.name.name,
            lazyTy(() => this.typeOf(e.value, env)),
          ),
        });
        return;
      case "Emit":
        if (env.where !== "reducer") {
          this.ctx.report(
            "E0305",
            e.span,
            `emit "${e.effect.name}" used as an expression is only allowed inside a reducer body: move it into a reducer`,
          );
        }
        this.emit(e.effect, e.args, env);
        return;
      case "Record":
        for (const f of e.fields) {
          if (f.value === undefined) this.name(f.key, env);
          else this.expr(f.value, env);
        }
        return;
      case "Map":
        for (const entry of e.entries) {
          this.expr(entry.key, env);
          this.expr(entry.value, env);
        }
        return;
      case "List":
      case "Tuple":
        for (const i of e.items) this.expr(i, env);
        return;
      case "TileCall":
        this.tileCall(e, env);
        return;
      case "For": {
        this.expr(e.iterable, env);
        this.expr(e.body, { ...env, scope: bind(env.scope, e.binder.name) });
        return;
      }
      case "When":
        this.expr(e.cond, env);
        this.condition(e.cond, "when", env);
        this.expr(e.body, env);
        return;
      default:
        return;
    }
  }

  /**
   * E0108: `recv.m` where `recv` is known to be a record and `m` is neither one of its fields nor
   * a member every record has (stdlib.md §2.2.3's dispatch rule). Other receivers are left to the
   * name-based dispatch, as the rule says for what cannot be inferred.
   */
  private member(e: Extract<Expr, { kind: "Member" }>, env: Env): void {
    const base = structural(this.typeOf(e.object, env));
    if (base.k !== "record") return;
    const name = e.property.name;
    if (base.fields.has(name) || RECORD_MEMBERS.has(name)) return;
    const s = this.ctx.suggestFrom(name, base.fields.keys());
    this.ctx.report(
      "E0108",
      e.property.span,
      `Record type ${tyText(base)} has no field or method ".${name}"${s === undefined ? "" : `: did you mean ".${s.name}"?`}`,
      { kind: "undef-member", ...(s === undefined ? {} : { suggestion: s }) },
    );
  }

  // ───────────── operators and conditions (errors.md E0201) ─────────────
  // One-sided, as every E0201 check: judged only when both operand types are known primitives.

  /**
   * The primitive an expression is known to have, if it is one whose operators the check knows
   * (`Int`, `Float`, `Text`, `Bool`); times, durations and the rest are left alone.
   */
  private primOf(e: Expr, env: Env): string | undefined {
    const t = structural(this.typeOf(e, env));
    return t.k === "prim" && t.name in PRIM ? t.name : undefined;
  }

  private typeError(span: Span, message: string): void {
    this.ctx.report("E0201", span, message, { kind: "type-mismatch" });
  }

  private operandTypes(e: Extract<Expr, { kind: "Binary" }>, env: Env): void {
    const l = this.primOf(e.left, env);
    const r = this.primOf(e.right, env);
    if (l === undefined || r === undefined) return;
    switch (e.op) {
      case "+":
        // With Text on either side, + joins texts (the other side shown: "Count: " + count), and
        // the result is Text; otherwise it adds numbers.
        if (l === "Text" || r === "Text" || (isNumber(l) && isNumber(r))) return;
        this.typeError(e.span, `Operator "+" expects a number but got ${isNumber(l) ? r : l}`);
        return;
      case "-":
      case "*":
      case "/":
      case "%":
        if (!isNumber(l) || !isNumber(r))
          this.typeError(e.span, `Operator "${e.op}" expects a number but got ${isNumber(l) ? r : l}`);
        return;
      case "<":
      case ">":
      case "<=":
      case ">=":
        if ((isNumber(l) && isNumber(r)) || (l === "Text" && r === "Text")) return;
        this.typeError(e.span, `Operator "${e.op}" cannot compare ${l} with ${r}`);
        return;
      case "==":
      case "!=":
        if (isNumber(l) === isNumber(r) && (isNumber(l) || l === r)) return;
        this.typeError(e.span, `Operator "${e.op}" cannot compare ${l} with ${r}`);
        return;
      case "&&":
      case "||":
        if (l !== "Bool" || r !== "Bool")
          this.typeError(e.span, `Operator "${e.op}" expects Bool but got ${l !== "Bool" ? l : r}`);
        return;
    }
  }

  private unaryTypes(e: Extract<Expr, { kind: "Unary" }>, env: Env): void {
    const t = this.primOf(e.operand, env);
    if (t === undefined) return;
    if (e.op === "-" && !isNumber(t)) this.typeError(e.span, `Operator "-" expects a number but got ${t}`);
    if (e.op === "!" && t !== "Bool") this.typeError(e.span, `Operator "!" expects Bool but got ${t}`);
  }

  private condition(cond: Expr, form: string, env: Env): void {
    const t = this.primOf(cond, env);
    if (t !== undefined && t !== "Bool")
      this.typeError(
        cond.span,
        `Condition of "${form}" must be Bool but got ${t}: compare it (x > 0, s != "")`,
      );
  }

  /** Whether `e`'s type is known to be the opaque `EffectId`. */
  private isEffectId(e: Expr, env: Env): boolean {
    if (e.kind === "Emit") return true;
    if (e.kind !== "Ident" && e.kind !== "DollarRef" && e.kind !== "Member") return false;
    const t = structural(this.typeOf(e, env));
    return t.k === "prim" && t.name === "EffectId";
  }

  private effectIdMisuse(span: Span, op: string): void {
    this.ctx.report(
      "E0204",
      span,
      `Operator "${op}" cannot be applied to EffectId — only "==" / "!=" are defined: compare with EffectId.none, or pass the id to a cancel effect`,
    );
  }

  /** A name in a value (or tile-child) position. */
  private name(id: Ident, env: Env): void {
    if (lookupLocal(env.scope, id.name) !== undefined) return;
    const target = this.ref(id, env);
    if (target === undefined) return;
    if (env.where === "fn" && target.def.kind === "SlotDef" && this.node.def.kind === "FnDef") {
      this.ctx.report(
        "E0305",
        id.span,
        `fn "${this.node.def.name.name}" must not read slot "${target.def.name.name}": pass the slot's value as an argument`,
      );
    }
  }

  private call(e: Extract<Expr, { kind: "Call" }>, env: Env): void {
    const callee = e.callee;
    if (callee.kind === "Ident") {
      if (lookupLocal(env.scope, callee.name) !== undefined) {
        this.args(e, env, false);
        return;
      }
      const target = this.ref(callee, env);
      if (target !== undefined && target.def.kind === "FnDef") {
        this.args(e, env, false);
        this.fnCall(e, callee, target);
        return;
      }
      if (target === undefined && !isCapitalized(callee.name)) this.builtinCall(e, callee, env);
      this.args(e, env, false);
      return;
    }
    if (callee.kind === "Member" && callee.object.kind === "Ident" && isCapitalized(callee.object.name)) {
      this.qualifiedCall(e, callee.object, callee.property, env);
      return;
    }
    this.expr(callee, env);
    // The arguments of a method are fragments: `$1` / `$2` are the method's own positionals.
    this.args(e, env, callee.kind === "Member");
  }

  private args(e: Extract<Expr, { kind: "Call" }>, env: Env, fragment: boolean): void {
    const inner: Env = fragment ? { ...env, fragment: true, scope: bind(bind(env.scope, "$1"), "$2") } : env;
    for (const a of e.args) this.expr(a, inner);
    for (const f of e.fields ?? []) {
      if (f.value === undefined) this.name(f.key, inner);
      else this.expr(f.value, inner);
    }
  }

  private builtinCall(e: Extract<Expr, { kind: "Call" }>, callee: Ident, env: Env): void {
    const name = callee.name;
    if (UNIMPLEMENTED_CALLS.has(name)) {
      this.ctx.report(
        "E0802",
        callee.span,
        `Function "${name}" is documented but not implemented by the runtime: remove the call`,
      );
      return;
    }
    if (name === RUN_REDUCER) {
      if (env.where !== "test") {
        this.ctx.report(
          "E0116",
          callee.span,
          `Call to "run-reducer" outside a property-test invariant: remove it`,
        );
      }
      return;
    }
    const arity = BUILTIN_CALLS.get(name);
    if (arity === undefined) return;
    const got = e.args.length;
    if (got < arity.min || got > arity.max) {
      const want = arity.min === arity.max ? `${arity.min}` : `at least ${arity.min}`;
      this.ctx.report("E0213", callee.span, `Function "${name}" expects ${want} argument(s) but got ${got}`);
    }
  }

  private fnCall(e: Extract<Expr, { kind: "Call" }>, callee: Ident, target: CheckInput): void {
    const def = target.def as FnDef;
    const got = e.args.length;
    if (got !== def.params.length) {
      this.ctx.report(
        "E0213",
        callee.span,
        `Function "${def.name.name}" expects ${def.params.length} argument(s) but got ${got}`,
      );
      return;
    }
    def.params.forEach((p, i) => {
      const arg = e.args[i];
      if (arg !== undefined && isLiteral(arg)) this.value(arg, this.resolveType(p.type, target), "E0201");
    });
  }

  /** `TodoId.fresh()`, `Duration.ms(5)`, `Decoder.Json(T)`, `Loaded.show()`. */
  private qualifiedCall(e: Extract<Expr, { kind: "Call" }>, q: Ident, member: Ident, env: Env): void {
    const closed = QUALIFIED_CALLS.get(q.name);
    const site = this.ctx.siteAt(this.node, q.span.offset);
    if (closed !== undefined && site === undefined) {
      if (!closed.has(member.name) && !(TYPE_MEMBER_CALLS.has(member.name) && e.args.length > 0)) {
        const s = this.ctx.suggestFrom(member.name, closed);
        const full = `${q.name}.${member.name}`;
        this.ctx.report(
          "E0116",
          member.span,
          `Call to undefined function "${full}"${s === undefined ? "" : `: did you mean "${q.name}.${s.name}"?`}`,
          s === undefined ? {} : { suggestion: { ...s, name: `${q.name}.${s.name}` } },
        );
      }
      // The payload of `Decoder.Json(T)` is a type; its names are answered as type sites.
      if (q.name === "Decoder" && member.name === "Json") return;
      this.args(e, env, false);
      return;
    }
    if (site !== undefined) {
      this.seen.add(q.span.offset);
      const res = this.ctx.resolve(this.node, q);
      if (res.target === undefined && !DOMAIN_TYPES.has(q.name)) {
        if (TYPE_MEMBER_CALLS.has(member.name)) this.unresolved(site, env);
      }
    }
    this.args(e, env, false);
  }

  private tileCall(e: TileCall, env: Env): void {
    const name = e.callee.name;
    const builtin = BUILTIN_TILES.has(name);
    const target = builtin ? undefined : this.ref(e.callee, env);
    const positional = e.args ?? [];
    if (target !== undefined && target.def.kind === "TileDef") {
      const def = target.def;
      const want = def.in === undefined ? 0 : 1;
      if (positional.length !== want) {
        this.ctx.report(
          "E0213",
          e.callee.span,
          `Tile "${def.name.name}" expects ${want} argument(s) but got ${positional.length}${want === 1 ? ` (it declares in=${typeText(def.in!)})` : ""}`,
        );
      } else if (
        want === 1 &&
        positional[0] !== undefined &&
        def.in !== undefined &&
        isLiteral(positional[0])
      ) {
        this.value(positional[0], this.resolveType(def.in, target), "E0201");
      }
    }
    for (const a of positional) this.expr(a, env);
    for (const f of e.fields ?? []) {
      const v = f.value;
      if (v === undefined) continue;
      if (HANDLER_NAMES.has(f.key.name)) this.handler(v, f.key, env);
      else this.expr(v, env);
    }
    for (const f of e.props?.fields ?? []) {
      const v = f.value;
      if (v === undefined) continue;
      const key = f.key.name;
      if (HANDLER_NAMES.has(key)) this.handler(v, f.key, env);
      else if ((key === "motion" || key === "prefetch") && v.kind === "String") this.stringRef(v);
      else if (key === "prefetch" && v.kind === "Ident") this.ref(v, env);
      else this.expr(v, env);
    }
    if (builtin) this.builtinTile(e);
    if (name === "text" && positional[0] !== undefined && this.isEffectId(positional[0], env)) {
      this.ctx.report(
        "E0204",
        positional[0].span,
        "text(...) cannot render EffectId — it is an opaque handle: render something else",
      );
    }
  }

  /** A name held in a string (`{motion: "Spin"}`): its site is the string's contents. */
  private stringRef(s: Extract<Expr, { kind: "String" }>): void {
    if (s.value === "") return;
    this.ref({ name: s.value, span: { ...s.span, offset: s.span.offset + 1, column: s.span.column + 1 } });
  }

  private handler(v: Expr, key: Ident, env: Env): void {
    const id = handlerName(v);
    if (id === undefined) {
      this.ctx.report(
        "E0201",
        v.span,
        `Event handler "${key.name}" must be a reducer name: write ${key.name}=someReducer`,
      );
      this.expr(v, env);
      return;
    }
    const site = this.ctx.siteAt(this.node, id.span.offset);
    if (site !== undefined && site.role === "handler") {
      this.ref(id, env);
      return;
    }
    // A capitalized reducer name parses as a tile or a variant; it is still a reducer name here.
    if (site !== undefined) this.seen.add(id.span.offset);
    const target = site === undefined ? undefined : this.ctx.resolve(this.node, id).target;
    if (target?.def.kind === "ReducerDef" || this.ctx.lookup("reducer", id.name) !== undefined) return;
    const s = this.ctx.suggest(id.name, ["reducer"]);
    this.nameError(
      "E0102",
      "undef-reducer",
      id.span,
      id.name,
      s,
      `Reference to undefined reducer "${id.name}" in ${this.node.def.layer}.${this.node.def.name.name}`,
      "declare the reducer",
    );
  }

  /** Checks of a built-in tile's own arguments: file inputs and, under --a11y, labels. */
  private builtinTile(e: TileCall): void {
    const name = e.callee.name;
    const fields = e.fields;
    const props = e.props?.fields;
    const has = (key: string): boolean => field(fields, key) !== undefined || field(props, key) !== undefined;
    if (name === "input") {
      const typeValue = field(fields, "type")?.value;
      const isFile = typeValue?.kind === "String" && typeValue.value === "file";
      const bindField = field(fields, "bind");
      if (isFile && bindField !== undefined) {
        this.ctx.report(
          "E0205",
          bindField.span,
          `input(type="file") does not support bind=; receive files via a ui.change reducer with $event.files.head`,
        );
      }
      const knownNonFile =
        typeValue === undefined || (typeValue.kind === "String" && typeValue.value !== "file");
      if (knownNonFile) {
        for (const key of ["accept", "multiple"]) {
          const f = field(fields, key);
          if (f === undefined) continue;
          const observed =
            typeValue === undefined
              ? `no type, defaults to "text"`
              : `type="${(typeValue as { value: string }).value}"`;
          this.ctx.report(
            "E0206",
            f.span,
            `input prop "${key}" requires type="file" (got ${observed}); accept/multiple are only valid on file inputs`,
          );
        }
      }
    }
    if (!this.ctx.settings.a11y) return;
    if (name === "button" && !has("text") && !has("aria-label")) {
      this.ctx.report(
        "E0701",
        e.span,
        'button must have a text= argument or aria-label prop: add text="…"',
        {},
      );
    }
    if (name === "image" && !has("alt")) {
      this.ctx.report(
        "E0702",
        e.span,
        'image must have an alt prop: add alt="…" (alt="" for a decorative image)',
      );
    }
    if (name === "link" && (e.args ?? []).length === 0 && !has("text") && !has("aria-label")) {
      this.ctx.report("E0703", e.span, 'link must have inner text or aria-label: add text="…"');
    }
  }

  // ───────────── types of expressions ─────────────

  /** The type of `e` when it can be read off a declaration exactly; unknown otherwise. */
  private typeOf(e: Expr, env: Env): Ty {
    switch (e.kind) {
      case "Ident": {
        const local = lookupLocal(env.scope, e.name);
        if (local !== undefined) return local.ty;
        const site = this.ctx.siteAt(this.node, e.span.offset);
        if (site === undefined) return UNKNOWN;
        const target = this.ctx.resolve(this.node, e).target;
        if (target !== undefined && target.def.kind === "SlotDef")
          return this.resolveType(target.def.type, target);
        return UNKNOWN;
      }
      case "DollarRef":
        return lookupLocal(env.scope, e.name)?.ty ?? UNKNOWN;
      case "Emit":
        return EFFECT_ID;
      case "Number":
        return Number.isInteger(e.value) ? PRIM.Int : PRIM.Float;
      case "String":
        return PRIM.Text;
      case "Bool":
        return PRIM.Bool;
      case "Unary": {
        if (e.op === "!") return PRIM.Bool;
        const t = structural(this.typeOf(e.operand, env));
        return t.k === "prim" && isNumber(t.name) ? t : UNKNOWN;
      }
      case "Binary": {
        if (["==", "!=", "<", ">", "<=", ">=", "&&", "||"].includes(e.op)) return PRIM.Bool;
        const l = structural(this.typeOf(e.left, env));
        const r = structural(this.typeOf(e.right, env));
        if (l.k !== "prim" || r.k !== "prim") return UNKNOWN;
        if (e.op === "+" && (l.name === "Text" || r.name === "Text")) return PRIM.Text;
        if (!isNumber(l.name) || !isNumber(r.name)) return UNKNOWN;
        if (l.name === "Float" || r.name === "Float") return PRIM.Float;
        // Int / Int is a number; whether Int or Float is not this check's to guess.
        if (e.op === "/" || l.name === "Number" || r.name === "Number") return PRIM.Number;
        return PRIM.Int;
      }
      case "Member": {
        const base = structural(this.typeOf(e.object, env));
        if (base.k === "record") return base.fields.get(e.property.name) ?? UNKNOWN;
        if (
          base.k === "app" &&
          (base.name === "Option" || base.name === "Result") &&
          e.property.name === "get"
        )
          return base.args[0] ?? UNKNOWN;
        return UNKNOWN;
      }
      case "Index": {
        const base = structural(this.typeOf(e.object, env));
        if (base.k === "app" && base.name === "Map") return base.args[1] ?? UNKNOWN;
        if (base.k === "app" && base.name === "List") return base.args[0] ?? UNKNOWN;
        return UNKNOWN;
      }
      case "Tuple": {
        const args = e.items.map((i) => this.typeOf(i, env));
        return { k: "app", name: "Tuple", args, text: `Tuple(${args.map(tyText).join(", ")})` };
      }
      default:
        return UNKNOWN;
    }
  }

  /** Brings a pattern's binds into scope, checking its variants against the subject's type. */
  private pattern(p: Pattern, subject: Ty, scope: Scope | null): Scope | null {
    switch (p.kind) {
      case "WildcardPattern":
        return scope;
      case "BindPattern":
        return bind(scope, p.name.name, subject);
      case "TuplePattern": {
        const t = structural(subject);
        const items = t.k === "app" && t.name === "Tuple" ? t.args : undefined;
        if (items === undefined && (t.k === "prim" || t.k === "record" || t.k === "union" || t.k === "app")) {
          // errors.md E0208: the scrutinee's type is known and is no tuple; the arm can never match.
          this.ctx.report(
            "E0208",
            p.span,
            `Tuple pattern cannot match scrutinee of type "${tyText(subject)}"`,
            {
              kind: "pat-type-mismatch",
            },
          );
        } else if (items !== undefined && items.length !== p.items.length) {
          this.ctx.report(
            "E0207",
            p.span,
            `Tuple pattern has ${p.items.length} item(s) but the scrutinee type "${tyText(subject)}" has ${items.length}`,
          );
        }
        let s = scope;
        p.items.forEach((item, i) => {
          s = this.pattern(item, items?.[i] ?? UNKNOWN, s);
        });
        return s;
      }
      case "VariantPattern": {
        const variants = variantsOf(subject);
        const tag = p.variant.name;
        const payloads = variants?.get(tag);
        const t = structural(subject);
        if (
          variants === undefined &&
          (t.k === "prim" || t.k === "record" || (t.k === "app" && t.name === "Tuple"))
        ) {
          this.ctx.report(
            "E0208",
            p.span,
            `Variant pattern "${tag}" cannot match scrutinee of type "${tyText(subject)}"`,
            {
              kind: "pat-type-mismatch",
            },
          );
        } else if (variants !== undefined && payloads === undefined) {
          const s = this.ctx.suggestFrom(tag, variants.keys());
          this.nameError(
            "E0209",
            "pat-unknown-variant",
            p.variant.span,
            tag,
            s,
            `Variant "${tag}" is not a member of scrutinee type "${tyText(subject)}"`,
            `use one of ${[...variants.keys()].join(", ")}`,
          );
        } else if (payloads !== undefined && p.args !== undefined && p.args.length !== payloads.length) {
          this.ctx.report(
            "E0207",
            p.span,
            `Variant "${tag}" pattern has ${p.args.length} bind(s) but the variant carries ${payloads.length} payload(s)`,
          );
        }
        let s = scope;
        (p.args ?? []).forEach((a, i) => {
          s = this.pattern(a, payloads?.[i] ?? UNKNOWN, s);
        });
        return s;
      }
    }
  }

  // ───────────── values against declared types ─────────────

  /**
   * Checks a value written against the type its position declares, at the innermost literal that
   * is wrong. Only literal shapes are judged; every other expression is left alone.
   */
  private value(e: Expr, declared: Ty, code: "E0201" | "E0202", env?: Env): void {
    if (!isLiteral(e)) {
      if (env !== undefined) this.typedValue(e, declared, code, env);
      return;
    }
    const d = structural(declared);
    if (d.k === "unknown") return;
    const mismatch = (actual: string): void => {
      this.ctx.report(
        code,
        e.span,
        `Expected ${tyText(declared)} but got ${actual}: write a ${tyText(declared)}`,
        {
          kind: code === "E0201" ? "type-mismatch" : "emit-arg-type-mismatch",
        },
      );
    };
    switch (e.kind) {
      case "Number": {
        // Integral values are Ints (`1.0` included), as the public toolchain reads them.
        const isInt = Number.isInteger(e.value);
        if (d.k === "prim" && d.name === "Int") {
          if (!isInt) mismatch("Float");
          else if (!Number.isSafeInteger(e.value)) {
            this.ctx.report(
              "E0217",
              e.span,
              `Int literal ${e.raw} is not exactly representable and was rounded to ${e.value}: use a value within ±9007199254740991, or carry it as Text`,
            );
          }
          return;
        }
        if (d.k === "prim" && d.name === "Float") return;
        mismatch(isInt ? "Int" : "Float");
        return;
      }
      case "String":
        if (!(d.k === "prim" && d.name === "Text")) mismatch("Text");
        return;
      case "Bool":
        if (!(d.k === "prim" && d.name === "Bool")) mismatch("Bool");
        return;
      case "Unit":
        if (!(d.k === "prim" && d.name === "Unit")) mismatch("Unit");
        return;
      case "If":
        this.value(e.then, declared, code);
        this.value(e.else, declared, code);
        return;
      case "List":
        if (d.k === "app" && (d.name === "List" || d.name === "Set")) {
          for (const item of e.items) this.value(item, d.args[0] ?? UNKNOWN, code);
          return;
        }
        if (d.k === "prim" || d.k === "record" || d.k === "union" || (d.k === "app" && d.name !== "Tuple"))
          mismatch("a List");
        return;
      case "Tuple":
        if (d.k === "app" && d.name === "Tuple") {
          if (d.args.length !== e.items.length) {
            mismatch(`a tuple of ${e.items.length} item(s)`);
            return;
          }
          e.items.forEach((item, i) => {
            this.value(item, d.args[i] ?? UNKNOWN, code);
          });
          return;
        }
        if (d.k === "prim" || d.k === "record" || d.k === "union")
          mismatch(`a tuple of ${e.items.length} item(s)`);
        return;
      case "Map":
        if (d.k === "app" && d.name === "Map") {
          for (const entry of e.entries) {
            this.value(entry.key, d.args[0] ?? UNKNOWN, code);
            this.value(entry.value, d.args[1] ?? UNKNOWN, code);
          }
          return;
        }
        if (d.k === "prim" && e.entries.length > 0) mismatch("a Map");
        return;
      case "Record":
        if (d.k === "record") {
          this.record(e, d, code);
          return;
        }
        if (d.k === "prim") mismatch("a record");
        return;
      case "Ident":
        if (isCapitalized(e.name) && this.isVariantSite(e)) this.variant(e, e, [], declared, code);
        return;
      case "Call":
        if (e.callee.kind === "Ident" && isCapitalized(e.callee.name) && this.isVariantSite(e.callee))
          this.variant(e, e.callee, e.args, declared, code);
        return;
      default:
        return;
    }
  }

  /**
   * A value that is not a literal but whose primitive type is known (an operator's result: `count
   * + "x"` is Text) against a declared primitive: Int flows into Float (a number of either kind
   * into both), nothing else converts.
   */
  private typedValue(e: Expr, declared: Ty, code: "E0201" | "E0202", env: Env): void {
    if (e.kind === "If") {
      this.value(e.then, declared, code, env);
      this.value(e.else, declared, code, env);
      return;
    }
    if (e.kind !== "Binary" && e.kind !== "Unary") return;
    const d = structural(declared);
    if (d.k !== "prim" || !(d.name in PRIM)) return;
    const got = this.primOf(e, env);
    if (got === undefined || got === d.name) return;
    // Int flows into Float; a number not known to be Int or Float into either.
    if (isNumber(got) && (d.name === "Float" || (d.name === "Int" && got === "Number"))) return;
    this.ctx.report(
      code,
      e.span,
      `Expected ${tyText(declared)} but got ${PRIM[got as keyof typeof PRIM].text}`,
      {
        kind: code === "E0201" ? "type-mismatch" : "emit-arg-type-mismatch",
      },
    );
  }

  /** Whether a capitalized name is a variant tag (it resolves to no definition). */
  private isVariantSite(id: Ident): boolean {
    const site = this.ctx.siteAt(this.node, id.span.offset);
    if (site === undefined) return ["None", "Some", "Ok", "Err"].includes(id.name);
    return site.role === "variant" && this.ctx.resolve(this.node, id).target === undefined;
  }

  private variant(
    e: Expr,
    tag: Ident,
    payload: readonly Expr[],
    declared: Ty,
    code: "E0201" | "E0202",
  ): void {
    const variants = variantsOf(declared);
    const d = structural(declared);
    if (variants === undefined) {
      if (
        d.k === "prim" ||
        d.k === "record" ||
        (d.k === "app" && d.name !== "Option" && d.name !== "Result")
      ) {
        this.ctx.report(code, e.span, `Expected ${tyText(declared)} but got variant "${tag.name}"`, {
          kind: code === "E0201" ? "type-mismatch" : "emit-arg-type-mismatch",
        });
      }
      return;
    }
    const payloads = variants.get(tag.name);
    if (payloads === undefined) {
      const s = this.ctx.suggestFrom(tag.name, variants.keys());
      this.nameError(
        "E0216",
        "unknown-variant",
        tag.span,
        tag.name,
        s,
        `Variant "${tag.name}" is not a member of type "${tyText(declared)}"`,
        `use one of ${[...variants.keys()].join(", ")}`,
      );
      return;
    }
    if (payloads.length !== payload.length) {
      this.ctx.report(
        "E0213",
        e.span,
        `Variant "${tag.name}" carries ${payloads.length} payload(s) but got ${payload.length}`,
      );
      return;
    }
    payload.forEach((p, i) => {
      this.value(p, payloads[i] ?? UNKNOWN, code);
    });
  }

  private record(
    e: Extract<Expr, { kind: "Record" }>,
    d: Extract<Ty, { k: "record" }>,
    code: "E0201" | "E0202",
  ): void {
    const given = new Set(e.fields.map((f) => f.key.name));
    const missing = [...d.fields.keys()].filter((name) => !given.has(name));
    // A field name written wrong is one mistake, not a missing field plus an unknown one: it is
    // reported once, as the unknown field, with the missing field it is closest to.
    const claimed = new Set<string>();
    for (const f of e.fields) {
      const want = d.fields.get(f.key.name);
      if (want === undefined) {
        const s = this.ctx.suggestFrom(
          f.key.name,
          missing.filter((m) => !claimed.has(m)),
        );
        if (s !== undefined) claimed.add(s.name);
        this.ctx.report(
          "E0215",
          f.key.span,
          `Record type ${tyText(d)} has no field "${f.key.name}"${s === undefined ? "" : `: did you mean "${s.name}"?`}`,
          s === undefined ? {} : { suggestion: s },
        );
        continue;
      }
      if (f.value !== undefined) this.value(f.value, want, code);
    }
    for (const name of missing) {
      if (claimed.has(name)) continue;
      this.ctx.report(
        "E0214",
        e.span,
        `Record literal is missing field "${name}" of type ${tyText(d.fields.get(name)!)}: add ${name}=…`,
      );
    }
  }
}

const EFFECT_ID: Ty = { k: "prim", name: "EffectId", text: "EffectId" };

/** Whether a primitive's name is a number's (`Number`: an Int or a Float, which is not known). */
function isNumber(name: string): boolean {
  return name === "Int" || name === "Float" || name === "Number";
}

/** What every record answers besides its fields: an updated copy, and its text. */
const RECORD_MEMBERS: ReadonlySet<string> = new Set(["copy", "show"]);

/** The primitive types an expression's type is read off from (literals, operators). */
const PRIM = {
  Int: { k: "prim", name: "Int", text: "Int" },
  Float: { k: "prim", name: "Float", text: "Float" },
  Text: { k: "prim", name: "Text", text: "Text" },
  Bool: { k: "prim", name: "Bool", text: "Bool" },
  /** A number not known to be Int or Float (`a / b` of two Ints): only operators read it. */
  Number: { k: "prim", name: "Number", text: "a number" },
} as const satisfies Record<string, Ty>;

const MOTION_PROPERTIES: ReadonlySet<string> = new Set([
  "opacity",
  "translate-x",
  "translate-y",
  "scale",
  "rotate",
]);
const MOTION_EASINGS: ReadonlySet<string> = new Set(["linear", "ease", "ease-in", "ease-out", "ease-in-out"]);
const MOTION_DURATIONS: ReadonlySet<string> = new Set(["fast", "normal", "slow"]);
const MOTION_DIRECTIONS: ReadonlySet<string> = new Set([
  "normal",
  "reverse",
  "alternate",
  "alternate-reverse",
]);

/** The value of a number literal, negated or not. */
function numberOf(e: Expr): number | undefined {
  if (e.kind === "Number") return e.value;
  if (e.kind === "Unary" && e.op === "-" && e.operand.kind === "Number") return -e.operand.value;
  return undefined;
}

/** Whether `e` is a literal shape {@link DefinitionChecker.value} judges (the rest is left alone). */
function isLiteral(e: Expr): boolean {
  switch (e.kind) {
    case "Number":
    case "String":
    case "Bool":
    case "Unit":
    case "List":
    case "Tuple":
    case "Map":
    case "Record":
      return true;
    case "If":
      return isLiteral(e.then) || isLiteral(e.else);
    case "Ident":
      return isCapitalized(e.name);
    case "Call":
      return e.callee.kind === "Ident" && isCapitalized(e.callee.name);
    default:
      return false;
  }
}

function mergeInto(into: Map<string, Span>, from: ReadonlyMap<string, Span>): void {
  for (const [k, v] of from) if (!into.has(k)) into.set(k, v);
}

/** Whether a tile body renders a `route-outlet` anywhere. */
function usesRouteOutlet(e: Expr): boolean {
  switch (e.kind) {
    case "TileCall":
      if (e.callee.name === "route-outlet") return true;
      return (
        (e.args ?? []).some(usesRouteOutlet) ||
        (e.fields ?? []).some((f) => f.value !== undefined && usesRouteOutlet(f.value))
      );
    case "Ident":
      return e.name === "route-outlet";
    case "For":
    case "When":
      return usesRouteOutlet(e.body);
    case "If":
      return usesRouteOutlet(e.then) || usesRouteOutlet(e.else);
    case "Match":
      return e.arms.some((a) => usesRouteOutlet(a.body));
    case "Let":
      return usesRouteOutlet(e.body);
    default:
      return false;
  }
}
