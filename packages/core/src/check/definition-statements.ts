/**
 * The checks of statements: scopes through a block, assignments and the paths they write, timers, effects emitted and the capabilities they need.
 */
import type { Expr, Ident, Statement } from "../lang/ast.js";
import type { Span } from "../lang/span.js";
import { BUILTIN_EFFECTS, RUN_REDUCER } from "../lang/stdlib.js";
import { expr } from "./definition-expressions.js";
import { nameError, ref, resolveType, type Walk } from "./definition-names.js";
import { bind, type Env, isLiteral, mergeInto } from "./definition-support.js";
import { checkValue, condition, indexable, pattern, typeOf } from "./definition-values.js";
import type { CheckInput } from "./graph.js";
import { bodyLine } from "./patch.js";
import { lazyTy, structural, type Ty, UNKNOWN } from "./types.js";
// ───────────── statements ─────────────

/** Walks a statement list; `written` maps each slot path shape already written to its span. */
export function statements(
  walk: Walk,
  list: readonly Statement[],
  outer: Env,
  written: Map<string, Span>,
): void {
  let env = outer;
  for (const s of list) {
    switch (s.kind) {
      case "LetStmt":
        expr(walk, s.value, env);
        {
          const value = s.value;
          const at = env;
          env = {
            ...env,
            scope: bind(
              env.scope,
              s.name.name,
              lazyTy(() => typeOf(walk, value, at)),
            ),
          };
        }
        break;
      case "AssignStmt":
        assign(walk, s, env, written);
        break;
      case "EmitStmt":
        emit(walk, s.effect, s.args, env);
        break;
      case "IfStmt": {
        expr(walk, s.cond, env);
        condition(walk, s.cond, "if", env);
        const a = new Map(written);
        statements(walk, s.then, env, a);
        const b = new Map(written);
        if (s.else !== undefined) statements(walk, s.else, env, b);
        mergeInto(written, a);
        mergeInto(written, b);
        break;
      }
      case "MatchStmt": {
        expr(walk, s.subject, env);
        const subject = lazyTy(() => typeOf(walk, s.subject, env));
        const arms: Map<string, Span>[] = [];
        for (const arm of s.arms) {
          const scope = pattern(walk, arm.pattern, subject, env.scope);
          const w = new Map(written);
          statements(walk, arm.body, { ...env, scope }, w);
          arms.push(w);
        }
        for (const w of arms) mergeInto(written, w);
        break;
      }
      case "ForStmt": {
        expr(walk, s.iterable, env);
        const w = new Map(written);
        statements(walk, s.body, { ...env, scope: bind(env.scope, s.binder.name) }, w);
        mergeInto(written, w);
        break;
      }
      case "BlockStmt":
        statements(walk, s.body, env, written);
        break;
      case "StopTimerStmt":
        stopTimer(walk, s.timer);
        break;
      case "PanicStmt":
        expr(walk, s.message, env);
        break;
      case "NoopStmt":
        break;
    }
  }
}

function assign(
  walk: Walk,
  s: Extract<Statement, { kind: "AssignStmt" }>,
  env: Env,
  written: Map<string, Span>,
): void {
  const steps: string[] = [];
  let root: Expr = s.target;
  while (root.kind === "Member" || root.kind === "Index") {
    if (root.kind === "Member") steps.unshift(`.${root.property.name}`);
    else {
      steps.unshift("[]");
      expr(walk, root.index, env);
    }
    root = root.object;
  }
  let slotTy: Ty = UNKNOWN;
  if (root.kind === "Ident") {
    const target = ref(walk, root, env);
    if (target !== undefined && target.def.kind === "SlotDef")
      slotTy = resolveType(walk, target.def.type, target);
    const shape = root.name + steps.join("");
    const first = written.get(shape);
    if (first !== undefined) {
      const line = bodyLine(walk.node, first);
      walk.ctx.report(
        "E0601",
        s.target.span,
        `Slot path "${shape}" is written more than once in reducer "${walk.node.def.name.name}" (first at body:${line}): combine the writes into one assignment, or put them in exclusive branches`,
      );
    } else {
      written.set(shape, s.target.span);
    }
  } else {
    expr(walk, root, env);
  }
  for (let at: Expr = s.target; at.kind === "Member" || at.kind === "Index"; at = at.object)
    if (at.kind === "Index") indexable(walk, at.object, pathType(walk, slotTy, at.object));
  expr(walk, s.value, env);
  checkValue(walk, s.value, pathType(walk, slotTy, s.target), "E0201", env);
}

/** The declared type at an assignment path (`todos[id].done`), or unknown. */
function pathType(walk: Walk, rootTy: Ty, target: Expr): Ty {
  if (target.kind === "Ident") return rootTy;
  if (target.kind !== "Member" && target.kind !== "Index") return UNKNOWN;
  const base = structural(pathType(walk, rootTy, target.object));
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

function stopTimer(walk: Walk, timer: Ident): void {
  if (walk.ctx.hasTimer(timer.name)) return;
  const s = walk.ctx.suggestFrom(timer.name, walk.ctx.timerNames());
  nameError(
    walk,
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
export function emit(
  walk: Walk,
  effect: Ident,
  args: readonly Expr[],
  env: Env,
  capsOwner?: CheckInput,
): void {
  const target = ref(walk, effect, env);
  let cap: string | null = null;
  let arity: number | undefined;
  let input: Ty = UNKNOWN;
  let name = effect.name;
  if (target !== undefined && target.def.kind === "EffectDef") {
    const def = target.def;
    name = def.name.name;
    cap = def.cap.name;
    const unit = def.in.kind === "TypeRef" && def.in.name.name === "Unit" && (def.in.args ?? []).length === 0;
    arity = unit ? 0 : 1;
    if (!unit && args[0] !== undefined && isLiteral(args[0])) input = resolveType(walk, def.in, target);
  } else if (target === undefined && walk.ctx.siteAt(walk.node, effect.span.offset) !== undefined) {
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
        if ((f.key.name === "onYes" || f.key.name === "onNo") && v?.kind === "Ident") ref(walk, v, env);
        else if (v !== undefined) expr(walk, v, env);
        else expr(walk, f.key, env);
      }
      continue;
    }
    expr(walk, a, env);
  }
  if (arity !== undefined && args.length !== arity) {
    walk.ctx.report(
      "E0213",
      effect.span,
      `Effect "${name}" expects ${arity} argument(s) but got ${args.length}${arity === 0 ? " (it declares in=Unit)" : ""}`,
    );
  } else if (arity === 1 && args[0] !== undefined) {
    checkValue(walk, args[0], input, "E0202", env);
  }
  if (cap !== null) requireCap(walk, effect, name, cap, capsOwner);
}

/**
 * E0301 when `cap` is not declared: by `owner`'s caps (an `app.init` entry, checked against its
 * own app), else by the app's.
 */
function requireCap(walk: Walk, at: Ident, effect: string, cap: string, owner?: CheckInput): void {
  const app = owner ?? walk.ctx.app();
  if (app === undefined || app.def.kind !== "AppDef") return;
  if ((app.def.caps ?? []).some((c) => c.name === cap)) return;
  walk.ctx.reportNeed(
    "E0301",
    at.span,
    `Effect "${effect}" requires capability "${cap}" which is not declared in app.caps: add ${cap} to the caps of app ${app.def.name.name}`,
    { app: app.id, cap },
  );
}

/**
 * `run-reducer(inc).run-reducer(dec)`: the chained spelling names a reducer as a method argument,
 * which reference extraction reads as a value. It is a reducer name.
 */
export function chainedRunReducers(walk: Walk, e: Expr): void {
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
      walk.seen.add(arg.span.offset);
      const res = walk.ctx.resolve(walk.node, arg);
      if (res.target?.def.kind !== "ReducerDef" && walk.ctx.lookup("reducer", arg.name) === undefined) {
        const s = walk.ctx.suggest(arg.name, ["reducer"]);
        nameError(
          walk,
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
