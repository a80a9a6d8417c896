/**
 * The checks of one definition: scopes, references, types, effects, capabilities, routes and
 * motions, as diagnostics of the registry (codes.ts).
 */
import type {
  AppDef,
  EffectDef,
  FnDef,
  Ident,
  MotionDef,
  ReducerDef,
  RouteEntry,
  SlotDef,
  TestDef,
  TileDef,
  TypeDef,
  TypeExpr,
} from "../lang/ast.js";
import type { NameSuggestion } from "../lang/similarity.js";
import { STANDARD_CAPABILITIES } from "../lang/stdlib.js";
import type { CheckContext } from "./context.js";
import { expr } from "./definition-expressions.js";
import { newWalk, ref, remainingSites, resolveType, typeExpr, type Walk } from "./definition-names.js";
import { chainedRunReducers, emit, statements } from "./definition-statements.js";
import {
  bind,
  type Env,
  field,
  MOTION_DIRECTIONS,
  MOTION_DURATIONS,
  MOTION_EASINGS,
  MOTION_PROPERTIES,
  numberOf,
  type Scope,
  usesRouteOutlet,
} from "./definition-support.js";
import { checkValue } from "./definition-values.js";
import type { CheckInput } from "./graph.js";
import { notFoundPatch } from "./patch.js";
import { typeText } from "./types.js";

/**
 * Checks one definition: everything whose answer depends on the definition itself and what it
 * reads through the context (targets, the app, the timer names, the names of a layer).
 */
export function checkDefinition(ctx: CheckContext): void {
  run(newWalk(ctx));
}

/** The checks of the definition's kind. */
function run(walk: Walk): void {
  const def = walk.node.def;
  switch (def.kind) {
    case "TypeDef":
      typeDef(walk, def);
      break;
    case "SlotDef":
      slotDef(walk, def);
      break;
    case "EffectDef":
      effectDef(walk, def);
      break;
    case "ReducerDef":
      reducerDef(walk, def);
      break;
    case "TileDef":
      tileDef(walk, def);
      break;
    case "FnDef":
      fnDef(walk, def);
      break;
    case "AppDef":
      appDef(walk, def);
      break;
    case "TestDef":
      testDef(walk, def);
      break;
    case "MotionDef":
      motionDef(walk, def);
      break;
    default:
      break;
  }
  remainingSites(walk);
}

function typeDef(walk: Walk, def: TypeDef): void {
  typeExpr(walk, def.body, new Set(def.params.map((p) => p.name)));
}

// ───────────── definitions ─────────────
function slotDef(walk: Walk, def: SlotDef): void {
  if (def.name.name === "route") {
    walk.ctx.report(
      "E0115",
      def.name.span,
      `Slot "route" collides with the router-maintained route slot; reads of it never see this slot: rename the slot`,
    );
  }
  typeExpr(walk, def.type);
  if (def.init === undefined) return;
  const env: Env = { scope: null, where: "slot" };
  expr(walk, def.init, env);
  checkValue(walk, def.init, resolveType(walk, def.type), "E0201", env);
}

function effectDef(walk: Walk, def: EffectDef): void {
  typeExpr(walk, def.in);
  typeExpr(walk, def.out);
  const input = bind(null, "$1", resolveType(walk, def.in));
  if (def.policy?.key !== undefined) expr(walk, def.policy.key, { scope: input, where: "effect" });
  if (def.mapRequest !== undefined) expr(walk, def.mapRequest, { scope: input, where: "effect" });
  if (def.cap.name === "http.cancel") {
    const isPrim = (t: TypeExpr, name: string): boolean =>
      t.kind === "TypeRef" && t.name.name === name && (t.args ?? []).length === 0;
    const name = def.name.name;
    if (!isPrim(def.in, "EffectId") || !isPrim(def.out, "Unit")) {
      walk.ctx.report(
        "E0303",
        def.name.span,
        `effect "${name}" with cap=http.cancel must declare in=EffectId out=Unit (it has in=${typeText(def.in)} out=${typeText(def.out)})`,
      );
    }
    if (def.policy !== undefined)
      walk.ctx.report(
        "E0303",
        def.policy.span,
        `effect "${name}" with cap=http.cancel cannot declare a policy: remove policy=`,
      );
    if (def.retry !== undefined)
      walk.ctx.report(
        "E0303",
        def.retry.span,
        `effect "${name}" with cap=http.cancel cannot declare retry: remove retry=`,
      );
    if (def.mapRequest !== undefined)
      walk.ctx.report(
        "E0303",
        def.mapRequest.span,
        `effect "${name}" with cap=http.cancel cannot declare map-request: remove map-request=`,
      );
  }
}

function reducerDef(walk: Walk, def: ReducerDef): void {
  const on = def.on;
  if (on.kind === "UiEvent" && on.selector.kind === "Selector") ref(walk, on.selector.tile);
  else if (on.kind === "EffectEvent") ref(walk, on.effect);
  else if (on.kind === "TileEvent") ref(walk, on.tile);
  const env: Env = { scope: null, where: "reducer" };
  statements(walk, def.body, env, new Map());
}

function tileDef(walk: Walk, def: TileDef): void {
  let scope: Scope | null = null;
  if (def.in !== undefined) {
    typeExpr(walk, def.in);
    scope = bind(scope, "$1", resolveType(walk, def.in));
  }
  if (def.errorBoundary !== undefined) ref(walk, def.errorBoundary);
  if (def.subRoutes !== undefined) subRoutes(walk, def, def.subRoutes);
  expr(walk, def.body, { scope, where: "tile" });
}

function subRoutes(walk: Walk, def: TileDef, routes: readonly RouteEntry[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    if (r.kind === "Route") ref(walk, r.target);
    const path = r.path.value;
    if (seen.has(path)) {
      walk.ctx.report(
        "E0112",
        r.path.span,
        `Sub-route path "${path}" is declared more than once in tile "${def.name.name}": remove the duplicate or rename one`,
      );
    }
    seen.add(path);
  }
  if (!usesRouteOutlet(def.body)) {
    walk.ctx.report(
      "E0113",
      def.name.span,
      `Tile "${def.name.name}" declares sub-routes but its body never calls "route-outlet" — the matched child would have nowhere to render: add route-outlet()`,
    );
  }
  const app = walk.ctx.app();
  if (app === undefined) return;
  const parents = ((app.def as AppDef).routes ?? []).filter(
    (r): r is Extract<RouteEntry, { kind: "Route" }> =>
      r.kind === "Route" && routesTo(walk, app, r.target, walk.node),
  );
  if (parents.length === 0) {
    walk.ctx.report(
      "E0111",
      def.name.span,
      `Tile "${def.name.name}" declares sub-routes but is not the target of any route in app.routes: add a "/…/*" route to it`,
    );
    return;
  }
  for (const p of parents) {
    if (!p.path.value.endsWith("/*")) {
      walk.ctx.report(
        "E0114",
        def.name.span,
        `Tile "${def.name.name}" declares sub-routes but its parent route "${p.path.value}" is not a wildcard pattern (must end with "/*")`,
      );
    }
  }
}

/** Whether the route target `id` in `app` resolves to `tile`. */
function routesTo(walk: Walk, app: CheckInput, id: Ident, tile: CheckInput): boolean {
  return walk.ctx.resolve(app, id).target?.id === tile.id;
}

function fnDef(walk: Walk, def: FnDef): void {
  let scope: Scope | null = null;
  def.params.forEach((p, i) => {
    typeExpr(walk, p.type);
    const ty = resolveType(walk, p.type);
    scope = bind(bind(scope, p.name.name, ty), `$${i + 1}`, ty);
  });
  if (def.returnType !== undefined) typeExpr(walk, def.returnType);
  const env: Env = { scope, where: "fn" };
  expr(walk, def.body, env);
  if (def.returnType !== undefined)
    checkValue(walk, def.body, resolveType(walk, def.returnType), "E0201", env);
}

function appDef(walk: Walk, def: AppDef): void {
  const declared = new Set<string>();
  for (const c of def.caps ?? []) {
    if (declared.has(c.name))
      walk.ctx.report(
        "W0230",
        c.span,
        `Capability "${c.name}" is declared more than once in app.caps: remove this repeated entry`,
      );
    declared.add(c.name);
    if (!STANDARD_CAPABILITIES.has(c.name) && !walk.ctx.settings.registeredCaps.has(c.name)) {
      const s = nearestCap(walk, c.name);
      walk.ctx.report(
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
        ref(walk, r.target);
        if (r.path.value === "/404") has404 = true;
      }
    }
    if (!has404) {
      const existing = walk.ctx.lookup("tile", "NotFound");
      const autoPatch = notFoundPatch(walk.node, "NotFound", existing === undefined);
      walk.ctx.report(
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
      emit(walk, e.callee, e.args, env, walk.node);
      continue;
    }
    walk.ctx.report(
      "E0104",
      e.span,
      "app.init entries must be effect calls: write an effect call such as load()",
      {
        kind: "init-not-effect-call",
      },
    );
    expr(walk, e, env);
  }
  if (def.http !== undefined) {
    for (const f of def.http.fields) {
      if (f.value === undefined) continue;
      if (f.value.kind === "Ident" && walk.ctx.siteAt(walk.node, f.value.span.offset)?.role === "handler")
        ref(walk, f.value);
      else expr(walk, f.value, env);
    }
  }
}

function nearestCap(walk: Walk, name: string): NameSuggestion | undefined {
  return walk.ctx.suggestFrom(name, [...STANDARD_CAPABILITIES, ...walk.ctx.settings.registeredCaps]);
}

/** The closed grammar of a motion (style.md §4.9.1): E0401–E0403. */
function motionDef(walk: Walk, def: MotionDef): void {
  const name = def.name.name;
  const fields = def.body.fields;
  const keyframes = field(fields, "keyframes");
  const kf = keyframes?.value;
  if (kf?.kind !== "Record") {
    walk.ctx.report(
      "E0403",
      (kf ?? def.body).span,
      `motion "${name}" must declare a "keyframes" record: add keyframes: {from: {…}, to: {…}}`,
    );
  } else {
    for (const stop of ["from", "to"]) {
      if (field(kf.fields, stop)?.value?.kind !== "Record")
        walk.ctx.report("E0403", kf.span, `motion "${name}" keyframes must include a "${stop}" record`);
    }
    for (const stop of kf.fields) {
      if (stop.key.name !== "from" && stop.key.name !== "to") {
        walk.ctx.report(
          "E0403",
          stop.key.span,
          `motion "${name}" keyframes support only "from" / "to" (got "${stop.key.name}")`,
        );
        continue;
      }
      if (stop.value?.kind !== "Record") continue;
      for (const prop of stop.value.fields) {
        if (!MOTION_PROPERTIES.has(prop.key.name)) {
          walk.ctx.report(
            "E0401",
            prop.key.span,
            `motion "${name}": unknown keyframe property "${prop.key.name}" (allowed: ${[...MOTION_PROPERTIES].join(", ")})`,
          );
        } else if (prop.value === undefined || numberOf(prop.value) === undefined) {
          walk.ctx.report(
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
    if (problem !== undefined) walk.ctx.report("E0402", f.span, `motion "${name}": ${problem}`);
  }
}

function testDef(walk: Walk, def: TestDef): void {
  const body = def.body;
  if (body.kind === "ReducerTest" || body.kind === "TileTest") ref(walk, body.target);
  if (body.kind === "PropertyTest") chainedRunReducers(walk, body.invariant);
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
        if (v?.kind === "Ident") walk.seen.add(v.span.offset);
        walk.ctx.report(
          "E0712",
          (v ?? m).span,
          `Mock for "${m.key.name}" must be \`from-log\`, \`ignore\`, \`ok(...)\`, or \`err(...)\``,
        );
      }
    }
  }
  // The rest of a test body is a schema read by name; its sites are answered by their role.
}
