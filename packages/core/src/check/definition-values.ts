/**
 * Types of expressions and values against declared types: inference (`typeOf`), patterns, literals, records and variants, operator operands and conditions (E02xx).
 */
import type { Expr, Ident, Pattern } from "../lang/ast.js";
import type { NameSuggestion } from "../lang/similarity.js";
import type { Span } from "../lang/span.js";
import { nameError, resolveType, typeError, type Walk } from "./definition-names.js";
import {
  bind,
  EFFECT_ID,
  type Env,
  isCapitalized,
  isLiteral,
  isNumber,
  lookupLocal,
  PRIM,
  type Scope,
} from "./definition-support.js";
import { structural, type Ty, tyText, UNKNOWN, variantsOf } from "./types.js";
// ───────────── types of expressions ─────────────

/** The type of `e` when it can be read off a declaration exactly; unknown otherwise. */
export function typeOf(walk: Walk, e: Expr, env: Env): Ty {
  switch (e.kind) {
    case "Ident": {
      const local = lookupLocal(env.scope, e.name);
      if (local !== undefined) return local.ty;
      const site = walk.ctx.siteAt(walk.node, e.span.offset);
      if (site === undefined) return UNKNOWN;
      const target = walk.ctx.resolve(walk.node, e).target;
      if (target !== undefined && target.def.kind === "SlotDef")
        return resolveType(walk, target.def.type, target);
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
      const t = structural(typeOf(walk, e.operand, env));
      return t.k === "prim" && isNumber(t.name) ? t : UNKNOWN;
    }
    case "Binary": {
      if (["==", "!=", "<", ">", "<=", ">=", "&&", "||"].includes(e.op)) return PRIM.Bool;
      const l = structural(typeOf(walk, e.left, env));
      const r = structural(typeOf(walk, e.right, env));
      if (l.k !== "prim" || r.k !== "prim") return UNKNOWN;
      if (e.op === "+" && (l.name === "Text" || r.name === "Text")) return PRIM.Text;
      if (!isNumber(l.name) || !isNumber(r.name)) return UNKNOWN;
      if (l.name === "Float" || r.name === "Float") return PRIM.Float;
      // Int / Int is a number; whether Int or Float is not this check's to guess.
      if (e.op === "/" || l.name === "Number" || r.name === "Number") return PRIM.Number;
      return PRIM.Int;
    }
    case "Member": {
      const base = structural(typeOf(walk, e.object, env));
      if (base.k === "record") return base.fields.get(e.property.name) ?? memberOf(base, e.property.name);
      if (base.k === "app" && (base.name === "Option" || base.name === "Result") && e.property.name === "get")
        return base.args[0] ?? UNKNOWN;
      return memberOf(base, e.property.name);
    }
    case "Index": {
      const base = structural(typeOf(walk, e.object, env));
      if (base.k === "app" && base.name === "Map") return base.args[1] ?? UNKNOWN;
      if (base.k === "app" && base.name === "List") return base.args[0] ?? UNKNOWN;
      return UNKNOWN;
    }
    case "Tuple": {
      const args = e.items.map((i) => typeOf(walk, i, env));
      return { k: "app", name: "Tuple", args, text: `Tuple(${args.map(tyText).join(", ")})` };
    }
    default:
      return UNKNOWN;
  }
}

/** Brings a pattern's binds into scope, checking its variants against the subject's type. */
export function pattern(walk: Walk, p: Pattern, subject: Ty, scope: Scope | null): Scope | null {
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
        walk.ctx.report(
          "E0208",
          p.span,
          `Tuple pattern cannot match scrutinee of type "${tyText(subject)}"`,
          {
            kind: "pat-type-mismatch",
          },
        );
      } else if (items !== undefined && items.length !== p.items.length) {
        walk.ctx.report(
          "E0207",
          p.span,
          `Tuple pattern has ${p.items.length} item(s) but the scrutinee type "${tyText(subject)}" has ${items.length}`,
        );
      }
      let s = scope;
      p.items.forEach((item, i) => {
        s = pattern(walk, item, items?.[i] ?? UNKNOWN, s);
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
        walk.ctx.report(
          "E0208",
          p.span,
          `Variant pattern "${tag}" cannot match scrutinee of type "${tyText(subject)}"`,
          {
            kind: "pat-type-mismatch",
          },
        );
      } else if (variants !== undefined && payloads === undefined) {
        const s = walk.ctx.suggestFrom(tag, variants.keys());
        nameError(
          walk,
          "E0209",
          "pat-unknown-variant",
          p.variant.span,
          tag,
          s,
          `Variant "${tag}" is not a member of scrutinee type "${tyText(subject)}"`,
          `use one of ${[...variants.keys()].join(", ")}`,
        );
      } else if (payloads !== undefined && p.args !== undefined && p.args.length !== payloads.length) {
        walk.ctx.report(
          "E0207",
          p.span,
          `Variant "${tag}" pattern has ${p.args.length} bind(s) but the variant carries ${payloads.length} payload(s)`,
        );
      }
      let s = scope;
      (p.args ?? []).forEach((a, i) => {
        s = pattern(walk, a, payloads?.[i] ?? UNKNOWN, s);
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
export function checkValue(walk: Walk, e: Expr, declared: Ty, code: "E0201" | "E0202", env?: Env): void {
  if (!isLiteral(e)) {
    if (env !== undefined) typedValue(walk, e, declared, code, env);
    return;
  }
  const d = structural(declared);
  if (d.k === "unknown") return;
  const mismatch = (actual: string): void => {
    const want = tyText(declared);
    walk.ctx.report(
      code,
      e.span,
      `Expected ${want} but got ${actual}: write ${/^[AEIOU]/.test(want) ? "an" : "a"} ${want}`,
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
          walk.ctx.report(
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
      checkValue(walk, e.then, declared, code, env);
      checkValue(walk, e.else, declared, code, env);
      return;
    case "List":
      if (d.k === "app" && (d.name === "List" || d.name === "Set")) {
        for (const item of e.items) checkValue(walk, item, d.args[0] ?? UNKNOWN, code, env);
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
          checkValue(walk, item, d.args[i] ?? UNKNOWN, code, env);
        });
        return;
      }
      if (d.k === "prim" || d.k === "record" || d.k === "union")
        mismatch(`a tuple of ${e.items.length} item(s)`);
      return;
    case "Map":
      if (d.k === "app" && d.name === "Map") {
        for (const entry of e.entries) {
          checkValue(walk, entry.key, d.args[0] ?? UNKNOWN, code, env);
          checkValue(walk, entry.value, d.args[1] ?? UNKNOWN, code, env);
        }
        return;
      }
      if (d.k === "prim" && e.entries.length > 0) mismatch("a Map");
      return;
    case "Record":
      if (d.k === "record") {
        record(walk, e, d, code, env);
        return;
      }
      if (d.k === "prim") mismatch("a record");
      return;
    case "Ident":
      if (isCapitalized(e.name) && isVariantSite(walk, e)) variant(walk, e, e, [], declared, code, env);
      return;
    case "Call":
      if (e.callee.kind === "Ident" && isCapitalized(e.callee.name) && isVariantSite(walk, e.callee))
        variant(walk, e, e.callee, e.args, declared, code, env);
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
function typedValue(walk: Walk, e: Expr, declared: Ty, code: "E0201" | "E0202", env: Env): void {
  if (e.kind === "If") {
    checkValue(walk, e.then, declared, code, env);
    checkValue(walk, e.else, declared, code, env);
    return;
  }
  // Every arm of a match, and the body of a let, is the value. Names they bind stay unknown
  // here (not in `env`'s scope; a local is no reference site), so only what is certain is judged.
  if (e.kind === "Match") {
    for (const arm of e.arms) checkValue(walk, arm.body, declared, code, env);
    return;
  }
  if (e.kind === "Let") {
    checkValue(walk, e.body, declared, code, env);
    return;
  }
  if (e.kind !== "Binary" && e.kind !== "Unary") {
    // A name, a field, an index: its type as declared where it comes from (a slot's, a field's).
    const got = typeOf(walk, e, env);
    if (clash(structural(got), structural(declared)))
      walk.ctx.report(code, e.span, `Expected ${tyText(declared)} but got ${tyText(got)}`, {
        kind: code === "E0201" ? "type-mismatch" : "emit-arg-type-mismatch",
      });
    return;
  }
  const d = structural(declared);
  if (d.k !== "prim" || !(d.name in PRIM)) return;
  const got = primOf(walk, e, env);
  if (got === undefined || got === d.name) return;
  // Int flows into Float; a number not known to be Int or Float into either.
  if (isNumber(got) && (d.name === "Float" || (d.name === "Int" && got === "Number"))) return;
  walk.ctx.report(
    code,
    e.span,
    `Expected ${tyText(declared)} but got ${PRIM[got as keyof typeof PRIM].text}`,
    {
      kind: code === "E0201" ? "type-mismatch" : "emit-arg-type-mismatch",
    },
  );
}

/** `x[i]` where `x` is known to be a primitive (an Int slot read as a Map): nothing to index. */
export function indexable(walk: Walk, object: Expr, ty: Ty): void {
  const t = structural(ty);
  if (t.k !== "prim" || !(t.name in PRIM)) return;
  walk.ctx.report("E0201", object.span, `Expected a Map or a List to index but got ${tyText(ty)}`, {
    kind: "type-mismatch",
  });
}

/** Whether a capitalized name is a variant tag (it resolves to no definition). */
function isVariantSite(walk: Walk, id: Ident): boolean {
  const site = walk.ctx.siteAt(walk.node, id.span.offset);
  if (site === undefined) return ["None", "Some", "Ok", "Err"].includes(id.name);
  return site.role === "variant" && walk.ctx.resolve(walk.node, id).target === undefined;
}

function variant(
  walk: Walk,
  e: Expr,
  tag: Ident,
  payload: readonly Expr[],
  declared: Ty,
  code: "E0201" | "E0202",
  env?: Env,
): void {
  const variants = variantsOf(declared);
  const d = structural(declared);
  if (variants === undefined) {
    if (d.k === "prim" || d.k === "record" || (d.k === "app" && d.name !== "Option" && d.name !== "Result")) {
      walk.ctx.report(code, e.span, `Expected ${tyText(declared)} but got variant "${tag.name}"`, {
        kind: code === "E0201" ? "type-mismatch" : "emit-arg-type-mismatch",
      });
    }
    return;
  }
  const payloads = variants.get(tag.name);
  if (payloads === undefined) {
    const s = walk.ctx.suggestFrom(tag.name, variants.keys());
    nameError(
      walk,
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
    walk.ctx.report(
      "E0213",
      e.span,
      `Variant "${tag.name}" carries ${payloads.length} payload(s) but got ${payload.length}`,
    );
    return;
  }
  payload.forEach((p, i) => {
    checkValue(walk, p, payloads[i] ?? UNKNOWN, code, env);
  });
}

/** E0215: `key` names no field of record type `d`; `near` is the field offered instead. */
export function unknownField(walk: Walk, key: Ident, d: Ty, near: NameSuggestion | undefined): void {
  walk.ctx.report(
    "E0215",
    key.span,
    `Record type ${tyText(d)} has no field "${key.name}"${near === undefined ? "" : `: did you mean "${near.name}"?`}`,
    near === undefined ? {} : { suggestion: near },
  );
}

function record(
  walk: Walk,
  e: Extract<Expr, { kind: "Record" }>,
  d: Extract<Ty, { k: "record" }>,
  code: "E0201" | "E0202",
  env?: Env,
): void {
  const given = new Set(e.fields.map((f) => f.key.name));
  const missing = [...d.fields.keys()].filter((name) => !given.has(name));
  // A field name written wrong is one mistake, not a missing field plus an unknown one: it is
  // reported once, as the unknown field, with the missing field it is closest to.
  const claimed = new Set<string>();
  for (const f of e.fields) {
    const want = d.fields.get(f.key.name);
    if (want === undefined) {
      const s = walk.ctx.suggestFrom(
        f.key.name,
        missing.filter((m) => !claimed.has(m)),
      );
      if (s !== undefined) claimed.add(s.name);
      unknownField(walk, f.key, d, s);
      continue;
    }
    if (f.value !== undefined) checkValue(walk, f.value, want, code, env);
  }
  for (const name of missing) {
    if (claimed.has(name)) continue;
    walk.ctx.report(
      "E0214",
      e.span,
      `Record literal is missing field "${name}" of type ${tyText(d.fields.get(name)!)}: add ${name}=…`,
    );
  }
}

// ───────────── operators and conditions (errors.md E0201) ─────────────
// One-sided, as every E0201 check: judged only when both operand types are known primitives.

/**
 * The primitive an expression is known to have, if it is one whose operators the check knows
 * (`Int`, `Float`, `Text`, `Bool`); times, durations and the rest are left alone.
 */
function primOf(walk: Walk, e: Expr, env: Env): string | undefined {
  const t = structural(typeOf(walk, e, env));
  return t.k === "prim" && t.name in PRIM ? t.name : undefined;
}

export function operandTypes(walk: Walk, e: Extract<Expr, { kind: "Binary" }>, env: Env): void {
  const l = primOf(walk, e.left, env);
  const r = primOf(walk, e.right, env);
  if (l === undefined || r === undefined) return;
  switch (e.op) {
    case "+":
      // With Text on either side, + joins texts (the other side shown: "Count: " + count), and
      // the result is Text; otherwise it adds numbers.
      if (l === "Text" || r === "Text" || (isNumber(l) && isNumber(r))) return;
      typeError(walk, e.span, `Operator "+" expects a number but got ${isNumber(l) ? r : l}`);
      return;
    case "-":
    case "*":
    case "/":
    case "%":
      if (!isNumber(l) || !isNumber(r))
        typeError(walk, e.span, `Operator "${e.op}" expects a number but got ${isNumber(l) ? r : l}`);
      return;
    case "<":
    case ">":
    case "<=":
    case ">=":
      if ((isNumber(l) && isNumber(r)) || (l === "Text" && r === "Text")) return;
      typeError(walk, e.span, `Operator "${e.op}" cannot compare ${l} with ${r}`);
      return;
    case "==":
    case "!=":
      if (isNumber(l) === isNumber(r) && (isNumber(l) || l === r)) return;
      typeError(walk, e.span, `Operator "${e.op}" cannot compare ${l} with ${r}`);
      return;
    case "&&":
    case "||":
      if (l !== "Bool" || r !== "Bool")
        typeError(walk, e.span, `Operator "${e.op}" expects Bool but got ${l !== "Bool" ? l : r}`);
      return;
  }
}

export function unaryTypes(walk: Walk, e: Extract<Expr, { kind: "Unary" }>, env: Env): void {
  const t = primOf(walk, e.operand, env);
  if (t === undefined) return;
  if (e.op === "-" && !isNumber(t)) typeError(walk, e.span, `Operator "-" expects a number but got ${t}`);
  if (e.op === "!" && t !== "Bool") typeError(walk, e.span, `Operator "!" expects Bool but got ${t}`);
}

export function condition(walk: Walk, cond: Expr, form: string, env: Env): void {
  const t = primOf(walk, cond, env);
  if (t !== undefined && t !== "Bool")
    typeError(
      walk,
      cond.span,
      `Condition of "${form}" must be Bool but got ${t}: compare it (x > 0, s != "")`,
    );
}

/** Whether `e`'s type is known to be the opaque `EffectId`. */
export function isEffectId(walk: Walk, e: Expr, env: Env): boolean {
  if (e.kind === "Emit") return true;
  if (e.kind !== "Ident" && e.kind !== "DollarRef" && e.kind !== "Member") return false;
  const t = structural(typeOf(walk, e, env));
  return t.k === "prim" && t.name === "EffectId";
}

export function effectIdMisuse(walk: Walk, span: Span, op: string): void {
  walk.ctx.report(
    "E0204",
    span,
    `Operator "${op}" cannot be applied to EffectId — only "==" / "!=" are defined: compare with EffectId.none, or pass the id to a cancel effect`,
  );
}

const COLLECTIONS: ReadonlySet<string> = new Set(["Map", "List", "Set"]);

/**
 * Two known types no value has both of, judged one-sidedly as every E0201 check: a primitive
 * against a collection or a record (an Int slot passed where a Map is declared), or two different
 * primitives (a number flows into Float, and a number of unknown kind into either). Anything less
 * certain — a type parameter, a union, a nominal read through — is left alone.
 */
function clash(got: Ty, want: Ty): boolean {
  if (got.k === "prim" && want.k === "prim") {
    if (got.name === want.name || !(got.name in PRIM) || !(want.name in PRIM)) return false;
    return !(isNumber(got.name) && (want.name === "Float" || got.name === "Number"));
  }
  const bulky = (t: Ty): boolean => t.k === "record" || (t.k === "app" && COLLECTIONS.has(t.name));
  return (
    (got.k === "prim" && got.name in PRIM && bulky(want)) ||
    (want.k === "prim" && want.name in PRIM && bulky(got))
  );
}

/**
 * The type of a paren-free member of a known receiver, where stdlib.md (§2.2) gives a primitive:
 * `.show` of anything, `.length` / `.is-empty` of a Text or List, `.size` / `.is-empty` of a Map or
 * Set, `.upper` / `.lower` / `.trim` of a Text. Anything else is unknown (left to the runtime's
 * dispatch).
 */
function memberOf(receiver: Ty, name: string): Ty {
  if (receiver.k === "unknown" || receiver.k === "ref") return UNKNOWN;
  if (name === "show") return PRIM.Text;
  const kind = receiver.k === "prim" ? receiver.name : receiver.k === "app" ? receiver.name : undefined;
  if (kind === "Text" && (name === "upper" || name === "lower" || name === "trim")) return PRIM.Text;
  if ((kind === "Text" || kind === "List") && name === "length") return PRIM.Int;
  if ((kind === "Map" || kind === "Set") && name === "size") return PRIM.Int;
  if ((kind === "Text" || kind === "List" || kind === "Map" || kind === "Set") && name === "is-empty")
    return PRIM.Bool;
  return UNKNOWN;
}
