/**
 * The checks of expressions: names, members, calls (built-in, fn, qualified), tile calls and their handlers, the built-in tiles.
 */
import type { Expr, FnDef, Ident, TileCall } from "../lang/ast.js";
import { BUILTIN_TILES, HANDLER_NAMES } from "../lang/parser/builtins.js";
import {
  BUILTIN_CALLS,
  DOMAIN_TYPES,
  QUALIFIED_CALLS,
  RUN_REDUCER,
  TOKEN_GROUPS,
  TYPE_MEMBER_CALLS,
  UNIMPLEMENTED_CALLS,
} from "../lang/stdlib.js";
import { nameError, ref, resolveType, typeError, unresolved, type Walk } from "./definition-names.js";
import { emit } from "./definition-statements.js";
import {
  bind,
  type Env,
  field,
  handlerName,
  isCapitalized,
  lookupLocal,
  RECORD_MEMBERS,
} from "./definition-support.js";
import {
  checkValue,
  condition,
  effectIdMisuse,
  indexable,
  isEffectId,
  operandTypes,
  pattern,
  typeOf,
  unaryTypes,
  unknownField,
} from "./definition-values.js";
import type { CheckInput } from "./graph.js";
import { renamePatch } from "./patch.js";
import { lazyTy, structural, typeText, tyText } from "./types.js";
// ───────────── expressions ─────────────
export function expr(walk: Walk, e: Expr, env: Env): void {
  switch (e.kind) {
    case "Ident":
      nameRef(walk, e, env);
      return;
    case "DollarRef":
      dollarRef(walk, e, env);
      return;
    case "TokenRef":
      tokenRef(walk, e);
      return;
    case "AnyId":
    case "SlotWildcard":
      wildcard(walk, e, env);
      return;
    case "Member":
      if (!(e.object.kind === "Ident" && isCapitalized(e.object.name))) {
        expr(walk, e.object, env);
        memberAccess(walk, e, env);
      } else ref(walk, e.object, env);
      return;
    case "Index":
      expr(walk, e.object, env);
      expr(walk, e.index, env);
      indexable(walk, e.object, typeOf(walk, e.object, env));
      return;
    case "Call":
      call(walk, e, env);
      return;
    case "Unary":
      unaryExpr(walk, e, env);
      return;
    case "Binary":
      binaryExpr(walk, e, env);
      return;
    case "If":
      expr(walk, e.cond, env);
      condition(walk, e.cond, "if", env);
      expr(walk, e.then, env);
      expr(walk, e.else, env);
      return;
    case "Null":
      // language.md §1: null is reserved and prohibited in programs (the public toolchain
      // refuses it while parsing; here it is the type error the spec names).
      typeError(
        walk,
        e.span,
        "null is not a value in Kumiki: use an Option (None, or Some(x)) where a value may be absent",
      );
      return;
    case "Match":
      matchExpr(walk, e, env);
      return;
    case "Let":
      letExpr(walk, e, env);
      return;
    case "Emit":
      emitExpr(walk, e, env);
      return;
    case "Record":
      for (const f of e.fields) {
        if (f.value === undefined) nameRef(walk, f.key, env);
        else expr(walk, f.value, env);
      }
      return;
    case "Map":
      for (const entry of e.entries) {
        expr(walk, entry.key, env);
        expr(walk, entry.value, env);
      }
      return;
    case "List":
    case "Tuple":
      for (const i of e.items) expr(walk, i, env);
      return;
    case "TileCall":
      tileCall(walk, e, env);
      return;
    case "For": {
      expr(walk, e.iterable, env);
      expr(walk, e.body, { ...env, scope: bind(env.scope, e.binder.name) });
      return;
    }
    case "When":
      expr(walk, e.cond, env);
      condition(walk, e.cond, "when", env);
      expr(walk, e.body, env);
      return;
    default:
      return;
  }
}

/** A unary operation: its operand, then an effect id misused or the operand's type. */
function unaryExpr(walk: Walk, e: Extract<Expr, { kind: "Unary" }>, env: Env): void {
  expr(walk, e.operand, env);
  if (e.op === "-" && isEffectId(walk, e.operand, env)) effectIdMisuse(walk, e.span, "-");
  else unaryTypes(walk, e, env);
}

/** A binary operation: its operands, then an effect id misused (but in `==`, `!=`) or their types. */
function binaryExpr(walk: Walk, e: Extract<Expr, { kind: "Binary" }>, env: Env): void {
  expr(walk, e.left, env);
  expr(walk, e.right, env);
  if (e.op !== "==" && e.op !== "!=" && (isEffectId(walk, e.left, env) || isEffectId(walk, e.right, env)))
    effectIdMisuse(walk, e.span, e.op);
  else operandTypes(walk, e, env);
}

/** A match: its subject, then each arm's body in the scope its pattern binds. */
function matchExpr(walk: Walk, e: Extract<Expr, { kind: "Match" }>, env: Env): void {
  expr(walk, e.subject, env);
  const subject = lazyTy(() => typeOf(walk, e.subject, env));
  for (const arm of e.arms)
    expr(walk, arm.body, { ...env, scope: pattern(walk, arm.pattern, subject, env.scope) });
}

/** A let: its value, then its body with the name bound to the value's type. */
function letExpr(walk: Walk, e: Extract<Expr, { kind: "Let" }>, env: Env): void {
  expr(walk, e.value, env);
  expr(walk, e.body, {
    ...env,
    scope: bind(
      env.scope,
      e.name.name,
      lazyTy(() => typeOf(walk, e.value, env)),
    ),
  });
}

/** `$1` in a tile that declares no `in=` argument (E0103). */
function dollarRef(walk: Walk, e: Extract<Expr, { kind: "DollarRef" }>, env: Env): void {
  if (
    e.name === "$1" &&
    env.where === "tile" &&
    !env.fragment &&
    lookupLocal(env.scope, "$1") === undefined
  ) {
    walk.ctx.report(
      "E0103",
      e.span,
      `"$1" is undefined in tile "${walk.node.def.name.name}": a tile can use "$1" only if it declares an in= argument (tile ${walk.node.def.name.name} in=SomeType = …)`,
    );
  }
}

/** A theme token of a group that does not exist (E0110). */
function tokenRef(walk: Walk, e: Extract<Expr, { kind: "TokenRef" }>): void {
  const group = e.path[0];
  if (group !== undefined && !TOKEN_GROUPS.has(group.name)) {
    walk.ctx.report(
      "E0110",
      group.span,
      `Unknown theme token group "@${group.name}" (allowed: ${[...TOKEN_GROUPS].join(", ")})`,
    );
  }
}

/** A test wildcard outside a reducer-test's `expect` (E0109). */
function wildcard(walk: Walk, e: Extract<Expr, { kind: "AnyId" | "SlotWildcard" }>, env: Env): void {
  if (env.where !== "test") {
    walk.ctx.report(
      "E0109",
      e.span,
      `Test wildcard "${e.kind === "AnyId" ? "<any-id>" : `<slots.${e.slot.name}>`}" is only valid inside a reducer-test \`expect\`: remove it`,
    );
  }
}

/** `emit` as an expression: only inside a reducer body (E0305); its effect checked as a statement's. */
function emitExpr(walk: Walk, e: Extract<Expr, { kind: "Emit" }>, env: Env): void {
  if (env.where !== "reducer") {
    walk.ctx.report(
      "E0305",
      e.span,
      `emit "${e.effect.name}" used as an expression is only allowed inside a reducer body: move it into a reducer`,
    );
  }
  emit(walk, e.effect, e.args, env);
}

/**
 * E0108: `recv.m` where `recv` is known to be a record and `m` is neither one of its fields nor
 * a member every record has (stdlib.md §2.2.3's dispatch rule). Other receivers are left to the
 * name-based dispatch, as the rule says for what cannot be inferred.
 */
function memberAccess(walk: Walk, e: Extract<Expr, { kind: "Member" }>, env: Env): void {
  const base = structural(typeOf(walk, e.object, env));
  if (base.k !== "record") return;
  const name = e.property.name;
  if (base.fields.has(name) || RECORD_MEMBERS.has(name)) return;
  const s = walk.ctx.suggestFrom(name, base.fields.keys());
  // The did-you-mean as an edit of the member's name, as the other name errors give one.
  const autoPatch = s === undefined ? undefined : renamePatch(walk.node, e.property.span, name, s.name);
  walk.ctx.report(
    "E0108",
    e.property.span,
    `Record type ${tyText(base)} has no field or method ".${name}"${s === undefined ? "" : `: did you mean ".${s.name}"?`}`,
    {
      kind: "undef-member",
      ...(s === undefined ? {} : { suggestion: s }),
      ...(autoPatch === undefined ? {} : { autoPatch }),
    },
  );
}

/** A name in a value (or tile-child) position. */
function nameRef(walk: Walk, id: Ident, env: Env): void {
  if (lookupLocal(env.scope, id.name) !== undefined) return;
  const target = ref(walk, id, env);
  if (target === undefined) return;
  if (env.where === "fn" && target.def.kind === "SlotDef" && walk.node.def.kind === "FnDef") {
    walk.ctx.report(
      "E0305",
      id.span,
      `fn "${walk.node.def.name.name}" must not read slot "${target.def.name.name}": pass the slot's value as an argument`,
    );
  }
}

function call(walk: Walk, e: Extract<Expr, { kind: "Call" }>, env: Env): void {
  const callee = e.callee;
  if (callee.kind === "Ident") {
    if (lookupLocal(env.scope, callee.name) !== undefined) {
      callArgs(walk, e, env, false);
      return;
    }
    const target = ref(walk, callee, env);
    if (target !== undefined && target.def.kind === "FnDef") {
      callArgs(walk, e, env, false);
      fnCall(walk, e, callee, target, env);
      return;
    }
    if (target === undefined && !isCapitalized(callee.name)) builtinCall(walk, e, callee, env);
    callArgs(walk, e, env, false);
    return;
  }
  if (callee.kind === "Member" && callee.object.kind === "Ident" && isCapitalized(callee.object.name)) {
    qualifiedCall(walk, e, callee.object, callee.property, env);
    return;
  }
  expr(walk, callee, env);
  // The arguments of a method are fragments: `$1` / `$2` are the method's own positionals.
  callArgs(walk, e, env, callee.kind === "Member");
  if (callee.kind === "Member" && callee.property.name === "copy") copyFields(walk, e, callee.object, env);
}

/**
 * `r.copy(f = v, …)` on a record of known type (language.md: `recordCopy(rec, {f: v})`): each
 * field named must be the type's (E0215), each value of that field's type (E0201).
 */
function copyFields(walk: Walk, e: Extract<Expr, { kind: "Call" }>, object: Expr, env: Env): void {
  const t = structural(typeOf(walk, object, env));
  if (t.k !== "record" || e.fields === undefined) return;
  const inner = methodArgs(env);
  for (const f of e.fields) {
    const want = t.fields.get(f.key.name);
    if (want === undefined) unknownField(walk, f.key, t, walk.ctx.suggestFrom(f.key.name, t.fields.keys()));
    else if (f.value !== undefined) checkValue(walk, f.value, want, "E0201", inner);
  }
}

function callArgs(walk: Walk, e: Extract<Expr, { kind: "Call" }>, env: Env, fragment: boolean): void {
  const inner = fragment ? methodArgs(env) : env;
  for (const a of e.args) expr(walk, a, inner);
  for (const f of e.fields ?? []) {
    if (f.value === undefined) nameRef(walk, f.key, inner);
    else expr(walk, f.value, inner);
  }
}

function builtinCall(walk: Walk, e: Extract<Expr, { kind: "Call" }>, callee: Ident, env: Env): void {
  const name = callee.name;
  if (UNIMPLEMENTED_CALLS.has(name)) {
    walk.ctx.report(
      "E0802",
      callee.span,
      `Function "${name}" is documented but not implemented by the runtime: remove the call`,
    );
    return;
  }
  if (name === RUN_REDUCER) {
    if (env.where !== "test") {
      walk.ctx.report(
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
    walk.ctx.report("E0213", callee.span, `Function "${name}" expects ${want} argument(s) but got ${got}`);
  }
}

function fnCall(
  walk: Walk,
  e: Extract<Expr, { kind: "Call" }>,
  callee: Ident,
  target: CheckInput,
  env: Env,
): void {
  const def = target.def as FnDef;
  const got = e.args.length;
  if (got !== def.params.length) {
    walk.ctx.report(
      "E0213",
      callee.span,
      `Function "${def.name.name}" expects ${def.params.length} argument(s) but got ${got}`,
    );
    return;
  }
  def.params.forEach((p, i) => {
    const arg = e.args[i];
    if (arg !== undefined) checkValue(walk, arg, resolveType(walk, p.type, target), "E0201", env);
  });
}

/** `TodoId.fresh()`, `Duration.ms(5)`, `Decoder.Json(T)`, `Loaded.show()`. */
function qualifiedCall(
  walk: Walk,
  e: Extract<Expr, { kind: "Call" }>,
  q: Ident,
  member: Ident,
  env: Env,
): void {
  const closed = QUALIFIED_CALLS.get(q.name);
  const site = walk.ctx.siteAt(walk.node, q.span.offset);
  if (closed !== undefined && site === undefined) {
    if (!closed.has(member.name) && !(TYPE_MEMBER_CALLS.has(member.name) && e.args.length > 0)) {
      const s = walk.ctx.suggestFrom(member.name, closed);
      const full = `${q.name}.${member.name}`;
      walk.ctx.report(
        "E0116",
        member.span,
        `Call to undefined function "${full}"${s === undefined ? "" : `: did you mean "${q.name}.${s.name}"?`}`,
        s === undefined ? {} : { suggestion: { ...s, name: `${q.name}.${s.name}` } },
      );
    }
    // The payload of `Decoder.Json(T)` is a type; its names are answered as type sites.
    if (q.name === "Decoder" && member.name === "Json") return;
    callArgs(walk, e, env, false);
    return;
  }
  if (site !== undefined) {
    walk.seen.add(q.span.offset);
    const res = walk.ctx.resolve(walk.node, q);
    if (res.target === undefined && !DOMAIN_TYPES.has(q.name)) {
      if (TYPE_MEMBER_CALLS.has(member.name)) unresolved(walk, site, env);
    }
  }
  callArgs(walk, e, env, false);
}

function tileCall(walk: Walk, e: TileCall, env: Env): void {
  const name = e.callee.name;
  const builtin = BUILTIN_TILES.has(name);
  const target = builtin ? undefined : ref(walk, e.callee, env);
  const positional = e.args ?? [];
  if (target !== undefined && target.def.kind === "TileDef") {
    const def = target.def;
    const want = def.in === undefined ? 0 : 1;
    if (positional.length !== want) {
      walk.ctx.report(
        "E0213",
        e.callee.span,
        `Tile "${def.name.name}" expects ${want} argument(s) but got ${positional.length}${want === 1 ? ` (it declares in=${typeText(def.in!)})` : ""}`,
      );
    } else if (want === 1 && positional[0] !== undefined && def.in !== undefined) {
      checkValue(walk, positional[0], resolveType(walk, def.in, target), "E0201", env);
    }
  }
  for (const a of positional) expr(walk, a, env);
  for (const f of e.fields ?? []) {
    const v = f.value;
    if (v === undefined) continue;
    if (HANDLER_NAMES.has(f.key.name)) handler(walk, v, f.key, env);
    else expr(walk, v, env);
  }
  for (const f of e.props?.fields ?? []) {
    const v = f.value;
    if (v === undefined) continue;
    const key = f.key.name;
    if (HANDLER_NAMES.has(key)) handler(walk, v, f.key, env);
    else if ((key === "motion" || key === "prefetch") && v.kind === "String") stringRef(walk, v);
    else if (key === "prefetch" && v.kind === "Ident") ref(walk, v, env);
    else expr(walk, v, env);
  }
  if (builtin) builtinTile(walk, e);
  if (name === "text" && positional[0] !== undefined && isEffectId(walk, positional[0], env)) {
    walk.ctx.report(
      "E0204",
      positional[0].span,
      "text(...) cannot render EffectId — it is an opaque handle: render something else",
    );
  }
}

/** A name held in a string (`{motion: "Spin"}`): its site is the string's contents. */
function stringRef(walk: Walk, s: Extract<Expr, { kind: "String" }>): void {
  if (s.value === "") return;
  ref(walk, { name: s.value, span: { ...s.span, offset: s.span.offset + 1, column: s.span.column + 1 } });
}

function handler(walk: Walk, v: Expr, key: Ident, env: Env): void {
  const id = handlerName(v);
  if (id === undefined) {
    walk.ctx.report(
      "E0201",
      v.span,
      `Event handler "${key.name}" must be a reducer name: write ${key.name}=someReducer`,
    );
    expr(walk, v, env);
    return;
  }
  const site = walk.ctx.siteAt(walk.node, id.span.offset);
  if (site !== undefined && site.role === "handler") {
    ref(walk, id, env);
    return;
  }
  // A capitalized reducer name parses as a tile or a variant; it is still a reducer name here.
  if (site !== undefined) walk.seen.add(id.span.offset);
  const target = site === undefined ? undefined : walk.ctx.resolve(walk.node, id).target;
  if (target?.def.kind === "ReducerDef" || walk.ctx.lookup("reducer", id.name) !== undefined) return;
  const s = walk.ctx.suggest(id.name, ["reducer"]);
  nameError(
    walk,
    "E0102",
    "undef-reducer",
    id.span,
    id.name,
    s,
    `Reference to undefined reducer "${id.name}" in ${walk.node.def.layer}.${walk.node.def.name.name}`,
    "declare the reducer",
  );
}

/** Checks of a built-in tile's own arguments: file inputs and, under --a11y, labels. */
function builtinTile(walk: Walk, e: TileCall): void {
  const name = e.callee.name;
  const fields = e.fields;
  const props = e.props?.fields;
  const has = (key: string): boolean => field(fields, key) !== undefined || field(props, key) !== undefined;
  if (name === "input") {
    const typeValue = field(fields, "type")?.value;
    const isFile = typeValue?.kind === "String" && typeValue.value === "file";
    const bindField = field(fields, "bind");
    if (isFile && bindField !== undefined) {
      walk.ctx.report(
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
        walk.ctx.report(
          "E0206",
          f.span,
          `input prop "${key}" requires type="file" (got ${observed}); accept/multiple are only valid on file inputs`,
        );
      }
    }
  }
  if (!walk.ctx.settings.a11y) return;
  if (name === "button" && !has("text") && !has("aria-label")) {
    walk.ctx.report(
      "E0701",
      e.span,
      'button must have a text= argument or aria-label prop: add text="…"',
      {},
    );
  }
  if (name === "image" && !has("alt")) {
    walk.ctx.report(
      "E0702",
      e.span,
      'image must have an alt prop: add alt="…" (alt="" for a decorative image)',
    );
  }
  if (name === "link" && (e.args ?? []).length === 0 && !has("text") && !has("aria-label")) {
    walk.ctx.report("E0703", e.span, 'link must have inner text or aria-label: add text="…"');
  }
}

/** The scope of a method's arguments: fragments, where `$1` / `$2` are the method's positionals. */
function methodArgs(env: Env): Env {
  return { ...env, fragment: true, scope: bind(bind(env.scope, "$1"), "$2") };
}
